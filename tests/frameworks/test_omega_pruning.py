"""Pruning: OmegaConf gets only the keys the recognizers read and what those reference.  For
every YAML file of the real corpus and of examples/, the pruned resolution must give exactly
what the whole document gives, for every key read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fp8lint.documents import omega
from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.shared import tree_args

from ..conftest import CORPUS, ROOT

RESOLVE = omega.Interpolations.resolve


def yaml_files() -> list[Path]:
    found = sorted((ROOT / "examples").rglob("*.y*ml"))
    if CORPUS.is_dir():
        found += sorted(CORPUS.rglob("*.y*ml"))
    return found


def read_keys(path: Path, prune: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(every key resolved -> its answer, the sites) with pruning on or off."""
    answers: dict[tuple[str, ...], omega.Resolved] = {}

    def spy(self: omega.Interpolations, paths: Any) -> dict[tuple[str, ...], omega.Resolved]:
        assert self.prune is prune
        found = RESOLVE(self, paths)
        answers.update(found)
        return found

    monkeypatch.setattr(tree_args, "_cache", {})
    monkeypatch.setattr(omega, "PRUNE", prune)
    monkeypatch.setattr(omega.Interpolations, "resolve", spy)
    sites = parse_file(SourceFile(str(path), path.read_text(encoding="utf-8")), "yaml")
    return answers, [s.model_dump() for s in sites]


def test_pruned_resolution_equals_the_whole_document(monkeypatch: pytest.MonkeyPatch) -> None:
    files = yaml_files()
    assert files, "examples/ has YAML files"
    resolved = 0
    computed = 0
    for path in files:
        pruned, pruned_sites = read_keys(path, True, monkeypatch)
        whole, whole_sites = read_keys(path, False, monkeypatch)
        assert pruned == whole, path
        assert pruned_sites == whole_sites, path
        resolved += len(pruned)
        computed += sum(1 for r in pruned.values() if r.known)
    if CORPUS.is_dir():  # the corpus has NeMo/Launcher interpolations: the check is not empty
        assert resolved >= 10 and computed >= 5, (resolved, computed)
