"""CONTRIBUTING's "Add a framework", exercised: the toy family in `toy_family/` (one package:
its descriptor, reader and surface) is dropped into a copy of the package, and with no other
edit it is linted, shown, validated, exported and fixed.  If a step of CONTRIBUTING stops
being enough, this fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import ROOT

TOY = Path(__file__).parent / "toy_family"
CONFIG = "precision:\n  fp8: true\n  margin: 0\n  history: 0\n  algo: most_recent\n"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of `fp8lint` (rules through their link) with the toy family added."""
    root = tmp_path_factory.mktemp("installed")
    shutil.copytree(
        ROOT / "src" / "fp8lint", root / "fp8lint", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        TOY,
        root / "fp8lint" / "frameworks" / "mytrainer",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return root


def fp8lint(package: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from fp8lint.cli import main; raise SystemExit(main(sys.argv[1:]))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FP8LINT")}
    env["PYTHONPATH"] = str(package)
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_toy_family_is_three_files_in_one_package() -> None:
    assert sorted(p.name for p in TOY.glob("*.py")) == ["__init__.py", "reader.py", "surface.py"]


def test_a_new_family_is_recognized_validated_and_shown(package: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.yaml").write_text(CONFIG)
    r = fp8lint(package, tmp_path, "check", "--no-cache", "--output-format", "json", "train.yaml")
    found = {(d["code"], d["location"]["row"]) for d in json.loads(r.stdout)}
    assert ("FP8401", 4) in found, r.stdout + r.stderr  # history 0: the surface's ge=1
    shown = fp8lint(package, tmp_path, "show", "train.yaml")
    assert "(MyTrainer)" in shown.stdout, shown.stdout + shown.stderr
    margin = next(x for x in shown.stdout.splitlines() if x.split()[0] == "margin")
    assert margin.split()[1] == "0" and "written at 3:11" in margin, shown.stdout


def test_a_new_family_defaults_come_from_its_surface(package: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.yaml").write_text("precision:\n  fp8: true\n")
    shown = fp8lint(package, tmp_path, "show", "train.yaml").stdout
    line = next(x for x in shown.splitlines() if "amax_history_len" in x)
    assert "16" in line and "default of MyTrainer" in line, shown


def test_a_new_family_exports_its_schema(package: Path, tmp_path: Path) -> None:
    listing = fp8lint(package, tmp_path, "schema").stdout
    assert "mytrainer" in listing, listing
    schema = json.loads(fp8lint(package, tmp_path, "schema", "mytrainer").stdout)
    assert "history" in json.dumps(schema)


def test_a_new_family_is_fixed_through_its_key_map(package: Path, tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    config = tmp_path / "train.yaml"
    config.write_text("precision:\n  fp8: true\n  margin: 0\n  history: 1\n  algo: most_recent\n")
    r = fp8lint(package, tmp_path, "check", "--no-cache", "--fix", "--unsafe-fixes", "train.yaml")
    assert config.read_text() == (
        "precision:\n  fp8: true\n  margin: 0\n  history: 1024\n  algo: max\n"
    ), r.stdout + r.stderr
    again = fp8lint(package, tmp_path, "check", "--no-cache", "--select", "FP8101", "train.yaml")
    assert again.returncode == 0, again.stdout
