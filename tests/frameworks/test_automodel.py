"""NeMo AutoModel recipes: the torchao `fp8:` section and the TE `te_fp8:` backend."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Format, Framework, Recipe

from ..conftest import lint

RECIPE = """\
recipe: TrainFinetuneRecipeForNextTokenPrediction
model:
  _target_: nemo_automodel.NeMoAutoModelForCausalLM.from_pretrained
  pretrained_model_name_or_path: meta-llama/Llama-3.1-8B
distributed:
  strategy: fsdp2
  tp_size: 1
fp8:
  enabled: true
  recipe_name: tensorwise
  enable_fsdp_float8_all_gather: true
  precompute_float8_dynamic_scale_for_fsdp: true
  force_recompute_fp8_weight_in_bwd: true
  filter_fqns: ["lm_head"]
  emulate: false
"""


def sites(text: str):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile("recipe.yaml", text), "yaml")


def test_fp8_section_is_a_torchao_site_with_spans() -> None:
    (site,) = sites(RECIPE)
    assert site.framework == Framework.TORCHAO and "AutoModel" in site.kind
    assert site.enabled.value is True and site.enabled.written
    assert site.enabled.span is not None and (site.enabled.span.line, site.enabled.span.column) == (
        9,
        12,
    )
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.written
    assert site.recipe.span is not None and site.recipe.span.line == 10
    assert site.fmt.value is Fp8Format.HYBRID and site.fmt.provenance == "default"
    # "lm_head" is filtered: the head stays in high precision
    assert site.output_head_fp8.value is False and site.output_head_fp8.written
    assert site.output_head_fp8.span is not None and site.output_head_fp8.span.line == 14
    assert site.span.line == 8


def test_head_not_filtered_gives_fp8202_at_filter_fqns() -> None:
    text = RECIPE.replace('["lm_head"]', '["model.layers.0.mlp"]')
    (site,) = sites(text)
    assert site.output_head_fp8.value is True
    diags = lint("recipe.yaml", text)
    assert [(d.code, d.line) for d in diags if d.code == "FP8202"] == [("FP8202", 14)]


def test_default_filter_and_recipe_are_named_defaults() -> None:
    text = "fp8:\n  enabled: true\n  emulate: false\n"
    (site,) = sites(text)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.default_of == "NeMo AutoModel"
    assert site.output_head_fp8.value is True and site.output_head_fp8.provenance == "default"
    assert [d.code for d in lint("recipe.yaml", text) if d.code == "FP8202"] == ["FP8202"]


def test_enabled_false_and_missing_enabled_are_off() -> None:
    (off,) = sites(RECIPE.replace("enabled: true", "enabled: false"))
    assert off.enabled.value is False and off.enabled.written
    (absent,) = sites(RECIPE.replace("  enabled: true\n", ""))
    assert absent.enabled.value is False and absent.enabled.provenance == "default"
    assert not [d for d in lint("r.yaml", RECIPE.replace("enabled: true", "enabled: false"))]


def test_rowwise_is_not_per_tensor_and_drops_tensorwise_switches() -> None:
    text = RECIPE.replace("recipe_name: tensorwise", "recipe_name: rowwise").replace(
        '["lm_head"]', "[]"
    )
    (site,) = sites(text)
    assert site.recipe.value is Recipe.ROWWISE and site.fmt.value is Fp8Format.E4M3
    assert [n.key for n in site.notes] == [
        "fp8.enable_fsdp_float8_all_gather",
        "fp8.precompute_float8_dynamic_scale_for_fsdp",
        "fp8.force_recompute_fp8_weight_in_bwd",
    ]
    codes = {d.code for d in lint("recipe.yaml", text)}
    assert "FP8202" not in codes and "FP8402" in codes


def test_invalid_recipe_name_is_fp8401() -> None:
    text = RECIPE.replace("recipe_name: tensorwise", "recipe_name: delayed")
    diags = lint("recipe.yaml", text)
    assert [(d.code, d.line) for d in diags if d.code == "FP8401"] == [("FP8401", 10)]


def test_llama_factory_style_scalar_fp8_is_not_automodel() -> None:
    assert sites("fp8: true\nfp8_backend: torchao\n") == [] or all(
        "AutoModel" not in s.kind for s in sites("fp8: true\nfp8_backend: torchao\n")
    )
    # a plain `fp8: {enabled: true}` without AutoModel's other keys or targets is not claimed
    assert all("AutoModel" not in s.kind for s in sites("fp8:\n  enabled: true\n"))


def test_te_fp8_backend_recipes() -> None:
    text = (
        "model:\n  _target_: nemo_automodel.NeMoAutoModelForCausalLM.from_pretrained\n"
        "  backend:\n    linear: te\n    te_fp8:\n      recipe: block\n"
    )
    (site,) = sites(text)
    assert site.framework == Framework.TE and site.is_on
    assert site.recipe.value is Recipe.BLOCKWISE and site.recipe.written
    assert site.recipe.span is not None and site.recipe.span.line == 6
    assert site.fmt.value is Fp8Format.E4M3
    (cur,) = sites(text.replace("recipe: block", "_target_: x.TEFp8Config"))
    assert cur.recipe.value is Recipe.TENSORWISE and cur.recipe.provenance == "default"
    assert sites(text.replace("recipe: block", "recipe: mxfp8"))[0].recipe.value is Recipe.MXFP8
    assert sites(text.replace("    te_fp8:\n      recipe: block\n", "    te_fp8: null\n")) == []


def test_corpus_recipe_is_a_site_and_quiet(corpus: Path) -> None:
    path = corpus / "NVIDIA-NeMo__Automodel"
    (file,) = list(path.glob("*.yaml"))
    text = file.read_text()
    (site,) = sites(text)
    assert site.is_on and site.recipe.value is Recipe.TENSORWISE
    assert site.output_head_fp8.value is False
    assert [d for d in lint(file.name, text) if d.severity.value in ("warning", "error")] == []


def test_fix_removes_only_the_dropped_tensorwise_switches() -> None:
    from fp8lint.engine import fix_text
    from fp8lint.settings import RunSettings

    text = RECIPE.replace("recipe_name: tensorwise", "recipe_name: rowwise")
    result = fix_text("recipe.yaml", text, "yaml", RunSettings(), True)
    assert result.failure is None
    for gone in TENSORWISE_SWITCHES:
        assert gone not in result.text
    # everything else of the section is kept, with its value
    for kept in ("enabled: true", "recipe_name: rowwise", 'filter_fqns: ["lm_head"]', "emulate"):
        assert kept in result.text
    assert fix_text("recipe.yaml", result.text, "yaml", RunSettings(), True).fixed == []


TENSORWISE_SWITCHES = (
    "enable_fsdp_float8_all_gather",
    "precompute_float8_dynamic_scale_for_fsdp",
    "force_recompute_fp8_weight_in_bwd",
)


def test_te_fp8_site_reads_the_experts_backend() -> None:
    text = (
        "model:\n  _target_: nemo_automodel.NeMoAutoModelForCausalLM.from_pretrained\n"
        "  backend:\n    experts: torch_mm_mxfp8\n    te_fp8:\n      recipe: mxfp8\n"
    )
    (site,) = [s for s in sites(text) if s.kind == "NeMo AutoModel te_fp8 backend"]
    assert site.recipe.value is Recipe.MXFP8
    assert site.expert_backend.value == "torch_mm_mxfp8" and site.expert_backend.written
    plain = text.replace("    experts: torch_mm_mxfp8\n", "")
    (other,) = [s for s in sites(plain) if s.kind == "NeMo AutoModel te_fp8 backend"]
    assert not other.expert_backend.known
