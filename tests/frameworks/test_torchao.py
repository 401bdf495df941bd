"""torchao float8 training read from Python: `convert_to_float8_training`, its config and filter."""

from __future__ import annotations

import textwrap

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, parse_file
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe, Span
from fp8lint.settings import RunSettings

IMPORT = "from torchao.float8 import Float8LinearConfig, convert_to_float8_training\n"


def parse(src: str) -> list[Fp8Site]:
    return parse_file(SourceFile("m.py", textwrap.dedent(src)), "python")


def one(src: str) -> Fp8Site:
    sites = parse(src)
    assert len(sites) == 1, [s.kind for s in sites]
    return sites[0]


def lint(src: str) -> list[tuple[str, int]]:
    diags, _sites = lint_text("m.py", textwrap.dedent(src), "python", RunSettings())
    return [(d.code, d.line) for d in diags]


def at(span: Span | None) -> tuple[int, int, int, int]:
    assert span is not None
    return (span.line, span.column, span.end_line, span.end_column)


# -- the conversion and its defaults --------------------------------------------------------


def test_tensorwise_conversion_without_filter_converts_the_head() -> None:
    src = IMPORT + "model = convert_to_float8_training(model)\n"
    site = one(src)
    assert site.framework == Framework.TORCHAO
    assert site.kind == "torchao convert_to_float8_training(...)"
    assert at(site.span) == (2, 9, 2, 42)
    assert site.enabled.value is True and site.enabled.provenance == "derived"
    assert site.enabled.key == "convert_to_float8_training"
    assert at(site.enabled.span) == (2, 9, 2, 42)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.provenance == "default"
    assert site.recipe.key == "config" and site.recipe.default_of == "torchao"
    assert site.fmt.value is Fp8Format.HYBRID and site.fmt.provenance == "default"
    assert site.fmt.note == "tensorwise casts gradients to E5M2 (E4M3 forward)"
    head = site.output_head_fp8
    assert head.value is True and head.known and head.provenance == "default"
    assert head.key == "module_filter_fn"
    assert head.note == "torchao converts every nn.Linear when no module_filter_fn is given"
    assert at(head.span) == (2, 9, 2, 42)
    assert site.router_fp8.known is False and site.router_fp8.provenance == "absent"
    assert site.invalid == []
    assert lint(src) == [("FP8202", 2)]


def test_explicit_none_config_and_filter_are_the_defaults() -> None:
    src = IMPORT + "convert_to_float8_training(m, config=None, module_filter_fn=None)\n"
    site = one(src)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.provenance == "default"
    assert at(site.recipe.span) == (2, 38, 2, 42)
    head = site.output_head_fp8
    assert head.value is True and head.provenance == "default"
    assert at(head.span) == (2, 61, 2, 65)
    assert lint(src) == [("FP8202", 2)]


def test_one_site_per_call() -> None:
    sites = parse(IMPORT + "a = convert_to_float8_training(a)\nb = convert_to_float8_training(b)\n")
    assert [s.span.line for s in sites] == [2, 3]


# -- module_filter_fn -----------------------------------------------------------------------


def test_lambda_filter_keeps_the_head_out() -> None:
    src = (
        IMPORT + 'convert_to_float8_training(m, module_filter_fn=lambda m, fqn: fqn != "output")\n'
    )
    site = one(src)
    head = site.output_head_fp8
    assert head.value is False and head.known and head.provenance == "written"
    assert head.key == "module_filter_fn"
    assert head.raw == 'lambda m, fqn: fqn != "output"'
    assert head.note == 'the filter names "output"'
    assert at(head.span) == (2, 48, 2, 78)
    assert at(head.entry) == (2, 31, 2, 78)
    assert lint(src) == []


@pytest.mark.parametrize(
    "body",
    [
        'fqn != "output"',
        '"output" not in fqn',
        'fqn not in ("lm_head",)',
        'not fqn.endswith(".head")',
        'fqn != "model.lm_head"',
    ],
)
def test_lambda_filters_that_name_the_head(body: str) -> None:
    site = one(
        IMPORT + f"convert_to_float8_training(m, module_filter_fn=lambda mod, fqn: {body})\n"
    )
    assert site.output_head_fp8.value is False and site.output_head_fp8.written


