"""The floor: the least any FP8 config linter must do on a tree, and nothing more.

    python bench/floor.py PATH ...

Walks the tree as fp8lint does (sorted, skipping hidden folders and the same folder names),
reads every file with an extension fp8lint reads, applies the same byte prefilter as
`fp8lint.engine.mentions_fp8` (the same words, the same way), and parses the files that pass
with the stack's own parsers: libyaml compose for YAML, `json.loads`, `tomllib.loads`, and
`libcst.parse_module` for Python.  Shell files that pass are read but not parsed (a shell
lexer is fp8lint's own work).  No fp8lint import: `bench/run.py` checks that the constants
below match fp8lint's.
"""

from __future__ import annotations

import os
import sys

PREFILTER_ANY_CASE = (b"fp8", b"float8", b"delayedscaling", b"nvfp4")
PREFILTER_EXACT = (
    b"msamp",
    b'"mx"',
    b"transformer-engine",
    b"TransformerEnginePrecision",
    b"AORecipeKwargs",
    b"te.autocast",
    b"CustomRecipe",
    b"nemotronh_",
    b"nemotron_nano_12b_v2",
    b"low_precision_pretrain",
)


def mentions_fp8(data: bytes) -> bool:  # fp8lint's, line for line
    if (
        b"msamp" in data
        or b'"mx"' in data
        or b"transformer-engine" in data
        or b"TransformerEnginePrecision" in data
        or b"AORecipeKwargs" in data
        or b"te.autocast" in data
        or b"CustomRecipe" in data
        or b"nemotronh_" in data
        or b"nemotron_nano_12b_v2" in data
        or b"low_precision_pretrain" in data
    ):
        return True
    low = data.lower()
    return b"fp8" in low or b"float8" in low or b"delayedscaling" in low or b"nvfp4" in low


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


def main(paths: list[str]) -> int:
    yaml = loader = None
    relevant = 0
    for top in paths:
        for path in files(top):
            with open(path, "rb") as fh:
                data = fh.read()
            if not mentions_fp8(data):
                continue
            relevant += 1
            ext = os.path.splitext(path)[1].lower()
            try:
                if ext in (".yaml", ".yml", ".cfg"):
                    if yaml is None:
                        import yaml

                        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
                    list(yaml.compose_all(data.decode("utf-8"), Loader=loader))
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
    print(relevant, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["."]))
