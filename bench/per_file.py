"""Per-file times on one tree, in one process: fp8lint's work on each file, or the floor's.

    VENV/bin/python bench/per_file.py fp8lint TREE --out OUT.json [--slowest 10] [--rounds 3]
    VENV/bin/python bench/per_file.py floor TREE --files LIST.json --out OUT.json [--rounds 3]

Run by `bench/run.py --tree` with the bench venv's interpreter, one fresh process per tool, so
a tree of 500 files costs two process launches, not a thousand.

* `fp8lint`: the files `fp8lint check` would lint (its own discovery and byte prefilter),
  each decoded as the engine decodes it and then timed through `lint_checked` (recognizers,
  rules, fix planning, suppressions), the call a worker makes, with the default settings.
  libcst runs on fp8lint's deep thread as in a check (`lint_checked` hands it over itself).
  Every file is timed once; the `--slowest` slowest are then timed `--rounds` times in all,
  and their median is reported.  The kinds' modules are imported and one file of each kind
  is linted before the clock starts, so no file pays the one-time imports.
* `floor`: the files of `--files` (the paths from the fp8lint run), each through
  `bench/floor.py`'s `parse` (libcst.parse_module for Python, libyaml compose for YAML, ...),
  `--rounds` times, median; one file of each kind is parsed first, untimed.

Writes JSON: {"timeout": seconds, "files": [[path, kind, bytes, seconds], ...]} (`fp8lint`:
every linted file, the slowest re-timed, and "discovered": the files of a kind it reads;
`floor`: the files given).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _seconds(work: Callable[[], object], rounds: int) -> float:
    """The median of `rounds` timed calls of `work`."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def fp8lint_times(tree: str, slowest: int, rounds: int) -> dict[str, Any]:
    from fp8lint.documents import HEAD_BYTES, kind_for
    from fp8lint.engine import decode, discover
    from fp8lint.engine.lint import lint_checked, preload
    from fp8lint.settings import DEFAULT_FILE_TIMEOUT, RunSettings

    settings = RunSettings()
    jobs = []
    discovered = 0  # files fp8lint reads (a kind it knows)
    for path, _named in discover([tree]):
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        kind = kind_for(path, data[:HEAD_BYTES])
        if kind is None:
            continue
        discovered += 1
        if len(data) > settings.max_bytes:
            continue
        try:
            decoded = decode(data)
        except Exception:  # a file the engine reports without linting it
            continue
        if decoded is not None:
            work = partial(lint_checked, path, decoded.text, kind, settings)
            jobs.append((path, kind, len(data), work))
    first: dict[str, Callable[[], object]] = {}
    for _path, kind, _size, work in sorted(jobs, key=lambda j: j[2]):
        if kind not in first:
            preload(kind)
            first[kind] = work
    for warm in first.values():
        warm()
    timed: list[list[Any]] = [[path, kind, size, _seconds(w, 1)] for path, kind, size, w in jobs]
    works = {path: w for path, _kind, _size, w in jobs}
    for row in sorted(timed, key=lambda r: -float(r[3]))[:slowest]:
        if rounds > 1:
            rest = [_seconds(works[row[0]], 1) for _ in range(rounds - 1)]
            row[3] = statistics.median([row[3], *rest])
    return {"timeout": DEFAULT_FILE_TIMEOUT, "discovered": discovered, "files": timed}


def floor_times(paths: list[str], rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import floor

    blobs = [(p, Path(p).read_bytes()) for p in paths]
    seen: set[str] = set()
    for path, data in blobs:  # one file of each kind first: the parsers' imports
        ext = Path(path).suffix.lower()
        if ext not in seen:
            seen.add(ext)
            floor.parse(path, data)
    rows = [
        [
            path,
            Path(path).suffix.lower(),
            len(data),
            _seconds(partial(floor.parse, path, data), rounds),
        ]
        for path, data in blobs
    ]
    return {"timeout": None, "files": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", choices=("fp8lint", "floor"))
    parser.add_argument("tree")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--files", type=Path, help="floor: a JSON list of paths")
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.tool == "fp8lint":
        result = fp8lint_times(args.tree, args.slowest, args.rounds)
    else:
        paths = json.loads(args.files.read_text()) if args.files else []
        result = floor_times(paths, args.rounds)
    args.out.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
