"""Python with no explicit recipe: a bare TE autocast (TE's default recipe), Accelerate's
`AORecipeKwargs` (torchao with Accelerate's defaults) and `msamp.initialize(...)`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lint.engine import mentions_fp8
from fp8lint.model import AmaxAlgo, AmaxScope, Fp8Format, Framework, Recipe
from tests.conftest import run_cli
from tests.frameworks.python_case import at, bind

TE = "import transformer_engine.pytorch as te\n"
AO = "from accelerate.utils import AORecipeKwargs\n"


parse, one, codes = bind("train.py")


# -- a TE autocast without a recipe ------------------------------------------------------------


@pytest.mark.parametrize("call", ["te.fp8_autocast()", "te.autocast()"])
def test_bare_autocast_is_tes_default_delayed_scaling(call: str) -> None:
    src = TE + f"with {call}:\n    y = model(x)\n"
    site = one(src)
    assert site.framework == Framework.TE
    assert site.kind == f"Transformer Engine {call[:-2]}() with TE's default recipe"
    assert at(site.span) == (2, 6, 2, 6 + len(call))
    assert site.enabled.value is True and site.enabled.provenance == "default"
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "default"
    assert "get_default_fp8_recipe" in (site.recipe.note or "")
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.margin.value == 0 and site.amax_history_len.value == 1024
    assert site.amax_compute_algo.value is AmaxAlgo.MAX and site.reduce_amax.value is True
    assert site.amax_scope.value is AmaxScope.WORLD
    assert codes(src) == []


def test_bare_autocast_with_torch_checkpoint_recompute_is_fp8501() -> None:
    src = (
        TE
        + "from torch.utils.checkpoint import checkpoint\n"
        + "with te.fp8_autocast(enabled=True):\n"
        + "    y = checkpoint(block, x)\n"
    )
    site = one(src)
    assert site.enabled.written and at(site.enabled.span) == (3, 30, 3, 34)
    assert site.recompute_granularity.value == "full"
    assert codes(src) == [("FP8501", 4)]


def test_group_argument_sets_the_amax_scope() -> None:
    src = (
        TE
        + "from megatron.core import parallel_state as ps\n"
        + "with te.autocast(amax_reduction_group=ps.get_data_parallel_group()):\n"
        + "    pass\n"
    )
    site = one(src)
    assert site.amax_scope.value is AmaxScope.DP_ONLY
    assert site.amax_scope.key == "amax_reduction_group"


def test_disabled_torch_and_recipe_autocasts_are_not_default_sites() -> None:
    assert parse(TE + "with te.fp8_autocast(enabled=False):\n    pass\n") == []
    torch_amp = "import torch\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    pass\n"
    assert parse(torch_amp) == []
    sites = parse(
        TE
        + "from transformer_engine.common.recipe import Float8CurrentScaling\n"
        + "r = Float8CurrentScaling()\n"
        + "with te.fp8_autocast(enabled=True, fp8_recipe=r):\n    pass\n"
    )
    assert [s.kind for s in sites] == ["Transformer Engine Float8CurrentScaling(...)"]


def test_jax_autocast_is_off_by_default_and_always_delayed() -> None:
    jax = "import transformer_engine.jax as te\n"
    # TE's own docs/examples/jax/attention/context_parallel.py: no FP8 without enabled=True
    assert parse(jax + "with te.autocast(mesh_resource=mesh_resource):\n    pass\n") == []
    site = one(jax + "with te.autocast(enabled=True, mesh_resource=mr):\n    pass\n")
    assert site.recipe.value is Recipe.DELAYED and "JAX" in (site.recipe.note or "")
    assert site.amax_scope.known is False  # a mesh, not an amax group
    assert parse(jax + "with te.autocast(True, recipe):\n    pass\n") == []


def test_autocast_enabled_by_a_flag_is_a_site_that_may_be_off() -> None:
    site = one(TE + "with te.fp8_autocast(enabled=args.fp8):\n    pass\n")
    assert site.enabled.known is False


def test_bare_te_autocast_passes_the_prefilter(tmp_path: Path) -> None:
    text = TE + "with te.autocast():\n    y = model(x)\n"
    assert mentions_fp8(text.encode())
    (tmp_path / "train.py").write_text(text)
    r = run_cli("show", str(tmp_path / "train.py"), "--output-format", "json")
    assert [s["kind"] for s in json.loads(r.stdout)] == [
        "Transformer Engine te.autocast() with TE's default recipe"
    ]


# -- Accelerate AORecipeKwargs -----------------------------------------------------------------


def test_ao_recipe_kwargs_defaults_are_tensorwise_with_first_and_last_layers_skipped() -> None:
    src = AO + 'acc = Accelerator(mixed_precision="fp8", kwargs_handlers=[AORecipeKwargs()])\n'
    site = one(src)
    assert site.framework == Framework.ACCELERATE
    assert site.kind == "Accelerate AORecipeKwargs(...)"
    assert at(site.span) == (2, 59, 2, 75)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.default_of == "Accelerate"
    assert site.fmt.value is Fp8Format.HYBRID
    head = site.output_head_fp8
    assert head.value is False and head.default_of == "Accelerate"
    assert head.key == "module_filter_func"
    assert codes(src) == []


def test_ao_recipe_kwargs_config_as_in_accelerates_fsdp2_example() -> None:
    src = (
        AO
        + "from torchao.float8 import Float8LinearConfig\n"
        + "fp8_config = Float8LinearConfig(enable_fsdp_float8_all_gather=True)\n"
        + "kwargs = [AORecipeKwargs(config=fp8_config)]\n"
    )
    site = one(src)
    assert site.recipe.value is Recipe.TENSORWISE
    assert at(site.recipe.span) == (3, 14, 3, 68)  # followed to the config's call
    assert site.output_head_fp8.value is False


def test_ao_recipe_kwargs_filter_that_keeps_the_head_in_fp8() -> None:
    src = (
        AO
        + "def keep(module, fqn):\n    return 'embed' not in fqn\n"
        + "h = AORecipeKwargs(module_filter_func=keep)\n"
    )
    assert one(src).output_head_fp8.known is False  # names no head: unknown, quiet
    src = (
        AO
        + "def skip_head(module, fqn):\n    return fqn != 'lm_head'\n"
        + "h = AORecipeKwargs(module_filter_func=skip_head)\n"
    )
    assert one(src).output_head_fp8.value is False


def test_ao_recipe_kwargs_rowwise_recipe() -> None:
    src = (
        AO
        + "from torchao.float8 import Float8LinearConfig\n"
        + 'h = AORecipeKwargs(config=Float8LinearConfig.from_recipe_name("rowwise"))\n'
    )
    assert one(src).recipe.value is Recipe.ROWWISE


def test_ao_recipe_kwargs_passes_the_prefilter() -> None:
    assert mentions_fp8(b"h = AORecipeKwargs()")


# -- msamp.initialize -------------------------------------------------------------------------
