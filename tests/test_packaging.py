"""The rule catalog lives at the top of the repository (`rules/`) and installs as
`fp8lint.rules`, pages included: from a wheel and from an editable install alike."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from fp8lint.rules import page_codes, rule_page

from .conftest import ROOT


def test_the_wheel_ships_exactly_the_source_modules(wheel: Path) -> None:
    """Packages are found, not listed: a new family package ships without a pyproject edit,
    and nothing ships that the source no longer has (a stale build/ would add moved modules
    beside their new homes, and the registry would find a package without a descriptor)."""
    shipped = {n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".py")}
    source = {
        p.relative_to(ROOT / "src").as_posix()
        for p in (ROOT / "src" / "fp8lint").rglob("*.py")
        if "__pycache__" not in p.parts
    } | {f"fp8lint/rules/{p.name}" for p in (ROOT / "rules").glob("*.py")}  # through the link
    assert shipped == source


def test_the_installed_catalog_is_the_top_level_folder() -> None:
    """Editable (this test run) or not, `fp8lint.rules` is `rules/` with its pages."""
    import fp8lint.rules

    assert Path(fp8lint.rules.__file__).resolve().parent == (ROOT / "rules").resolve()
    assert page_codes() == sorted(p.stem for p in (ROOT / "rules").glob("FP8*.md"))
    assert rule_page("FP8101") == (ROOT / "rules" / "FP8101.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    tree = tmp_path_factory.mktemp("checkout")  # a copy without the checkout's build/
    for name in ("src", "rules", "pyproject.toml", "README.md", "LICENSE"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(
                source,
                tree / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            shutil.copy(source, tree / name)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if r.returncode != 0:
        pytest.fail(f"building the wheel failed:\n{r.stdout}{r.stderr}")
    (found,) = out.glob("fp8lint-*.whl")
    return found


def test_the_wheel_ships_every_rule_module_and_page(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in (ROOT / "rules").iterdir():
        if p.suffix in (".py", ".md"):
            assert f"fp8lint/rules/{p.name}" in names, p.name
    assert not any(n.startswith("rules/") for n in names)


def test_fp8lint_rule_from_the_wheel_reads_the_page(wheel: Path, tmp_path: Path) -> None:
    """`fp8lint rule FP8101` from the unpacked wheel alone (no site-packages processing, so
    the editable install of this checkout cannot answer instead)."""
    target = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(target)
    deps = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    code = (
        "import sys; sys.path[:0] = sys.argv[1:]; import fp8lint.rules as r; "
        "print(r.__file__); from fp8lint.cli import main; "
        "raise SystemExit(main(['rule', 'FP8101']))"
    )
    r = subprocess.run(
        [sys.executable, "-S", "-c", code, str(target), *deps],
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    assert r.returncode == 0, r.stderr
    first, _, page = r.stdout.partition("\n")
    assert Path(first).resolve().is_relative_to(target.resolve())
    assert page.rstrip("\n") == (ROOT / "rules" / "FP8101.md").read_text(encoding="utf-8").rstrip(
        "\n"
    )
