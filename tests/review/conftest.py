"""The checkout the review bot runs in for the resilience and security tests: the two YAML
files of the fake pull request and the event file (test_review.py makes its own, larger)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_review import HEAD, M_YAML, TWO_YAML


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "m.yaml").write_text(M_YAML)
    (root / "configs" / "two.yaml").write_text(TWO_YAML)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "head": {"sha": HEAD}}}))
    monkeypatch.chdir(root)
    return root
