"""Accelerate `fp8_config` YAML: its dropped defaults and the wizard's keys."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, AmaxScope, Framework


def sites(text: str, name: str = "x.yaml"):  # type: ignore[no-untyped-def]
    file = SourceFile(name, text)
    return parse_file(file, "json" if name.endswith(".json") else "yaml")


def test_accelerate_drops_most_recent_and_flags_wizard_keys() -> None:
    (site,) = sites(
        '{"mixed_precision": "fp8", "num_processes": 8, "fp8_config": {\n'
        ' "backend": "TE", "amax_compute_algo": "most_recent",\n'
        ' "amax_history_length": 16}}',
        "acc.json",
    )
    assert site.framework == Framework.ACCELERATE
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.amax_compute_algo.default_of == "Transformer Engine"
    assert sorted(n.kind for n in site.notes) == ["ignored", "misspelled"]
    assert site.world_size.value == 8
    assert site.amax_scope.value is AmaxScope.WORLD
