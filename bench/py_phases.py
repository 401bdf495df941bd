"""Where fp8lint's time goes on Python files, measured inside the thread that runs libcst.

    VENV/bin/python bench/py_phases.py FILE... --out OUT.json [--rounds 3]

Run by `bench/run.py --tree` with the bench venv's interpreter and with the baseline's, so
the same files are split into the same phases before and after.  Each file is decoded as
the engine decodes it and timed through `lint_checked` (the call a worker makes, fix
planning included), with timers around libcst's leaf work:

* `parse`: `libcst.parse_module` (every parse: the file, and the fix loop's re-parses);
* `walk`: fp8lint's facts walk (`pyfacts.collect`);
* `scopes`: libcst's scope analyses (`MetadataWrapper.resolve(ScopeProvider)`, or
  `pyscopes.scopes` where the checkout runs the providers itself);
* `positions`: `PositionProvider` passes, or fp8lint's own positions pass where it has one;
* `rest`: everything else (recognizers, name following, rules, fix planning).

A timer is a wrapper installed on the module attribute the code calls through, where the
checkout has it; the phases never nest.  Writes {path: {phase: seconds}} (medians of
`--rounds`) to OUT.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

_spent: dict[str, float] = defaultdict(float)


def _timed(owner: object, name: str, phase: Callable[..., str] | str) -> None:
    original = getattr(owner, name, None)
    if original is None:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = phase if isinstance(phase, str) else phase(*args, **kwargs)
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            _spent[key] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def _install() -> None:
    import importlib

    import libcst
    from libcst.metadata import MetadataWrapper, ScopeProvider

    def provider(_self: object, which: object, *args: Any, **kwargs: Any) -> str:
        # libcst's provider, or a subclass of it (fp8lint's `pyscopes.SCOPES`)
        scopes = isinstance(which, type) and issubclass(which, ScopeProvider)
        return "scopes" if scopes else "positions"

    _timed(libcst, "parse_module", "parse")
    _timed(MetadataWrapper, "resolve", provider)
    for module, name, phase in (
        ("fp8lint.documents.python", "collect", "walk"),
        ("fp8lint.documents.python", "scopes", "scopes"),  # libcst's analysis, run directly
        ("fp8lint.documents.pyspans", "positions", "positions"),
        ("fp8lint.documents.pyspans", "nested_positions", "positions"),  # a method alone
    ):
        try:
            _timed(importlib.import_module(module), name, phase)
        except ImportError:  # a checkout without that module
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    _install()
    from fp8lint.engine import decode
    from fp8lint.engine.lint import lint_checked, preload
    from fp8lint.settings import RunSettings

    settings = RunSettings()
    preload("python")
    lint_checked("warm.py", "import transformer_engine\n", "python", settings)
    out: dict[str, dict[str, float]] = {}
    for path in args.files:
        decoded = decode(Path(path).read_bytes())
        if decoded is None:
            continue
        rounds: list[dict[str, float]] = []
        for _ in range(args.rounds):
            _spent.clear()
            started = time.perf_counter()
            lint_checked(path, decoded.text, "python", settings)
            total = time.perf_counter() - started
            phases = dict(_spent)
            phases["rest"] = total - sum(phases.values())
            phases["total"] = total
            rounds.append(phases)
        keys = {k for r in rounds for k in r}
        out[path] = {k: statistics.median(r.get(k, 0.0) for r in rounds) for k in sorted(keys)}
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    # libcst's own work runs on fp8lint's deep thread inside `lint_checked`; this thread only
    # needs room for the imports
    threading.stack_size(64 * 1024 * 1024)
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(main()))
    worker.start()
    worker.join()
    sys.exit(result[0] if result else 1)
