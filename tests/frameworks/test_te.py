"""TE debug-tool (nvidia-dlframework-inspect) feature configs: per-layer precision."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.registry import label
from fp8lint.model import Framework
from fp8lint.report.sites import render_sites

from ..conftest import lint

CONFIG = """\
keep_qkv_wgrad_high:
  enabled: True
  layers:
    layer_name_regex_pattern: .*self_attention.*
  transformer_engine:
    DisableFP8GEMM:
      enabled: True
      gemms: [wgrad]
    FakeQuant:
      enabled: False
      quant_format: FP8E5M2
      gemms_struct:
        - gemm: dgrad
          tensors: [gradient]
    LogFp8TensorStats:
      enabled: True
      tensors: [activation]
      stats: [underflows%]
"""


def sites(text: str):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile("debug.yaml", text), "yaml")


def test_features_become_precision_overrides_with_spans() -> None:
    (site,) = sites(CONFIG)
    assert site.framework == Framework.TE and "keep_qkv_wgrad_high" in site.kind
    assert site.enabled.value is True and site.enabled.span is not None
    assert site.enabled.span.line == 2
    first, second = site.precision_overrides  # the logging feature sets no precision
    assert (first.feature, first.gemms, first.precision, first.enabled) == (
        "DisableFP8GEMM",
        ("wgrad",),
        "high precision",
        True,
    )
    assert first.layers == "layer_name_regex_pattern: [.*self_attention.*]"
    assert (first.span.line, first.span.column) == (6, 5)
    assert second.feature == "FakeQuant" and second.enabled is False
    assert second.gemms == ("dgrad",) and second.tensors == ("gradient",)
    assert "FP8E5M2" in second.precision and second.span.line == 9
    assert lint("debug.yaml", CONFIG) == []


def test_logging_only_config_is_not_a_precision_site() -> None:
    text = (
        "log:\n  enabled: True\n  layers:\n    layer_types: [fc1]\n  transformer_engine:\n"
        "    LogFp8TensorStats:\n      enabled: True\n      tensors: [activation]\n"
    )
    assert sites(text) == []


def test_show_lists_what_runs_in_which_precision() -> None:
    out = render_sites("debug.yaml", sites(CONFIG), label)
    assert "DisableFP8GEMM: layer_name_regex_pattern: [.*self_attention.*]: wgrad in high" in out
    assert "[disabled]" in out


def test_corpus_debug_configs_are_read_as_layers_and_gemms(corpus: Path) -> None:
    folder = corpus / "NVIDIA__TransformerEngine"
    seen = {}
    for file in sorted(folder.glob("tests__pytorch__debug__*.yaml")):
        text = file.read_text()
        (site,) = sites(text)
        assert site.enabled.value is True
        seen[file.name.rsplit("__", 1)[-1]] = [
            (o.feature, o.layers, o.gemms, o.tensors, o.precision) for o in site.precision_overrides
        ]
        assert lint(file.name, text) == []
    assert seen["disable_fp8_gemms.yaml"] == [
        ("DisableFP8GEMM", "layer_types: [qkv, fc2]", ("dgrad", "wgrad"), (), "high precision")
    ]
    assert seen["disable_fp8_layer.yaml"] == [
        ("DisableFP8Layer", "layer_types: [qkv]", (), (), "high precision")
    ]
    layers = "layer_types: [fc1, fc2]; layer_numbers: [1]"
    current = "FP8 with per-tensor current scaling"
    assert seen["per_tensor_scaling.yaml"] == [
        ("DisableFP8GEMM", layers, ("wgrad",), (), "high precision"),
        ("PerTensorScaling", layers, ("fprop",), ("activation", "weight"), current),
        ("PerTensorScaling", layers, ("dgrad",), ("gradient",), current),
    ]


PRECISION_CONFIG = """\
configs:
  bf16:
    transformer_engine_config_type: "TEQuantizationParams"
    training_recipe: {}
  mxfp8_evaluate_bf16:
    transformer_engine_config_type: "TEQuantizationParams"
    training_recipe:
      fp8_quantization_recipe: "mxfp8"
    evaluation_recipe: {}
matchers:
  attn_qkv_bf16:
    config: "bf16"
    type: "glob"
    pattern: "*.linear_qkv"
    enabled: true
  mamba_outproj_mxfp8:
    config: "mxfp8_evaluate_bf16"
    type: "glob"
    pattern: "*mixer.out_proj"
    enabled: false
"""


def test_megatron_precision_config_matchers_in_order() -> None:
    (site,) = sites(PRECISION_CONFIG)
    assert site.framework == Framework.MEGATRON and "te-precision-config-file" in site.kind
    assert [
        (o.feature, o.layers, o.precision, o.enabled, o.span.line) for o in site.precision_overrides
    ] == [
        ("attn_qkv_bf16", "glob: *.linear_qkv", "high precision (BF16)", True, 11),
        (
            "mamba_outproj_mxfp8",
            "glob: *mixer.out_proj",
            "FP8 mxfp8 (e4m3); evaluation: high precision (BF16)",
            False,
            16,
        ),
    ]
    assert lint("te_quant.yaml", PRECISION_CONFIG) == []


def test_megatron_precision_config_rejections_are_fp8401() -> None:
    text = PRECISION_CONFIG.replace('"mxfp8"', '"delayed"').replace(
        'config: "bf16"', 'config: "fp16"'
    )
    found = [(d.code, d.line) for d in lint("te_quant.yaml", text)]
    assert found == [("FP8401", 8), ("FP8401", 12)]
