"""What OmegaConf costs fp8lint: its import, and resolution over YAML files, pruned or whole.

    python bench/omega.py [FILES_OR_DIRS ...]   (default: examples/ and bench/templates/)

Prints the import time of omegaconf in a process that has fp8lint's own imports loaded, and
the time `lint_text` spends per pass over the files, with the time inside OmegaConf
resolution, once with pruning (what fp8lint does) and once handing OmegaConf whole documents.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

IMPORT_PROBE = """
import time, yaml, pydantic, fp8lint.engine
t = time.perf_counter(); import omegaconf; print(time.perf_counter() - t)
"""


def files_of(args: list[str]) -> list[Path]:
    roots = [Path(a) for a in args] or [
        ROOT / "examples",
        ROOT / "bench" / "templates",
    ]
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
        elif root.is_dir():
            found += sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml"))
    return found


def main() -> None:
    from fp8lint.documents import omega
    from fp8lint.engine import lint_text
    from fp8lint.frameworks.shared import tree_args
    from fp8lint.settings import RunSettings

    imports = sorted(
        float(
            subprocess.run(
                [sys.executable, "-c", IMPORT_PROBE], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(5)
    )
    print(
        f"import omegaconf (fp8lint loaded): min {imports[0] * 1000:.1f} ms, "
        f"median {imports[2] * 1000:.1f} ms"
    )
    texts = [(str(p), p.read_text(encoding="utf-8")) for p in files_of(sys.argv[1:])]
    spent = [0.0]
    calls = [0]
    run = omega.Interpolations._run

    def timed(self: Any, *args: Any) -> None:
        start = time.perf_counter()
        run(self, *args)
        spent[0] += time.perf_counter() - start
        calls[0] += 1

    omega.Interpolations._run = timed  # type: ignore[method-assign]
    for prune in (True, False):
        omega.PRUNE = prune
        for path, text in texts:  # warm: imports, the rules
            lint_text(path, text, "yaml", RunSettings())
        best = float("inf")
        best_spent = 0.0
        for _ in range(5):
            tree_args._cache.clear()
            spent[0], calls[0] = 0.0, 0
            start = time.perf_counter()
            for path, text in texts:
                lint_text(path, text, "yaml", RunSettings())
            elapsed = time.perf_counter() - start
            if elapsed < best:
                best, best_spent = elapsed, spent[0]
        print(
            f"{len(texts)} files, prune={prune}: lint {best * 1000:.1f} ms per pass, "
            f"of which OmegaConf {best_spent * 1000:.1f} ms in {calls[0]} calls"
        )


if __name__ == "__main__":
    main()
