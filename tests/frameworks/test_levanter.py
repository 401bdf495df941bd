"""Levanter configs: `trainer.quantization.fp8` (haliax delayed scaling)."""

from __future__ import annotations

import json
from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.levanter.surface import Fp8DotGeneralOp
from fp8lint.frameworks.shared import surfaces
from fp8lint.model import AmaxAlgo, Fp8Format, Framework, Recipe

from ..conftest import lint, run_cli

CONFIG = """\
model:
  type: llama
  gradient_checkpointing: true
trainer:
  mp: p=f32,c=bfloat16
  quantization:
    fp8: true
  model_axis_size: 2
  train_batch_size: 256
"""


def sites(text: str):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile("levanter.yaml", text), "yaml")


def test_fp8_true_is_haliax_delayed_scaling_with_named_defaults() -> None:
    (site,) = sites(CONFIG)
    assert site.framework == Framework.LEVANTER
    assert site.enabled.value is True and site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (7, 10)
    assert site.span.line == 6
    assert site.recipe.value is Recipe.DELAYED and site.recipe.default_of == "haliax"
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.margin.value == 0 and site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.amax_history_len.value == 1024 and site.amax_history_len.provenance == "default"
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.written
    # gradient checkpointing recomputes haliax's functional scales: not the FP8501 hazard
    assert site.recompute_granularity.value is None
    assert lint("levanter.yaml", CONFIG) == []


def test_written_history_has_its_span_and_short_history_is_fp8102() -> None:
    text = CONFIG.replace("    fp8: true\n", "    fp8: true\n    amax_history_length: 8\n")
    (site,) = sites(text)
    assert site.amax_history_len.value == 8 and site.amax_history_len.span is not None
    assert site.amax_history_len.span.line == 8
    assert [(d.code, d.line) for d in lint("levanter.yaml", text)] == [("FP8102", 8)]


def test_history_one_is_zero_headroom() -> None:
    text = CONFIG.replace("    fp8: true\n", "    fp8: true\n    amax_history_length: 1\n")
    assert [(d.code, d.line) for d in lint("levanter.yaml", text)] == [("FP8101", 8)]


def test_fp8_false_is_off_and_int8_only_is_no_site() -> None:
    (site,) = sites(CONFIG.replace("fp8: true", "fp8: false"))
    assert site.enabled.value is False and site.enabled.written
    assert sites(CONFIG.replace("fp8: true", "int8: true")) == []


def test_unknown_quantization_keys_are_not_levanter() -> None:
    (record,) = sites("trainer:\n  quantization:\n    fp8: true\n    recipe: x\n")
    assert record.framework == Framework.UNIDENTIFIED  # listed by FP8406, read by no rule


def test_corpus_config_is_a_site_and_quiet(corpus: Path) -> None:
    (file,) = list((corpus / "stanford-crfm__levanter").glob("*.yaml"))
    text = file.read_text()
    (site,) = sites(text)
    assert site.is_on and site.is_delayed and site.amax_history_len.value == 1024
    assert lint(file.name, text) == []


def test_targets_decide_whether_the_head_is_fp8() -> None:
    text = CONFIG.replace("    fp8: true\n", "    fp8: true\n    targets: [q_proj, lm_head]\n")
    (site,) = sites(text)
    assert site.output_head_fp8.value is True and site.output_head_fp8.span is not None
    assert site.output_head_fp8.span.line == 8
    assert [(d.code, d.line) for d in lint("levanter.yaml", text)] == [("FP8202", 8)]
    (kept,) = sites(text.replace("q_proj, lm_head", "q_proj, k_proj"))
    assert kept.output_head_fp8.value is False
    (site_default,) = sites(CONFIG)
    assert site_default.output_head_fp8.value is None  # without targets: not decided


def test_surface_defaults_are_the_sites_defaults() -> None:
    (site,) = sites("trainer:\n  quantization:\n    fp8: true\n")
    assert site.amax_history_len.value == surfaces.defaults("levanter")["amax_history_length"]
    assert site.amax_history_len.provenance == "default"
    fixed = surfaces.defaults_of(Fp8DotGeneralOp)
    assert site.margin.value == fixed["margin"]
    assert site.amax_compute_algo.value == AmaxAlgo(fixed["amax_compute_algo"])


def test_schema_export_names_the_fp8_keys() -> None:
    result = run_cli("schema", "levanter")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    section = schema["$defs"]["QuantizationConfig"]["properties"]
    assert {"fp8", "amax_history_length", "targets"} <= set(section)
    assert section["amax_history_length"]["default"] == 1024