def test_def_filter_followed_by_name() -> None:
    src = IMPORT + textwrap.dedent(
        """\
        def keep(mod, fqn):
            if fqn in ("lm_head",):
                return False
            return mod.in_features % 16 == 0

        def main(model):
            convert_to_float8_training(model, module_filter_fn=keep)
        """
    )
    site = one(src)
    head = site.output_head_fp8
    assert head.value is False and head.provenance == "written"
    assert head.raw == "keep"
    assert head.note == 'the filter names "lm_head"'
    assert at(head.span) == (8, 56, 8, 60)
    assert lint(src) == []


def test_lambda_bound_to_a_name_is_followed() -> None:
    src = IMPORT + 'skip = lambda m, fqn: fqn != "output"\n'
    src += "convert_to_float8_training(m, module_filter_fn=skip)\n"
    head = one(src).output_head_fp8
    assert head.value is False and head.written
    assert [v.line for v in head.via] == [2]


@pytest.mark.parametrize(
    "filt",
    [
        "my_filter",  # imported from elsewhere
        "lambda m, fqn: isinstance(m, nn.Linear)",  # names no module
        "functools.partial(keep, skip=['output'])",
        'lambda m, fqn: fqn != "1"',  # torchao's README: the last module of a Sequential
    ],
)
def test_unreadable_filter_is_unknown_and_reports_nothing(filt: str) -> None:
    src = (
        IMPORT
        + f"from utils import my_filter\nconvert_to_float8_training(m, module_filter_fn={filt})\n"
    )
    head = one(src).output_head_fp8
    assert head.known is False and head.value is None
    assert head.provenance == "written"
    assert head.note == "module_filter_fn is not a filter fp8lint can read"
    assert head.raw == filt
    assert at(head.span) == (3, 48, 3, 48 + len(filt))
    assert lint(src) == []


def test_filter_bound_twice_is_unknown() -> None:
    src = IMPORT + textwrap.dedent(
        """\
        f = lambda m, fqn: fqn != "output"
        f = None
        convert_to_float8_training(m, module_filter_fn=f)
        """
    )
    assert one(src).output_head_fp8.known is False
    assert lint(src) == []


def test_kwargs_splat_may_carry_config_and_filter() -> None:
    site = one(IMPORT + "convert_to_float8_training(m, **kwargs)\n")
    assert site.recipe.known is False
    assert site.recipe.note == "`config` may come from `**kwargs`"
    assert site.output_head_fp8.known is False
    assert site.output_head_fp8.note == "`module_filter_fn` may come from `**kwargs`"


# -- config: the recipe ---------------------------------------------------------------------


def test_rowwise_recipe_is_not_per_tensor() -> None:
    src = (
        IMPORT
        + 'convert_to_float8_training(m, config=Float8LinearConfig.from_recipe_name("rowwise"))\n'
    )
    site = one(src)
    recipe = site.recipe
    assert recipe.value is Recipe.ROWWISE and recipe.provenance == "written"
    assert recipe.key == "recipe_name" and recipe.raw == '"rowwise"'
    assert at(recipe.span) == (2, 74, 2, 83)
    assert site.fmt.value is Fp8Format.E4M3 and site.fmt.provenance == "default"
    assert site.fmt.note == "rowwise casts every operand to E4M3, gradients included"
    assert site.output_head_fp8.value is True  # converted, but with a scale per row
    assert lint(src) == []


def test_config_bound_once_to_a_name() -> None:
    src = IMPORT + textwrap.dedent(
        """\
        name = "rowwise_with_gw_hp"
        config = Float8LinearConfig.from_recipe_name(name)
        convert_to_float8_training(m, config=config)
        """
    )
    recipe = one(src).recipe
    assert recipe.value is Recipe.ROWWISE and recipe.written
    assert at(recipe.span) == (3, 46, 3, 50)
    assert [v.line for v in recipe.via] == [3, 2]
    assert lint(src) == []


@pytest.mark.parametrize(
    ("written", "recipe"),
    [
        ("Float8LinearRecipeName.ROWWISE", Recipe.ROWWISE),
        ("Float8LinearRecipeName.TENSORWISE", Recipe.TENSORWISE),
        ('recipe_name="tensorwise"', Recipe.TENSORWISE),
        ('"all_axiswise"', Recipe.ROWWISE),
    ],
)
def test_recipe_name_spellings(written: str, recipe: Recipe) -> None:
    cfg = f"Float8LinearConfig.from_recipe_name({written})"
    site = one(IMPORT + f"convert_to_float8_training(m, config={cfg})\n")
    assert site.recipe.value is recipe and site.recipe.known


