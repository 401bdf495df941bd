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
    # `["lm_head"]` keeps the head out only on torchtitan after the `output` -> `lm_head`
    # rename (786e26f8e): a registry does not say which torchtitan runs it (issue 19)
    head = site.output_head_fp8
    assert head.value is None and not head.known and head.provenance == "written"
    assert "786e26f8e" in (head.note or "")
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


def test_a_filter_naming_one_head_spelling_leaves_the_head_unknown() -> None:
    """Issue 19, class 11: `filter_fqns=["output"]` matched the head before torchtitan's
    rename to `lm_head` and matches nothing after it (its own configs carried the stale name
    until b3cf840ce), so the head is unknown and FP8202 stays silent; naming both spellings
    keeps it out everywhere."""
    call = 'Float8LinearConverter.Config(recipe_name="tensorwise", filter_fqns=["output"])'
    src = HEAD + f"c = {call}\n"
    assert one(src).output_head_fp8.known is False
    assert codes(src) == []
    both = src.replace('["output"]', '["output", "lm_head"]')
    assert one(both).output_head_fp8.value is False


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
    filtered = HEAD + (
        'c = Float8LinearConverter.Config(emulate=True, filter_fqns=["lm_head", "output"])\n'
    )
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
    assert site.router_fp8.value is False and site.output_head_fp8.known is False
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


def toml_sites(text: str):  # type: ignore[no-untyped-def]
    from fp8lint.documents.text import SourceFile
    from fp8lint.engine import parse_file

    return parse_file(SourceFile("llama3_8b.toml", text), "toml")


def test_every_toml_era_converter_name_is_read() -> None:
    """Issue 19, class 11: the converter names torchtitan registered over its TOML era
    (`float8`/`mx`, then `quantize.dense.*` / `quantize.moe.*` at 5b5d46856, then
    `quantize.linear.*` / `quantize.grouped_mm.*` at 8a2686c4a) all switch FP8 on; each
    reads the section of its own name."""
    for name, section, recipe in (
        ("float8", "quantize.linear.float8", Recipe.ROWWISE),
        ("quantize.linear.float8", "quantize.linear.float8", Recipe.ROWWISE),
        ("quantize.dense.float8", "quantize.dense.float8", Recipe.ROWWISE),
        ("quantize.linear.mx", "quantize.linear.mx", Recipe.MXFP8),
        ("quantize.dense.mx", "quantize.dense.mx", Recipe.MXFP8),
    ):
        text = f'[model]\nname = "llama3"\nconverters = ["{name}"]\n[{section}]\n'
        if recipe is Recipe.ROWWISE:
            text += 'recipe_name = "rowwise"\nfilter_fqns = ["output"]\n'
        (site,) = toml_sites(text)
        assert site.enabled.value is True, name
        assert site.recipe.value is recipe, name
        if recipe is Recipe.ROWWISE:  # TOML configs predate the `lm_head` rename
            assert site.output_head_fp8.value is False, name


def test_grouped_gemm_converters_leave_the_dense_linears_alone() -> None:
    for name in ("quantize.grouped_mm.mx", "quantize.moe.float8"):
        text = f'[model]\nname = "deepseek_v3"\nconverters = ["{name}"]\n'
        (site,) = toml_sites(text)
        assert site.enabled.value is True and site.output_head_fp8.value is False, name
        assert site.router_fp8.value is False
    (site,) = toml_sites('[model]\nconverters = ["quantize.linear.fp8_new"]\n')
    assert site.enabled.known is False  # a name fp8lint does not know: unknown, not off


def test_a_launch_that_switches_a_converter_on_is_a_site() -> None:
    """Issue 19, class 10: `--model.converters=... --quantize.linear.float8.recipe_name X`
    over a job config this reader does not merge: what the flags write, the rest unknown."""
    from fp8lint.documents.text import SourceFile
    from fp8lint.engine import parse_file

    text = (
        'CONFIG_FILE="./llama3_8b.toml" ./run_train.sh --model.converters="quantize.linear.float8"'
        " --quantize.linear.float8.recipe_name rowwise --training.compile\n"
        "./run_train.sh --model.converters=quantize.linear.mx\n"
        "./run_train.sh --training.steps 10\n"
    )
    rowwise, mx = parse_file(SourceFile("run.sh", text), "shell")
    assert rowwise.enabled.value is True and rowwise.recipe.value is Recipe.ROWWISE
    assert rowwise.output_head_fp8.known is False  # the job config's filter_fqns
    assert mx.recipe.value is Recipe.MXFP8


MX_HEAD = (
    "from torchtitan.components.quantization import MXFP8LinearConverter, NVFP4LinearConverter\n"
)


def test_mxfp8_converter_without_fqns_is_mxfp8_with_the_head_converted() -> None:
    site = one(MX_HEAD + "c = MXFP8LinearConverter.Config(model_compile_enabled=True)\n")
    assert site.kind == "torchtitan MXFP8LinearConverter.Config(...)"
    assert site.is_on and site.recipe.value is Recipe.MXFP8
    assert site.fmt.value is Fp8Format.E4M3
    assert site.output_head_fp8.value is True


def test_nvfp4_converter_is_live_fp4_and_an_include_list_keeps_the_head_out() -> None:
    site = one(MX_HEAD + 'c = NVFP4LinearConverter.Config(fqns=["layers"])\n')
    assert site.fp4_on is True and site.active_recipe is Recipe.NVFP4
    assert site.output_head_fp8.value is False
    both = one(MX_HEAD + 'c = NVFP4LinearConverter.Config(fqns=["layers", "lm_head", "output"])\n')
    assert both.output_head_fp8.value is True
    one_name = one(MX_HEAD + 'c = NVFP4LinearConverter.Config(fqns=["layers", "lm_head"])\n')
    assert one_name.output_head_fp8.known is False
    computed = one(MX_HEAD + "c = NVFP4LinearConverter.Config(fqns=tail_fqns(32, 0.15))\n")
    assert computed.output_head_fp8.value is None


def test_a_class_of_the_files_own_is_not_an_mx_converter() -> None:
    assert parse("class MXFP8LinearConverter:\n    pass\nc = MXFP8LinearConverter.Config()\n") == []
