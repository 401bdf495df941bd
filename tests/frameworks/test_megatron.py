"""Megatron-LM: `MODEL_ARGS:` flags and `TransformerConfig` YAML, as sites."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, AmaxScope, Fp8Format, Framework, Recipe

from ..conftest import lint


def sites(text: str, name: str = "x.yaml"):  # type: ignore[no-untyped-def]
    file = SourceFile(name, text)
    return parse_file(file, "json" if name.endswith(".json") else "yaml")


def test_megatron_model_args_defaults_are_named_and_point_at_the_switch() -> None:
    (site,) = sites("MODEL_ARGS:\n  --tensor-model-parallel-size: 2\n  --fp8-format: hybrid\n")
    assert site.framework == Framework.MEGATRON
    assert site.enabled.value is True and site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (3, 17)
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "default"
    assert site.amax_history_len.value == 1 and site.amax_history_len.default_of == "Megatron-LM"
    assert site.amax_history_len.key == "--fp8-amax-history-len"
    assert site.amax_compute_algo.value is AmaxAlgo.MOST_RECENT
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.written
    assert site.amax_scope.value is AmaxScope.TP_DP_CP


def test_megatron_bare_flags_negations_and_legacy_names() -> None:
    (site,) = sites(
        "MODEL_ARGS:\n  --fp8-hybrid: true\n  --no-fp8-wgrad: true\n"
        "  --sequence-parallel:\n  --fp8-margin: ${MARGIN}\n"
    )
    # Megatron-LM has not defined `--fp8-hybrid` since core 0.4: it sets nothing, and the
    # parser refuses it (an unknown-flag note, FP8408)
    assert site.enabled.value is False and site.fmt.value is None
    assert [(n.kind, n.key, n.span.line) for n in site.notes] == [
        ("unknown-flag", "--fp8-hybrid", 2)
    ]
    assert site.fp8_wgrad.value is False
    assert site.sequence_parallel.value is True
    assert site.margin.known is False and site.margin.written


def test_multiple_model_args_blocks_are_separate_sites() -> None:
    found = sites("MODEL_ARGS:\n  --fp8-format: e4m3\nMODEL_ARGS_2:\n  --bf16: true\n")
    assert [s.enabled.value for s in found] == [True, False]


def test_yaml_cfg_reads_model_parallel_sibling() -> None:
    (site,) = sites(
        "language_model:\n  fp8: hybrid\n  fp8_margin: 0\n"
        "model_parallel:\n  tensor_model_parallel_size: 8\n  sequence_parallel: true\n"
    )
    assert site.is_on and site.tensor_parallel.value == 8 and site.sequence_parallel.value is True
    assert site.margin.key == "language_model.fp8_margin"


def test_a_boolean_fp8_switch_is_not_a_megatron_transformer_config() -> None:
    # Megatron's `fp8` is a format or null; `fp8: true` beside `fp8_margin` is another stack's
    # switch (it used to get Megatron's FP8101 and an FP8401 error, with a fix)
    text = "trainer:\n  quantization:\n    fp8: true\n    fp8_margin: 0\n"
    (record,) = sites(text)
    assert record.framework == Framework.UNIDENTIFIED
    assert [d.code for d in lint("x.yaml", text)] == ["FP8406"]
    (site,) = sites(text.replace("fp8: true", "fp8: hybrid"))
    assert site.framework == Framework.MEGATRON and site.is_on


def test_megatron_deepspeed_reduces_the_amax_over_data_parallel_ranks_only() -> None:
    """Issue 19, class 10: a Megatron-DeepSpeed launch (`--deepspeed`) has the fork's
    DP-only `fp8_group` (Megatron-LM PR #442's bug); TP 1 leaves nothing out."""
    base = (
        "deepspeed pretrain_gpt.py --tensor-model-parallel-size {tp} --fp8-hybrid "
        "--transformer-impl transformer_engine --deepspeed --deepspeed_config ds.json\n"
    )
    (site,) = parse_file(SourceFile("run.sh", base.format(tp=4)), "shell")
    assert site.kind.startswith("Megatron-DeepSpeed launch command")
    assert site.amax_scope.value == AmaxScope.DP_ONLY and site.edit is None
    assert [d.code for d in lint("run.sh", base.format(tp=4))].count("FP8301") == 1
    assert "FP8301" not in [d.code for d in lint("run.sh", base.format(tp=1))]
    plain = base.format(tp=4).replace(" --deepspeed --deepspeed_config ds.json", "")
    (site,) = parse_file(SourceFile("run.sh", plain), "shell")
    assert site.amax_scope.value == AmaxScope.TP_DP_CP  # Megatron-LM's own group


def test_a_transformer_config_mapping_spells_fp8_weights_fp8_param() -> None:
    """Issue 19, class 11: `fp8_param` is the TransformerConfig field that
    `--fp8-param-gather` sets; in a `--yaml-cfg` file it is read under that name."""
    text = (
        "language_model:\n  num_layers: 4\n  fp8: hybrid\n  fp8_param: true\n"
        "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
    )
    (site,) = parse_file(SourceFile("gpt_config.yaml", text), "yaml")
    assert site.fp8_param_gather.value is True and site.fp8_param_gather.written
    assert site.fp8_param_gather.key == "language_model.fp8_param"
