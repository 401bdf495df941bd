"""TE debug-tool (nvidia-dlframework-inspect) feature configs: per-layer precision."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
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
    assert site.framework is Framework.TE and "keep_qkv_wgrad_high" in site.kind
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
    out = render_sites("debug.yaml", sites(CONFIG))
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
