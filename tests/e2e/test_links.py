"""Symbolic links (issue 20): one rule for every read, the linted files and those read on
their behalf alike: resolve the link, then require the target inside the repository.  A file
and a link to it are one file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from fp8lint.engine.lint import in_repository

from ..conftest import run_cli

# a distinctive value: if it shows up in any output, the outside file was read
OUTSIDE = (
    "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
    "  fp8_margin: 0\n  fp8_amax_history_len: 7331\n  fp8_amax_compute_algo: most_recent\n"
)
RISKY = OUTSIDE.replace("7331", "1")


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    outside.mkdir()
    (outside / "gpt.yaml").write_text(OUTSIDE)
    return repo, outside


def test_a_walked_link_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    repo, outside = _layout(tmp_path)
    (repo / "out.yaml").symlink_to(outside / "gpt.yaml")
    r = run_cli("check", ".", "--output-format", "json", cwd=repo)
    assert json.loads(r.stdout) == [] and r.returncode == 0
    assert "7331" not in r.stdout + r.stderr
    assert "warning: out.yaml: a symbolic link to a file outside its repository: not read" in (
        r.stderr
    )
    # named on the command line (as pre-commit names every file): the same rule
    r = run_cli("check", "out.yaml", cwd=repo)
    assert r.returncode == 0 and "7331" not in r.stdout + r.stderr
    assert "outside its repository" in r.stderr
    shown = run_cli("check", "--show-files", ".", cwd=repo)
    assert "out.yaml" not in shown.stdout


def test_a_link_inside_the_repository_is_read(tmp_path: Path) -> None:
    repo, _ = _layout(tmp_path)
    (repo / "configs").mkdir()
    (repo / "configs" / "real.yaml").write_text(RISKY)
    (repo / "link.yaml").symlink_to(repo / "configs" / "real.yaml")
    r = run_cli("check", "link.yaml", "--output-format", "json", cwd=repo)
    assert [d["code"] for d in json.loads(r.stdout)] == ["FP8101"]


def test_a_file_and_a_link_to_it_are_linted_and_fixed_once(tmp_path: Path) -> None:
    """Both used to be linted: the second fix was refused (the file had changed) and its
    stale finding made the run exit 1."""
    repo, _ = _layout(tmp_path)
    (repo / "real.yaml").write_text(RISKY)
    (repo / "alias.yaml").symlink_to("real.yaml")
    r = run_cli("check", ".", "--output-format", "json", cwd=repo)
    assert [(d["filename"], d["code"]) for d in json.loads(r.stdout)] == [("real.yaml", "FP8101")]
    r = run_cli("check", ".", "real.yaml", "alias.yaml", "--fix", "--unsafe-fixes", cwd=repo)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "changed since" not in r.stderr
    assert "fp8_amax_history_len: 1024" in (repo / "real.yaml").read_text()
    assert (repo / "alias.yaml").is_symlink()


def test_a_launch_config_linked_out_of_the_repository_is_not_read(tmp_path: Path) -> None:
    """`--config-path`/`--config-name` used to follow links out; a value from the outside
    file was then printed in a finding."""
    repo, outside = _layout(tmp_path)
    (repo / "conf").mkdir()
    (repo / "conf" / "gpt.yaml").symlink_to(outside / "gpt.yaml")
    (repo / "run.sh").write_text(
        "python megatron_gpt_pretraining.py --config-path=conf --config-name=gpt "
        "model.fp8=True model.fp8_hybrid=True\n"
    )
    r = run_cli("check", "run.sh", "--output-format", "json", cwd=repo)
    assert "7331" not in r.stdout + r.stderr
    assert "FP8101" not in {d["code"] for d in json.loads(r.stdout)}
    # a linked `conf/` folder is the same
    os.unlink(repo / "conf" / "gpt.yaml")
    (repo / "conf").rmdir()
    (repo / "conf").symlink_to(outside)
    r = run_cli("check", "run.sh", "--output-format", "json", cwd=repo)
    assert "7331" not in r.stdout + r.stderr


def test_every_read_on_a_files_behalf_stays_in_the_repository(tmp_path: Path) -> None:
    repo, outside = _layout(tmp_path)
    (repo / "conf").mkdir()
    (repo / "conf" / "in.yaml").write_text("a: 1\n")
    (repo / "conf" / "link.yaml").symlink_to(outside / "gpt.yaml")
    read = in_repository(str(repo / "run.sh"), lambda p: Path(p).read_bytes())
    assert read(str(repo / "conf" / "in.yaml")) == b"a: 1\n"
    assert read(str(repo / "conf" / "link.yaml")) is None
    assert read(str(outside / "gpt.yaml")) is None
    assert read(str(repo / ".." / "outside" / "gpt.yaml")) is None
