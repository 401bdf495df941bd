"""Files without FP8 settings must not pay for pydantic or the rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from fp8lint.cli import main
code = main(["check", *sys.argv[1:]])
heavy = sorted(m for m in ("pydantic", "omegaconf", "libcst", "fp8lint.rule", "fp8lint.model",
                           "fp8lint.frameworks.python_sites") if m in sys.modules)
print("HEAVY=" + ",".join(heavy))
"""


def probe(*paths: Path) -> str:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, paths)], capture_output=True, text=True, timeout=60
    )
    return r.stdout.strip().splitlines()[-1]


def test_non_fp8_files_import_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("model:\n  hidden_size: 4096\n")
    (tmp_path / "b.py").write_text("import torch\nx = torch.nn.Linear(4, 4)\n")
    (tmp_path / "c.json").write_text('{"train_batch_size": 8}\n')
    assert probe(tmp_path) == "HEAVY="


def test_fp8_yaml_does_not_import_the_python_source(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    assert probe(tmp_path) == "HEAVY=fp8lint.model,fp8lint.rule,pydantic"


def test_fp8_python_imports_the_python_source_and_libcst(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from transformer_engine.common.recipe import DelayedScaling\nr = DelayedScaling()\n"
    )
    heavy = probe(tmp_path).split("=", 1)[1].split(",")
    assert "fp8lint.frameworks.python_sites" in heavy
    assert "libcst" in heavy


def test_python_that_names_no_site_does_not_import_libcst(tmp_path: Path) -> None:
    # passes the byte prefilter (it says fp8), but builds nothing a recognizer reads
    (tmp_path / "a.py").write_text("# try fp8 here later\nx = torch.float8_e4m3fn\n")
    heavy = probe(tmp_path).split("=", 1)[1].split(",")
    assert "libcst" not in heavy
    assert "fp8lint.frameworks.python_sites" in heavy  # it was looked at
