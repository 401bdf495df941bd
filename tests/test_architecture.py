"""The import-layer contract (`[tool.importlinter]` in pyproject.toml) holds: layers only
point down, rules and renderers stay on their side, and there is no import cycle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT


def lint_imports() -> list[str]:
    found = shutil.which("lint-imports", path=os.path.dirname(sys.executable))
    if found is None:
        found = shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed (it is part of the `test` extra)")
    return [found]


def test_lint_imports_keeps_every_contract() -> None:
    r = subprocess.run(
        [*lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout
    for name in ("Layers only point down", "No import cycles, at any depth"):
        assert f"{name} KEPT" in r.stdout


def test_the_contract_catches_an_upward_import(tmp_path: Path) -> None:
    """A rule that imports a framework breaks the contract: the check has teeth."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "src", tree / "src", symlinks=True)
    shutil.copytree(ROOT / "rules", tree / "rules")
    shutil.copy(ROOT / "pyproject.toml", tree)
    bad = tree / "rules" / "fp8101_zero_headroom.py"
    bad.write_text(bad.read_text() + "\nfrom fp8lint.frameworks import megatron  # noqa\n")
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    r = subprocess.run(
        [*lint_imports(), "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    assert "fp8lint.rules.fp8101_zero_headroom -> fp8lint.frameworks.megatron" in r.stdout


MAX_LINES = 600


def test_no_module_of_the_package_is_over_600_lines() -> None:
    """The largest pieces are split at their seams (issue 18)."""
    long = {
        str(p.relative_to(ROOT)): n
        for folder in ("src", "rules")
        for p in (ROOT / folder).rglob("*.py")
        if "egg-info" not in str(p)
        and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_no_function_is_over_complexity_25() -> None:
    """ruff's C901 at `max-complexity = 25` (pyproject.toml) over the package and the rules."""
    ruff = shutil.which("ruff", path=os.path.dirname(sys.executable)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed (it is part of the `test` extra)")
    r = subprocess.run(
        [ruff, "check", "--select", "C901", "--no-cache", "src", "rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