def test_pre_09_recipe_name_says_its_new_name() -> None:
    cfg = 'Float8LinearConfig.from_recipe_name("lw_axiswise_with_gw_hp")'
    recipe = one(IMPORT + f"convert_to_float8_training(m, config={cfg})\n").recipe
    assert recipe.note == "`lw_axiswise_with_gw_hp` is the pre-0.9 name of `rowwise_with_gw_hp`"


def test_unknown_recipe_name_is_invalid() -> None:
    src = (
        IMPORT
        + 'convert_to_float8_training(m, config=Float8LinearConfig.from_recipe_name("colwise"))\n'
    )
    site = one(src)
    assert site.recipe.known is False
    assert [n.message for n in site.invalid] == [
        '`recipe_name` is "colwise"; expected `tensorwise`, `rowwise` or `rowwise_with_gw_hp`'
    ]
    assert lint(src) == [("FP8401", 2)]


def test_default_config_is_tensorwise() -> None:
    src = IMPORT + "cfg = Float8LinearConfig(enable_fsdp_float8_all_gather=True)\n"
    src += "convert_to_float8_training(m, config=cfg)\n"
    recipe = one(src).recipe
    assert recipe.value is Recipe.TENSORWISE and recipe.provenance == "default"
    assert recipe.note == "Float8LinearConfig() without cast configs is tensorwise"
    assert at(recipe.span) == (2, 7, 2, 61)
    assert lint(src) == [("FP8202", 3)]


@pytest.mark.parametrize(
    "config",
    [
        "Float8LinearConfig(cast_config_input=CastConfig(scaling_granularity=axiswise))",
        "Float8LinearConfig(**opts)",
        "make_config()",
        "args.config",
    ],
)
def test_unreadable_config_leaves_the_recipe_unknown(config: str) -> None:
    src = IMPORT + f"convert_to_float8_training(m, config={config})\n"
    site = one(src)
    assert site.recipe.known is False and site.recipe.value is None
    assert site.fmt.known is False
    assert site.output_head_fp8.value is True
    assert lint(src) == []


def test_cast_config_set_after_the_config_is_built() -> None:
    src = IMPORT + textwrap.dedent(
        """\
        cfg = Float8LinearConfig()
        cfg.cast_config_weight = CastConfig(scaling_granularity=ScalingGranularity.AXISWISE)
        convert_to_float8_training(m, config=cfg)
        """
    )
    assert one(src).recipe.known is False


# -- which calls count ----------------------------------------------------------------------


def test_local_function_of_the_same_name_is_not_torchao() -> None:
    src = textwrap.dedent(
        """\
        def convert_to_float8_training(model):
            return model

        model = convert_to_float8_training(model)
        """
    )
    assert parse(src) == []
    assert lint(src) == []


def test_local_method_of_the_same_name_is_not_torchao() -> None:
    src = textwrap.dedent(
        """\
        class Trainer:
            def convert_to_float8_training(self, model):
                return model

            def run(self, model):
                return self.convert_to_float8_training(model)
        """
    )
    assert parse(src) == []


def test_name_from_another_module_is_not_torchao() -> None:
    assert (
        parse("from mylib import convert_to_float8_training\nconvert_to_float8_training(m)\n") == []
    )
    assert parse("convert_to_float8_training(m)\n") == []  # never imported


@pytest.mark.parametrize(
    "src",
    [
        "import torchao\ntorchao.float8.convert_to_float8_training(m)\n",
        "from torchao import float8\nfloat8.convert_to_float8_training(m)\n",
        "from torchao.float8 import convert_to_float8_training as to_fp8\nto_fp8(m)\n",
        "from torchao.float8 import *\nconvert_to_float8_training(m)\n",
    ],
)
def test_torchao_spellings(src: str) -> None:
    site = one(src)
    assert site.framework == Framework.TORCHAO
    assert site.span.line == 2


# -- MoE routers ----------------------------------------------------------------------------

MOE = IMPORT + "from model import MoEBlock\n"


