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


def test_mxfp8_block_scaling_is_e4m3_and_refuses_an_amax_history() -> None:
    """Issue 19, class 11: with `use_mxfp8_block_scaling` Accelerate never forwards its
    default HYBRID (TE's MXFP8 recipe keeps E4M3) and raises ValueError on an amax history or
    algorithm other than its defaults; E5M2 is refused by TE."""
    from fp8lint.model import Fp8Format

    from ..conftest import lint

    base = "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  use_mxfp8_block_scaling: true\n"
    (site,) = parse_file(SourceFile("mx.yaml", base + "  fp8_format: HYBRID\n"), "yaml")
    assert site.fmt.value == Fp8Format.E4M3 and site.fmt.provenance == "default"
    codes = [d.code for d in lint("mx.yaml", base + "  amax_history_len: 16\n")]
    assert codes == ["FP8403"], codes  # an error, not an "ignored" info
    assert [d.code for d in lint("mx.yaml", base + "  amax_history_len: 1024\n")] == []
    (site,) = parse_file(SourceFile("mx.yaml", base + "  fp8_format: E5M2\n"), "yaml")
    assert [n.kind for n in site.invalid] == ["invalid-value"]
