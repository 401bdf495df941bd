"""torchtitan's Python config registries: `Float8LinearConverter.Config(...)`, torchao
semantics (the head converted unless `filter_fqns` names it)."""

from __future__ import annotations

import textwrap

from fp8lint.model import Fp8Format, Framework, Recipe
from tests.frameworks.python_case import at, bind

HEAD = "from torchtitan.components.quantization import Float8LinearConverter\n"


parse, one, codes = bind("config_registry.py")


REGISTRY = HEAD + textwrap.dedent(
    """\
    def llama3_405b():
        return model_registry(
            "405B",
            converters=[
                Float8LinearConverter.Config(
                    filter_fqns=["lm_head"],
                    model_compile_enabled=True,
                ),
            ],
        )
    """
)


def test_registry_entry_defaults_to_rowwise_with_the_head_filtered() -> None:
    site = one(REGISTRY)
    assert site.framework == Framework.TORCHAO
    assert site.kind == "torchtitan Float8LinearConverter.Config(...)"
    assert at(site.span) == (6, 13, 9, 14)
    assert site.enabled.value is True and site.enabled.provenance == "derived"
    assert site.recipe.value is Recipe.ROWWISE and site.recipe.provenance == "default"
    assert site.recipe.default_of == "torchtitan" and site.recipe.key == "recipe_name"
    assert site.fmt.value is Fp8Format.E4M3
    head = site.output_head_fp8
    assert head.value is False and head.provenance == "written"
    assert at(head.span) == (7, 29, 7, 40)
    assert codes(REGISTRY) == []


def test_tensorwise_without_a_filter_converts_the_head_fp8202() -> None:
    src = HEAD + 'c = Float8LinearConverter.Config(recipe_name="tensorwise")\n'
    site = one(src)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.written
    assert at(site.recipe.span) == (2, 46, 2, 58)
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.output_head_fp8.value is True and site.output_head_fp8.provenance == "default"
    assert codes(src) == [("FP8202", 2)]


def test_filter_naming_output_keeps_an_older_model_head_out() -> None:
    call = 'Float8LinearConverter.Config(recipe_name="tensorwise", filter_fqns=["output"])'
    src = HEAD + f"c = {call}\n"
    assert one(src).output_head_fp8.value is False
    assert codes(src) == []


def test_rowwise_default_does_not_warn_about_the_unfiltered_head() -> None:
    src = HEAD + "c = Float8LinearConverter.Config(model_compile_enabled=True)\n"
    assert one(src).output_head_fp8.value is True
    assert codes(src) == []  # FP8202 is about per-tensor scaling


def test_emulate_is_tensorwise_and_its_test_config_is_quiet() -> None:
    # torchtitan's llama3_debugmodel_float8_emulate_lora registry entry, a test-only config
    src = HEAD + "c = Float8LinearConverter.Config(emulate=True, model_compile_enabled=False)\n"
    site = one(src)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.key == "emulate"
    assert site.output_head_fp8.known is False
    assert "test-only" in (site.output_head_fp8.note or "")
    assert codes(src) == []
    filtered = HEAD + 'c = Float8LinearConverter.Config(emulate=True, filter_fqns=["lm_head"])\n'
    assert one(filtered).output_head_fp8.value is False


def test_unknown_recipe_name_is_invalid() -> None:
    src = HEAD + 'c = Float8LinearConverter.Config(recipe_name="delayed")\n'
    assert one(src).recipe.known is False
    assert ("FP8401", 2) in codes(src)


def test_moe_router_gate_filtered_or_not() -> None:
    moe = "from torchtitan.components.quantization import Float8GroupedExpertsConverter\n"
    site = one(
        HEAD + moe + 'c = Float8LinearConverter.Config(filter_fqns=["lm_head", "router.gate"])\n'
    )
    assert site.router_fp8.value is False and site.output_head_fp8.value is False
    site = one(HEAD + moe + 'c = Float8LinearConverter.Config(filter_fqns=["lm_head"])\n')
    assert site.router_fp8.value is True


def test_module_path_and_alias() -> None:
    site = one(
        "import torchtitan.components.quantization as q\n"
        "c = q.Float8LinearConverter.Config(recipe_name='rowwise_with_gw_hp')\n"
    )
    assert site.recipe.value is Recipe.ROWWISE
    site = one(
        "from torchtitan.components.quantization import Float8LinearConverter as F8\n"
        "c = F8.Config()\n"
    )
    assert site.kind == "torchtitan Float8LinearConverter.Config(...)"


def test_other_configs_are_not_converters() -> None:
    use = "c = Float8LinearConverter.Config()\n"
    assert parse("class Float8LinearConverter:\n    pass\n" + use) == []
    assert parse("from mylib import Float8LinearConverter\n" + use) == []
    assert parse(HEAD + "c = run.Config(Float8LinearConverter)\nd = LoRAConverter.Config()\n") == []