def test_moe_file_without_filter_converts_the_router() -> None:
    src = MOE + "convert_to_float8_training(m)\n"
    router = one(src).router_fp8
    assert router.value is True and router.provenance == "default"
    assert router.note == "nothing filters the MoE router gate when no module_filter_fn is given"
    assert lint(src) == [("FP8202", 3), ("FP8203", 3)]


def test_moe_filter_that_skips_only_the_head() -> None:
    src = MOE + 'convert_to_float8_training(m, module_filter_fn=lambda m, fqn: fqn != "output")\n'
    site = one(src)
    assert site.router_fp8.value is True and site.router_fp8.written
    assert site.router_fp8.note == "the filter names no router or gate module"
    assert at(site.router_fp8.span) == (3, 48, 3, 78)
    assert lint(src) == [("FP8203", 3)]


def test_moe_filter_that_skips_the_router() -> None:
    src = IMPORT + textwrap.dedent(
        """\
        def keep(mod, fqn):
            return not any(s in fqn for s in ("output", "router.gate"))

        convert_to_float8_training(m, module_filter_fn=keep)
        """
    )
    site = one(src)
    assert site.output_head_fp8.value is False
    assert site.router_fp8.value is False and site.router_fp8.written
    assert site.router_fp8.note == 'the filter names "router.gate"'
    assert lint(src) == []


def test_moe_with_unreadable_filter_leaves_the_router_unknown() -> None:
    site = one(MOE + "convert_to_float8_training(m, module_filter_fn=my_filter)\n")
    assert site.router_fp8.known is False
    assert site.router_fp8.note == "module_filter_fn is not a filter fp8lint can read"


@pytest.mark.parametrize(
    "line",
    [
        "self.gate = nn.Linear(dim, num_experts)\n",
        'names = ["layers.0.moe.router.gate"]\n',
        "n_routed = cfg.moe_topk\n",
    ],
)
def test_moe_mentions(line: str) -> None:
    site = one(IMPORT + line + "convert_to_float8_training(m)\n")
    assert site.router_fp8.value is True


@pytest.mark.parametrize(
    "line",
    [
        "self.gate_proj = nn.Linear(dim, hidden)\n",  # dense SwiGLU
        "total = aggregate(losses)\n",
        '"""A dense model: no mixture of experts, no router."""\n',  # prose, not a name
        "# the router gate\n",
    ],
)
def test_dense_files_leave_the_router_unset(line: str) -> None:
    site = one(line + IMPORT + "convert_to_float8_training(m)\n")
    assert site.router_fp8.provenance == "absent"


QUANTIZE = """\
from torchao.quantization import Float8DynamicActivationFloat8WeightConfig, PerRow, quantize_
from torchao.prototype.moe_training.config import Float8TrainingOpConfig, MXFP8TrainingOpConfig

quantize_(model, Float8DynamicActivationFloat8WeightConfig(granularity=PerRow()))
quantize_(model, MXFP8TrainingOpConfig(), filter_fn=moe_filter)
cfg = Float8TrainingOpConfig(float8_linear_recipe="tensorwise")
"""


def test_quantize_configs_are_sites_that_say_what_they_are() -> None:
    """Issue 19, class 10: torchao's `quantize_` configs (pytorch/ao 36027d82): inference
    quantization is a site no training rule reads; the MoE training ops carry their recipe."""
    from fp8lint.documents.text import SourceFile
    from fp8lint.engine import parse_file
    from fp8lint.model import Recipe

    serve, mx, f8 = parse_file(SourceFile("serve.py", QUANTIZE), "python")
    assert "inference quantization" in serve.kind and not serve.recipe.known
    assert mx.recipe.value is Recipe.MXFP8 and f8.recipe.value is Recipe.TENSORWISE
    older = (  # the names of torchao 0.14-0.16
        "from torchao.prototype.mx_formats import MXFPInferenceConfig, MXLinearConfig\n"
        "quantize_(m, MXFPInferenceConfig())\nquantize_(m, MXLinearConfig())\n"
    )
    infer, train = parse_file(SourceFile("old.py", older), "python")
    assert "inference" in infer.kind and train.recipe.value is Recipe.MXFP8
    mine = "class Float8WeightOnlyConfig:\n    pass\nc = Float8WeightOnlyConfig()\n"
    assert parse_file(SourceFile("x.py", mine), "python") == []
