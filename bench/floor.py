"""The floor: the least any FP8 config linter must do on a tree, and nothing more.

    python bench/floor.py PATH ...

Walks the tree as fp8lint does (sorted, skipping hidden folders and the same folder names),
reads every file with an extension fp8lint reads, applies the same byte prefilter as
`fp8lint.engine.mentions_fp8` (the same words, the same way), and parses the files that pass
with the stack's own parsers: libyaml compose for YAML, `json.loads`, `tomllib.loads`, and
`libcst.parse_module` for Python.  Shell files that pass are read but not parsed (a shell
lexer is fp8lint's own work).  No fp8lint import: the prefilter's words are read from
fp8lint's source at start-up (below), and `bench/run.py` checks that they, the extensions and
the skipped folders match the installed fp8lint's, and that both prefilters agree on every
word.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # no typing import at run time: the floor's start-up stays the least
if TYPE_CHECKING:
    from collections.abc import Callable

# The prefilter's words are read from fp8lint's source (`src/fp8lint/engine/files.py`, the one
# place they are written), not imported: importing fp8lint would add its start-up to the
# floor.  Reading and evaluating the two tuples costs well under a millisecond.
_SOURCE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), os.pardir, "src", "fp8lint", "engine", "files.py"
)


def _words(source: str, name: str) -> tuple[bytes, ...]:
    """The tuple of byte strings assigned to `name` at the top level of `source`: from its
    `(` to the matching `)`, skipping quoted words and comments."""
    head = f"\n{name} = ("
    start = source.find(head)
    if start < 0:
        raise SystemExit(f"floor: no {name} in {_SOURCE}")
    i = start + len(head) - 1
    open_at, depth = i, 0
    while i < len(source):
        c = source[i]
        if c == "#":
            i = source.find("\n", i)
        elif c in "'\"":
            i = source.index(c, i + 1)  # the words hold neither escapes nor their own quote
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        i += 1
    words = eval(source[open_at : i + 1], {"__builtins__": {}})  # a literal tuple of bytes
    if not (isinstance(words, tuple) and all(isinstance(w, bytes) for w in words)):
        raise SystemExit(f"floor: {name} in {_SOURCE} is not a tuple of bytes")
    return words


def _prefilter(exact: tuple[bytes, ...], any_case: tuple[bytes, ...]) -> Callable[[bytes], bool]:
    """fp8lint's `mentions_fp8` for these words, written out as it is (chained `in` tests,
    exact words first, then the lowered copy): a loop over the words would be slower than
    fp8lint's and the floor would not be a floor."""
    first = " or ".join(f"{w!r} in data" for w in exact) or "False"
    then = " or ".join(f"{w!r} in low" for w in any_case) or "False"
    code = f"def mentions_fp8(data):\n    if {first}:\n        return True\n"
    code += f"    low = data.lower()\n    return {then}\n"
    space: dict[str, Callable[[bytes], bool]] = {}
    exec(compile(code, "<floor prefilter>", "exec"), space)
    return space["mentions_fp8"]


with open(_SOURCE, encoding="utf-8") as _fh:
    _text = _fh.read()
PREFILTER_ANY_CASE = _words(_text, "PREFILTER_ANY_CASE")
PREFILTER_EXACT = _words(_text, "PREFILTER_EXACT")
mentions_fp8 = _prefilter(PREFILTER_EXACT, PREFILTER_ANY_CASE)
del _text


EXTENSIONS = frozenset(
    {".yaml", ".yml", ".json", ".py", ".toml", ".sh", ".bash", ".slurm", ".sbatch", ".cfg"}
)
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env"})


def files(top: str) -> list[str]:
    if not os.path.isdir(top):
        return [top]
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if not name.startswith(".") and os.path.splitext(name)[1].lower() in EXTENSIONS:
                out.append(os.path.join(dirpath, name))
    return out


_yaml: list[tuple[object, object]] = []  # (the yaml module, its loader), once imported


def parse(path: str, data: bytes) -> None:
    """The stack's parser on one file that passed the prefilter (by its extension)."""
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext in (".yaml", ".yml", ".cfg"):
            if not _yaml:
                import yaml

                _yaml.append((yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
            yaml_module, loader = _yaml[0]
            list(yaml_module.compose_all(data.decode("utf-8"), Loader=loader))  # type: ignore[attr-defined]
        elif ext == ".json":
            import json

            json.loads(data)
        elif ext == ".toml":
            import tomllib

            tomllib.loads(data.decode("utf-8"))
        elif ext == ".py":
            import libcst

            libcst.parse_module(data)
    except Exception:  # a broken file costs what it costs; the floor does not report
        pass


def main(paths: list[str]) -> int:
    relevant = 0
    for top in paths:
        for path in files(top):
            with open(path, "rb") as fh:
                data = fh.read()
            if not mentions_fp8(data):
                continue
            relevant += 1
            parse(path, data)
    print(relevant, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["."]))
