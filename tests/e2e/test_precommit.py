"""The pre-commit hook, for real: `pre-commit try-repo` this checkout in a scratch repo."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import ROOT


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
    assert "risky.yaml:2:17: FP8101 [*] [warning]" in out
    assert "good.yaml" not in out.replace("Found", "")
    assert "notes.txt" not in out

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
    repo = tmp_path / "work"
    repo.mkdir()
    git(repo, "init", "-q")
    risky = repo / "risky.yaml"
    risky.write_text("MODEL_ARGS:\n  --fp8-format: hybrid  # on\n")
    git(repo, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    cmd = ["pre-commit", "try-repo", str(ROOT), "fp8lint-fix", "--all-files"]
    r = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 1, r.stdout + r.stderr  # it modified a file
    assert "files were modified by this hook" in r.stdout + r.stderr
    assert risky.read_text() == (
        "MODEL_ARGS:\n  --fp8-format: hybrid  # on\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )
    git(repo, "add", ".")
    r = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
