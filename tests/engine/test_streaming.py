"""Discovery streams into the checks in bounded batches: memory does not grow with the tree
(issue 14), and the report is the same however the tree is cut."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from fp8lint.cli import main
from fp8lint.engine import runner

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"


def tree(root: Path) -> None:
    for i in range(23):
        folder = root / f"d{i % 4}"
        folder.mkdir(exist_ok=True)
        text = RISKY if i % 3 == 0 else f"model:\n  hidden_size: {i}\n"
        (folder / f"c{i}.yaml").write_text(text)
    (root / "d0" / "broken.yaml").write_text("MODEL_ARGS: [fp8\n")


def report(capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, list[object]]:
    code = main(["check", ".", "--output-format", "json", *flags])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("cached", [False, True])
def test_small_batches_give_the_report_of_one_batch(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    workers: str,
    cached: bool,
) -> None:
    tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FP8LINT_WORKERS", workers)
    if cached:
        monkeypatch.delenv("FP8LINT_NO_CACHE", raising=False)
    whole = report(capsys, "--no-cache")
    codes = [d["code"] for d in whole[1]]  # type: ignore[index]
    assert whole[0] == 1 and codes.count("FP8001") == 1 and len(codes) == 1 + 8
    monkeypatch.setattr(runner, "BATCH_FILES", 5)
    monkeypatch.setattr(runner, "READ_POOL_MIN_FILES", 3)  # the pool path from the first batch
    assert report(capsys) == whole
    assert report(capsys) == whole  # with the cache on: served from it in batches too


def test_discovery_runs_at_most_one_batch_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner holds one batch of waiting files, never the tree."""
    tree(tmp_path)
    monkeypatch.setenv("FP8LINT_WORKERS", "1")
    monkeypatch.setattr(runner, "BATCH_FILES", 4)
    pulled = 0
    ahead: list[int] = []
    real_discover = runner.discover
    real_read_then_lint = runner._read_then_lint

    def counting(*args: object, **kwargs: object) -> Iterator[tuple[str, bool]]:
        nonlocal pulled
        for found in real_discover(*args, **kwargs):  # type: ignore[arg-type]
            pulled += 1
            yield found

    def batch(jobs: Iterable[runner.ReadJob], progress: object) -> list[runner.Outcome]:
        jobs = list(jobs)
        ahead.append(pulled)
        assert len(jobs) <= 4
        return real_read_then_lint(jobs, progress)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "discover", counting)
    monkeypatch.setattr(runner, "_read_then_lint", batch)
    result = runner.run([str(tmp_path)], runner.RunSettings())
    assert result.files_seen == result.files_done == 24
    assert len(ahead) == 6  # 24 files, 4 at a time
    # when batch k is checked, discovery has found at most k + 1 batches' worth (plus the one
    # it looked at to learn the batch was full)
    assert all(seen <= 4 * (k + 1) + 1 for k, seen in enumerate(ahead))
