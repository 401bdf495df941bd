"""The cache believes only what this user wrote, and reads nothing unbounded (issue 20).

A pull request can commit `.fp8lint_cache/`: every key field of an entry is computable by
anyone, so an entry with its findings emptied used to make `check` pass.  Every cache file
is now sealed with an HMAC under a secret outside the repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lint.engine.cache_files import Seal, key_path, seal_for, tracked

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"  # FP8101


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "risky.yaml").write_text(RISKY)
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    monkeypatch.setenv("FP8LINT_WORKERS", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    return root


def _check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fp8lint", "check", ".", "--output-format", "concise", *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def _shards(root: Path) -> list[Path]:
    found = sorted((root / ".fp8lint_cache").glob("*/*/*.json"))
    assert found, "the first run wrote no shard"
    return found


def _emptied(data: bytes) -> bytes:
    """A shard's JSON with every entry's findings removed: the forger's edit."""
    shard = json.loads(data)
    for entry in shard["entries"].values():
        entry[6] = []
    return json.dumps(shard).encode()


def _forge(root: Path, seal: Seal | None) -> None:
    """Empty the findings of every shard, sealed with `seal` (another user's secret) or not
    at all, then touch the linted file so that the fingerprint no longer decides."""
    mine = seal_for(str(root / ".fp8lint_cache"))
    assert mine is not None
    for shard in _shards(root):
        opened = mine.open(str(shard))
        assert opened is not None
        data = _emptied(opened[0])
        shard.write_bytes(seal.seal(data) if seal is not None else data)
    os.utime(root / "risky.yaml")


def test_an_unsealed_forged_cache_is_not_believed(repo: Path) -> None:
    first = _check(repo)
    assert first.returncode == 1 and "FP8101" in first.stdout
    _forge(repo, None)
    again = _check(repo)
    assert again.returncode == 1 and "FP8101" in again.stdout, again.stdout


def test_a_cache_sealed_under_another_secret_is_not_believed(repo: Path) -> None:
    """What a committed cache is: sealed, but under its author's secret."""
    assert _check(repo).returncode == 1
    _forge(repo, Seal(b"0" * 64))
    again = _check(repo)
    assert again.returncode == 1 and "FP8101" in again.stdout, again.stdout


def test_a_cache_directory_git_tracks_is_not_used(repo: Path) -> None:
    assert _check(repo).returncode == 1
    mine = seal_for(str(repo / ".fp8lint_cache"))
    _forge(repo, mine)  # even sealed with this user's secret (a copied home folder, say)
    (repo / ".git" / "index").write_bytes(
        b"DIRC\0\0\0\2" + b"x" * 62 + b".fp8lint_cache/0/x.json\0"
    )
    seal_for.cache_clear()
    assert tracked(str(repo / ".fp8lint_cache"), str(repo))
    before = {p: p.read_bytes() for p in _shards(repo)}
    again = _check(repo)
    assert again.returncode == 1 and "FP8101" in again.stdout, again.stdout
    assert {p: p.read_bytes() for p in _shards(repo)} == before  # nothing written either


def test_a_key_inside_the_repository_turns_the_cache_off(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(repo / ".cache"))
    assert _check(repo).returncode == 1
    assert not (repo / ".fp8lint_cache").exists()


def test_a_key_others_can_write_turns_the_cache_off(repo: Path) -> None:
    assert _check(repo).returncode == 1
    key = Path(key_path())
    assert key.stat().st_mode & 0o777 == 0o600
    key.chmod(0o666)
    seal_for.cache_clear()
    assert seal_for(str(repo / ".fp8lint_cache")) is None


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "link-out"])
def test_a_shard_that_is_not_a_sealed_regular_file_is_a_miss(repo: Path, kind: str) -> None:
    """A shard linked to /dev/zero used to grow the run to 15.8 GB; a FIFO shard hung it."""
    fresh = _check(repo, "--no-cache").stdout
    assert _check(repo).stdout == fresh
    for shard in _shards(repo):
        mine = seal_for(str(repo / ".fp8lint_cache"))
        assert mine is not None
        opened = mine.open(str(shard))
        assert opened is not None
        shard.unlink()
        if kind == "dev-zero":
            if not os.path.exists("/dev/zero"):
                pytest.skip("no /dev/zero here")
            shard.symlink_to("/dev/zero")
        elif kind == "fifo":
            if not hasattr(os, "mkfifo"):
                pytest.skip("no named pipes here")
            os.mkfifo(shard)
        else:  # a forged shard sealed with the real secret, outside the cache: not followed
            outside = repo.parent / f"outside-{shard.name}"
            outside.write_bytes(mine.seal(_emptied(opened[0])))
            shard.symlink_to(outside)
    os.utime(repo / "risky.yaml")
    again = _check(repo)  # the timeout of `_check` catches a hang
    assert again.stdout == fresh and again.returncode == 1


def test_a_huge_shard_is_not_read_whole(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fp8lint.engine import cache_files

    assert _check(repo).returncode == 1
    (shard,) = _shards(repo)[:1]
    monkeypatch.setattr(cache_files, "MAX_CACHE_FILE", 16)
    seal = seal_for(str(repo / ".fp8lint_cache"))
    assert seal is not None and seal.open(str(shard)) is None
