"""NeMo-RL's FP8 recipes (issue 22, item 1): every `fp8_cfg.fp8_recipe` NVIDIA-NeMo/RL
@7ea279ab ships (`blockwise` in `examples/configs/*.yaml`, `mxfp8` in
`recipes/llm/grpo-nanov3-30ba3b-3n8g-megatron-dynamo-swe1.yaml`) and the others Megatron
takes give a site with that recipe, and `fp8lint show` prints it; the MXFP8 vLLM rollout
(`vllm_cfg.is_mx`) is a note."""

from __future__ import annotations

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe
from fp8lint.report.sites import render_sites

from ..conftest import lint


def config(recipe: str, enabled: str = "true", vllm: str = "") -> str:
    return (
        "policy:\n"
        "  model_name: Qwen/Qwen3-30B-A3B\n"
        f"{vllm}"
        "  megatron_cfg:\n"
        "    enabled: true\n"
        "    tensor_model_parallel_size: 1\n"
        "    fp8_cfg:\n"
        f"      enabled: {enabled}\n"
        "      fp8: e4m3\n"
        f"      fp8_recipe: {recipe}\n"
        "      fp8_param: false\n"
    )


def one(text: str) -> Fp8Site:
    (site,) = parse_file(SourceFile("grpo.yaml", text), "yaml")
    assert site.framework == Framework.BRIDGE and site.kind.startswith("NeMo-RL")
    return site


def shown(site: Fp8Site) -> str:
    return render_sites("grpo.yaml", [site])


@pytest.mark.parametrize(
    ("name", "recipe"),
    [
        ("mxfp8", Recipe.MXFP8),
        ('"blockwise"', Recipe.BLOCKWISE),
        ("tensorwise", Recipe.TENSORWISE),
        ("delayed", Recipe.DELAYED),
    ],
)
def test_each_recipe_is_a_live_site_with_that_recipe(name: str, recipe: Recipe) -> None:
    site = one(config(name))
    assert site.is_on and site.quantized
    assert site.recipe.value is recipe and site.recipe.written
    assert site.recipe.key == "policy.megatron_cfg.fp8_cfg.fp8_recipe"
    assert site.active_recipe is recipe
    assert site.fmt.value is Fp8Format.E4M3
    out = shown(site)
    assert f"precision                    FP8 {recipe.value}\n" in out
    assert f"recipe                       {recipe.value} " in out


def test_the_shipped_mxfp8_config_is_off_and_says_its_recipe() -> None:
    """The one shipped `mxfp8` has `enabled: false`: a dormant site, recipe still read."""
    site = one(config("mxfp8", enabled="false"))
    assert site.enabled.value is False and site.recipe.value is Recipe.MXFP8
    assert site.active_recipe is None
    assert "precision                    off\n" in shown(site)


def test_shipped_recipes_get_no_warning() -> None:
    for name in ("mxfp8", "blockwise"):
        bad = [d for d in lint("grpo.yaml", config(name)) if d.severity.value != "info"]
        assert bad == [], name


def test_an_fp4_recipe_name_is_not_an_fp8_recipe() -> None:
    """NeMo-RL has no FP4 key at 7ea279ab: `nvfp4` in `fp8_recipe` is a value Megatron's
    `Fp8Recipe` does not have."""
    site = one(config("nvfp4"))
    assert not site.recipe.known and site.fp4_on is False  # fp4 keeps its None default
    assert [d.code for d in lint("grpo.yaml", config("nvfp4"))] == ["FP8401"]


@pytest.mark.parametrize(("is_mx", "blocks"), [("true", "MXFP8"), ("false", "FP8"), ("", "FP8")])
def test_the_vllm_rollout_note_names_mxfp8(is_mx: str, blocks: str) -> None:
    mx = f"      is_mx: {is_mx}\n" if is_mx else ""
    vllm = f'  generation:\n    vllm_cfg:\n      precision: "fp8"\n{mx}'
    site = one(config("blockwise", vllm=vllm))
    (note,) = [n for n in site.notes if n.kind == "inference"]
    assert note.message == (
        f"vLLM rollouts run in {blocks}: inference quantization, not FP8 training"
    )
    assert f"[inference] vLLM rollouts run in {blocks}:" in shown(site)
