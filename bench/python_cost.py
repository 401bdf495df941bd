"""What reading Python recipe code costs: `fp8lint check` on the Python files that reach the
Python recognizers, and where the time goes.

    python3 bench/generate.py /tmp/tree --files 20000       # the benchmark's tree
    python3 bench/python_cost.py /tmp/tree examples [--repeat 5]
    python3 bench/python_cost.py /tmp/tree --against /path/to/other/checkout/src

Picks the `.py` files that pass fp8lint's byte prefilter and name a site (the files libcst
parses), then:

* times `fp8lint check --no-cache --exit-zero -q FILES` in a fresh single-worker process
  (median of --repeat; with --against, alternating with the same command run on another
  checkout's `src`, e.g. the `ast` implementation on main);
* runs the same files in this process with timers around each phase: the scan and pruning,
  libcst's parse, the metadata passes (scope analysis, positions), the collecting walk, and
  everything else (recognizers, rules, fix writers), and prints each phase's share.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def python_files(paths: list[str]) -> list[Path]:
    sys.path.insert(0, str(HERE))
    import floor

    from fp8lint.frameworks.python_sites import SITE_NAMES

    out = []
    for top in paths:
        for name in floor.files(top):
            if not name.endswith(".py"):
                continue
            data = Path(name).read_bytes()
            if floor.mentions_fp8(data) and SITE_NAMES.search(data.decode("utf-8", "replace")):
                out.append(Path(name))
    return out


def check_seconds(files: list[Path], src: Path) -> float:
    env = dict(os.environ, FP8LINT_WORKERS="1", PYTHONPATH=str(src))
    cmd = [sys.executable, "-m", "fp8lint", "check", "--no-cache", "--exit-zero", "-q"]
    started = time.perf_counter()
    subprocess.run([*cmd, *map(str, files)], env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def phases(files: list[Path]) -> dict[str, float]:
    """Seconds per phase over `files`, linted in this process (fixes planned, not applied)."""
    import libcst
    from libcst.metadata import MetadataWrapper

    from fp8lint.documents import python as py
    from fp8lint.engine import lint_text
    from fp8lint.settings import RunSettings

    spent: dict[str, float] = defaultdict(float)

    def timed(owner: Any, name: str, label: Callable[..., str] | str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                key = label(*args, **kwargs) if callable(label) else label
                spent[key] += time.perf_counter() - started

        setattr(owner, name, wrapper)

    timed(py, "scan", "scan (bounds, statements)")
    timed(py, "prune", "prune (left-out definitions)")
    timed(libcst, "parse_module", "libcst parse")
    timed(py, "collect", "collecting walk")
    timed(
        MetadataWrapper,
        "resolve",
        lambda self, provider: f"libcst metadata: {provider.__name__}",
    )
    settings = RunSettings()
    started = time.perf_counter()
    for path in files:
        lint_text(str(path), path.read_text(encoding="utf-8"), "python", settings)
    total = time.perf_counter() - started
    spent["recognizers, rules, fix writers (the rest)"] = total - sum(spent.values())
    spent["total"] = total
    return dict(spent)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    files = python_files(args.paths)
    size = sum(p.stat().st_size for p in files)
    print(f"{len(files)} Python files that name a site, {size / 1024:.0f} KB")
    runs: dict[str, list[float]] = {"this checkout": []}
    if args.against:
        runs["--against"] = []
    for _ in range(args.repeat):
        runs["this checkout"].append(check_seconds(files, ROOT / "src"))
        if args.against:
            runs["--against"].append(check_seconds(files, args.against))
    for name, times in runs.items():
        print(f"fp8lint check, one worker, {name}: median {statistics.median(times):.2f} s")
    print("phases (in-process, one run):")
    spent = phases(files)
    total = spent["total"]
    for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1]):
        if name != "total":
            print(f"  {name:48} {seconds:7.2f} s  {100 * seconds / total:5.1f} %")
    print(f"  {'total':48} {total:7.2f} s  ({1000 * total / (size / 1024):.2f} ms/KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
