#!/usr/bin/env python3
"""Coverage-guided fuzzing of fp8lint's sources with atheris (libFuzzer for Python).

    python3 -m pip install atheris
    python3 fuzz/fuzz_sources.py -max_total_time=300            # seeds: examples/, corpus
    mkdir -p fuzz/corpus && python3 fuzz/fuzz_sources.py fuzz/corpus -max_total_time=300

The first input byte picks the source (YAML, JSON, Python, TOML, shell), the rest is the
file's bytes, decoded as `fp8lint check` decodes them (byte-order marks, strict UTF-8).  Each
input goes through `lint_text` and `fix_text`; the harness fails on any exception, on a
diagnostic or fix edit outside the file, and on a fix that does not settle.  Crashes are
written by libFuzzer as `crash-*` files; replay one with `python3 fuzz/fuzz_sources.py FILE`.

FUZZ_KINDS=yaml,json,python limits the sources.  The fuzzing itself is not part of the test
suite: tests/e2e/test_fuzz.py imports this harness (atheris is not needed for that) and runs
its checks on every seed, and is also the fast hypothesis version.
"""

from __future__ import annotations

import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

try:
    import atheris
except ImportError:  # importable without it: tests/e2e/test_fuzz.py runs `check` on seeds
    atheris = None

with atheris.instrument_imports(include=["fp8lint"]) if atheris else nullcontext():
    from fp8lint.documents.tree import line_starts
    from fp8lint.engine import fix_text, lint_text
    from fp8lint.engine.files import BOMS
    from fp8lint.settings import RunSettings

ROOT = Path(__file__).resolve().parent.parent
ALL_KINDS = ("yaml", "json", "python", "toml", "shell")
# FUZZ_KINDS=yaml,json,python fuzzes only those sources (the first byte still picks one)
KINDS = tuple(os.environ.get("FUZZ_KINDS", ",".join(ALL_KINDS)).split(","))
NAMES = {"yaml": "f.yaml", "json": "f.json", "python": "f.py", "toml": "f.toml", "shell": "f.sh"}
SUFFIX = {
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".py": "python",
    ".toml": "toml",
    ".sh": "shell",
}
SETTINGS = RunSettings()


def decode(data: bytes) -> str | None:
    bom, encoding = next(((b, e) for b, e in BOMS if data.startswith(b)), (b"", "utf-8"))
    try:
        return data[len(bom) :].decode(encoding)
    except UnicodeDecodeError:
        return None


def inside(text: str, line: int, column: int) -> bool:
    starts = line_starts(text)
    if not 1 <= line <= len(starts):
        return False
    end = starts[line] if line < len(starts) else len(text)
    return 1 <= column <= len(text[starts[line - 1] : end].rstrip("\r\n")) + 2


def check(kind: str, text: str) -> None:
    name = NAMES[kind]
    diags, _ = lint_text(name, text, kind, SETTINGS)
    result = fix_text(name, text, kind, SETTINGS, True)
    again = fix_text(name, result.text, kind, SETTINGS, True) if result.changed else None
    for d in diags:
        assert "internal error" not in d.message, d.message
        assert inside(text, d.line, d.column), ("start outside the file", d)
        assert inside(text, d.end_line, d.end_column), ("end outside the file", d)
        for e in d.fix.edits if d.fix else ():
            assert 0 <= e.start <= e.end <= len(text), ("edit outside the file", e)
    if result.failure is not None:
        assert result.text == text, "a failed fix changed the text"
    if again is not None:
        assert again.failure is None and again.text == result.text, "the fix does not settle"


def test_one_input(data: bytes) -> None:
    if not data:
        return
    kind = KINDS[data[0] % len(KINDS)]
    text = decode(data[1:])
    if text is None:
        return
    check(kind, text)


EXTRA_SEEDS = {  # formats the bundled examples do not cover well
    "python": "import transformer_engine.pytorch as te\n"
    "from transformer_engine.common.recipe import DelayedScaling, Format\n"
    "from megatron.core import parallel_state as mpu\n"
    "M = 0\n"
    "r = DelayedScaling(fp8_format=Format.HYBRID, margin=M, amax_history_len=16,\n"
    "                   amax_compute_algo='most_recent', reduce_amax=False)\n"
    "def step(model, x):\n"
    "    with te.fp8_autocast(enabled=True, fp8_recipe=r,\n"
    "                         fp8_group=mpu.get_data_parallel_group()):\n"
    "        return model(x)\n",
    "toml": "[model]\nname = 'llama3'\n[float8]\nenable_fsdp_float8_all_gather = true\n"
    "recipe_name = 'rowwise'\nfilter_fqns = ['output']\n[parallelism]\ntensor_parallel_degree = 4\n"
    "[model.converters]\nlist = ['float8']\n",
    "shell": "#!/bin/bash\nTP=4\nARGS=(\n  --fp8-format hybrid\n  --fp8-margin 0\n"
    "  --tensor-model-parallel-size $TP\n  --sequence-parallel\n)\n"
    'torchrun pretrain_gpt.py "${ARGS[@]}" --fp8-amax-history-len 16\n'
    "python train.py model.fp8=True model.fp8_hybrid=True trainer.devices=8\n",
}


def seeds() -> str:
    """A folder of seed inputs: every example and bench template, prefixed by its kind (more
    seed folders may be given in FP8LINT_FUZZ_SEEDS, separated by the path separator)."""
    folder = tempfile.mkdtemp(prefix="fp8lint-fuzz-seeds-")
    extra = [Path(p) for p in os.environ.get("FP8LINT_FUZZ_SEEDS", "").split(os.pathsep) if p]
    sources = [ROOT / "examples", ROOT / "bench" / "templates", *extra]
    for kind, text in EXTRA_SEEDS.items():
        if kind in KINDS:
            Path(folder, f"extra-{kind}").write_bytes(bytes([KINDS.index(kind)]) + text.encode())
    n = 0
    for base in sources:
        for path in sorted(base.rglob("*")) if base.is_dir() else ():
            kind = SUFFIX.get(path.suffix)
            if kind not in KINDS or not path.is_file():
                continue
            Path(folder, f"seed{n:04d}").write_bytes(bytes([KINDS.index(kind)]) + path.read_bytes())
            n += 1
    return folder


def main() -> None:
    if atheris is None:
        raise SystemExit("fuzz_sources.py needs atheris: python3 -m pip install atheris")
    argv = list(sys.argv)
    if not any(a.startswith("-dict=") for a in argv):
        argv.insert(1, f"-dict={Path(__file__).with_name('fp8.dict')}")
    if not any(not a.startswith("-") for a in argv[1:]):
        argv.append(seeds())
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
