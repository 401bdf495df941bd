"""The pre-commit hook, for real: `pre-commit try-repo` this checkout in a scratch repo."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from fp8lint.documents import KINDS

from ..conftest import ROOT

# one risky file of every kind `fp8lint check` reads, each with the finding it must get
RISKY_ONE_LINE_SHELL = "torchrun pretrain_gpt.py --fp8-format hybrid\n"
EVERY_KIND = {
    "risky.yml": ("MODEL_ARGS:\n  --fp8-format: hybrid\n", "risky.yml:2:17: FP8101"),
    "ACCEL.JSON": (
        '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "amax_history_len": 1}}\n',
        "ACCEL.JSON:1:80: FP8101",
    ),
    "titan.toml": ('[model]\nconverters = ["float8"]\n', "titan.toml:2:14: FP8202"),
    "recipe.py": (
        "import transformer_engine.common.recipe as recipe\n"
        "r = recipe.DelayedScaling(margin=0, amax_history_len=1)\n",
        "recipe.py:2:54: FP8101",
    ),
    "train.sh": (RISKY_ONE_LINE_SHELL, "train.sh:1:39: FP8101"),
    "train.bash": (RISKY_ONE_LINE_SHELL, "train.bash:1:39: FP8101"),
    "job.slurm": (RISKY_ONE_LINE_SHELL, "job.slurm:1:39: FP8101"),
    "job.sbatch": (RISKY_ONE_LINE_SHELL, "job.sbatch:1:39: FP8101"),
}


def test_the_hooks_select_exactly_the_files_fp8lint_reads() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"fp8lint", "fp8lint-fix"}
    for hook in hooks:
        pattern = re.compile(hook["files"])
        assert "types_or" not in hook and hook["types"] == ["file"]
        for ext in KINDS:
            assert pattern.search(f"dir/name{ext}") and pattern.search(f"NAME{ext.upper()}")
        for other in ("notes.txt", "a.yaml.bak", "yaml", "a.pyc", "Makefile", "a.jsonl"):
            assert not pattern.search(other), other


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")
def test_pre_commit_try_repo(tmp_path: Path) -> None:
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    (repo / "risky.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    (repo / "good.yaml").write_text(
        "MODEL_ARGS:\n  --fp8-format: hybrid\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )
    (repo / "notes.txt").write_text("fp8 --fp8-format: hybrid\n")
    for name, (text, _) in EVERY_KIND.items():
        (repo / name).write_text(text)  # never executable: pre-commit's `shell` type misses it
    git(repo, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    r = subprocess.run(
        ["pre-commit", "try-repo", str(ROOT), "fp8lint", "--all-files", "--verbose"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "risky.yaml:2:17: FP8101 [warning]" in out
    for name, (_, finding) in EVERY_KIND.items():
        assert finding in out, name
    assert "good.yaml" not in out.replace("Found", "")
    assert "notes.txt" not in out
    for name in EVERY_KIND:
        (repo / name).unlink()

    (repo / "risky.yaml").write_text((repo / "good.yaml").read_text())
    r = subprocess.run(
        ["pre-commit", "try-repo", str(ROOT), "fp8lint", "--all-files"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")
def test_pre_commit_fix_hook(tmp_path: Path) -> None:
    """The fix hook applies only fixes that keep the numerics (here: an unused suppression);
    a warning's numerics fix and an info finding's fix are left for the user, so a commit
    with only info findings passes untouched."""
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    risky = repo / "risky.yaml"
    risky.write_text("MODEL_ARGS:\n  --fp8-format: hybrid  # on\n")
    tidy = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
    tidy += "  --fp8-amax-compute-algo: max\n"
    unused = repo / "unused.yaml"
    unused.write_text(tidy.replace("1024\n", "1024  # fp8lint: ignore[FP8104]\n"))
    info = repo / "info.yaml"  # FP8206 (info): E4M3 gradients
    info.write_text(tidy.replace("hybrid", "e4m3"))
    git(repo, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    cmd = ["pre-commit", "try-repo", str(ROOT), "fp8lint-fix", "--all-files"]
    r = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr  # it modified a file
    assert "files were modified by this hook" in r.stdout + r.stderr
    assert unused.read_text() == tidy
    assert risky.read_text() == "MODEL_ARGS:\n  --fp8-format: hybrid  # on\n"
    assert info.read_text() == tidy.replace("hybrid", "e4m3")
    risky.unlink()
    git(repo, "add", "-A")
    r = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert info.read_text() == tidy.replace("hybrid", "e4m3")
