"""Transformer Engine's recipe classes, checked as TE 2.20 checks them when they are built:
pydantic's lax coercion of each keyword, then each class's `__post_init__` assertions
(`transformer_engine/common/recipe/__init__.py` at d0067d0d; see `te/construct.py`).

The coercion cases are checked twice: against a throwaway pydantic dataclass with TE's own
annotations (so the table is what the installed pydantic does), and against fp8lint (an
FP8401 exactly where pydantic refuses).  No TE import: the dataclass stands in for it."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, Union

import pytest
from pydantic import ValidationError
from pydantic.dataclasses import dataclass

from fp8lint.diagnostics import Severity
from fp8lint.engine import lint_text
from fp8lint.settings import RunSettings

IMPORT = (
    "from transformer_engine.common.recipe import (\n"
    "    CustomRecipe, DelayedScaling, Float8BlockScaling, Float8CurrentScaling, Format,\n"
    "    MMParams, MXFP8BlockScaling, NVFP4BlockScaling,\n"
    ")\n"
)
HEAD = IMPORT.count("\n")  # the recipe call is on line HEAD + 1


def findings(body: str, name: str = "recipe.py") -> list[tuple[str, Severity, int, int]]:
    """(code, severity, line, column) of each warning or error for IMPORT + `body`."""
    diags, _ = lint_text(name, IMPORT + body, "python", RunSettings())
    return [
        (d.code, d.severity, d.line, d.column) for d in diags if d.severity is not Severity.INFO
    ]


def at(body: str, token: str, nth: int = 0) -> tuple[int, int]:
    """Line and column (1-based, in IMPORT + body) of the `nth` occurrence of `token`."""
    start = -1
    for _ in range(nth + 1):
        start = body.index(token, start + 1)
    line = HEAD + body.count("\n", 0, start) + 1
    return line, start - (body.rfind("\n", 0, start) + 1) + 1


def error(code: str, body: str, token: str, nth: int = 0) -> tuple[str, Severity, int, int]:
    return (code, Severity.ERROR, *at(body, token, nth))


# ------------------------------------------------------- a stand-in for TE's dataclasses


class _Helper(NamedTuple):
    max_fwd: float
    max_bwd: float


class Format(enum.Enum):
    """TE's `Format`: members whose values are namedtuples (L29-50)."""

    E2M1 = _Helper(6, 6)
    E4M3 = _Helper(448, 448)
    E5M2 = _Helper(57344, 57344)
    HYBRID = _Helper(448, 57344)


@dataclass
class StandIn:
    """The annotations of TE's `DelayedScaling` (L253-261), with pydantic's default config."""

    margin: int = 0
    fp8_format: Format = Format.HYBRID
    amax_history_len: int = 1024
    amax_compute_algo: Union[Literal["max", "most_recent"], Callable[..., Any]] = "max"  # noqa: UP007 (TE's spelling)
    reduce_amax: bool = True
    backward_override: str | None = None


@dataclass(frozen=True)
class MMParamsStandIn:
    use_split_accumulator: bool = True


@dataclass
class HoldsMMParams:
    fp8_gemm_fprop: MMParamsStandIn = MMParamsStandIn()


def accepted(key: str, value: Any) -> bool:
    try:
        StandIn(**{key: value})
    except ValidationError:
        return False
    return True


# (keyword, value, whether pydantic's lax mode takes it), as TE's recipes read it
COERCION = [
    ("amax_history_len", 16, True),
    ("amax_history_len", 16.0, True),
    ("amax_history_len", "16", True),
    ("amax_history_len", "16.0", True),
    ("amax_history_len", " 16 ", True),
    ("amax_history_len", "1_6", True),
    ("amax_history_len", "+16", True),
    ("amax_history_len", True, True),  # a bool is an int to pydantic: 1
    ("amax_history_len", 16.5, False),
    ("amax_history_len", "16.5", False),
    ("amax_history_len", "1e3", False),
    ("amax_history_len", "0x10", False),
    ("amax_history_len", "sixteen", False),
    ("amax_history_len", None, False),
    ("margin", "-1", True),
    ("margin", 2.0, True),
    ("margin", 0.5, False),
    ("margin", "0.5", False),
    ("reduce_amax", "no", True),
    ("reduce_amax", "yes", True),
    ("reduce_amax", "on", True),
    ("reduce_amax", "off", True),
    ("reduce_amax", "0", True),
    ("reduce_amax", "1", True),
    ("reduce_amax", "true", True),
    ("reduce_amax", "FALSE", True),
    ("reduce_amax", "t", True),
    ("reduce_amax", "n", True),
    ("reduce_amax", 0, True),
    ("reduce_amax", 1, True),
    ("reduce_amax", 1.0, True),
    ("reduce_amax", 2, False),
    ("reduce_amax", 1.5, False),
    ("reduce_amax", "2", False),
    ("reduce_amax", "", False),
    ("reduce_amax", " yes", False),
    ("reduce_amax", "maybe", False),
    ("reduce_amax", None, False),
    ("amax_compute_algo", "max", True),
    ("amax_compute_algo", "most_recent", True),
    ("amax_compute_algo", "MAX", False),
    ("amax_compute_algo", "Max", False),
    ("amax_compute_algo", " max", False),
    ("amax_compute_algo", "mean", False),
    ("amax_compute_algo", 3, False),
]


@pytest.mark.parametrize(("key", "value", "ok"), COERCION, ids=[repr(c[:2]) for c in COERCION])
def test_the_table_is_what_pydantic_does(key: str, value: Any, ok: bool) -> None:
    assert accepted(key, value) is ok


@pytest.mark.parametrize(("key", "value", "ok"), COERCION, ids=[repr(c[:2]) for c in COERCION])
def test_fp8lint_refuses_what_pydantic_refuses(key: str, value: Any, ok: bool) -> None:
    body = f"r = DelayedScaling({key}={value!r})\n"
    diags, _ = lint_text("recipe.py", IMPORT + body, "python", RunSettings())
    bad = [(d.code, d.severity, d.line, d.column) for d in diags if d.code == "FP8401"]
    assert bad == ([] if ok else [error("FP8401", body, repr(value))])


def test_the_two_false_errors_of_issue_21_are_gone() -> None:
    body = 'r = DelayedScaling(amax_history_len="16", reduce_amax="no")\n'
    diags, sites = lint_text("recipe.py", IMPORT + body, "python", RunSettings())
    assert [d.code for d in diags if d.code == "FP8401"] == []
    assert sites[0].amax_history_len.value == 16 and sites[0].reduce_amax.value is False


def test_amax_algorithm_in_the_wrong_case_says_the_choices_are_case_sensitive() -> None:
    body = 'r = DelayedScaling(amax_compute_algo="MAX")\n'
    diags, sites = lint_text("recipe.py", IMPORT + body, "python", RunSettings())
    (bad,) = [d for d in diags if d.code == "FP8401"]
    assert (bad.severity, bad.line, bad.column) == (Severity.ERROR, *at(body, '"MAX"'))
    assert "case-sensitive" in bad.message
    assert sites[0].amax_compute_algo.known is False  # refused: no rule reads it as max
    assert findings('r = DelayedScaling(amax_compute_algo="max")\n') == []


def test_a_format_string_is_no_member_for_pydantic_nor_for_fp8lint() -> None:
    with pytest.raises(ValidationError):
        StandIn(fp8_format="HYBRID")  # type: ignore[arg-type]
    assert StandIn(fp8_format=Format.HYBRID).fp8_format is Format.HYBRID
    body = 'r = DelayedScaling(fp8_format="HYBRID")\n'
    assert findings(body) == [error("FP8401", body, '"HYBRID"')]
    diags, _ = lint_text("recipe.py", IMPORT + body, "python", RunSettings())
    assert "`Format.HYBRID`" in next(d.message for d in diags if d.code == "FP8401")
    assert findings("r = DelayedScaling(fp8_format=Format.HYBRID)\n") == []


def test_history_below_one_passes_the_dataclass_but_stays_an_error() -> None:
    # TE's dataclass takes it; the first module to build its FP8 state fails on it
    assert accepted("amax_history_len", 0) and accepted("amax_history_len", -4)
    body = "r = DelayedScaling(amax_history_len=0)\n"
    assert findings(body) == [error("FP8401", body, "0)")]


def test_mmparams_from_a_dict_is_built_by_pydantic() -> None:
    held = HoldsMMParams(fp8_gemm_fprop={"use_split_accumulator": False})  # type: ignore[arg-type]
    assert held.fp8_gemm_fprop == MMParamsStandIn(False)
    with pytest.raises(ValidationError):
        HoldsMMParams(fp8_gemm_fprop=False)  # type: ignore[arg-type]


# ------------------------------------------------------------------ backward_override


@pytest.mark.parametrize(
    "cls",
    [
        "Float8CurrentScaling",
        "MXFP8BlockScaling",
        "Float8BlockScaling",
        "NVFP4BlockScaling",
        "CustomRecipe",
    ],
)
def test_backward_override_must_be_one_of_three(cls: str) -> None:
    extra = "qfactory=f, " if cls == "CustomRecipe" else ""
    bad = f'r = {cls}({extra}backward_override="fast")\n'
    assert findings(bad) == [error("FP8401", bad, '"fast"')]
    for good in ('"high_precision"', '"dequantized"', "None"):
        assert findings(f"r = {cls}({extra}backward_override={good})\n") == []


def test_backward_override_is_case_sensitive() -> None:
    bad = 'r = Float8CurrentScaling(backward_override="Dequantized")\n'
    assert findings(bad) == [error("FP8401", bad, '"Dequantized"')]


def test_delayed_scaling_takes_no_backward_override() -> None:
    bad = 'r = DelayedScaling(backward_override="high_precision")\n'
    diags, _ = lint_text("recipe.py", IMPORT + bad, "python", RunSettings())
    assert findings(bad) == [error("FP8401", bad, '"high_precision"')]
    assert "DelayedScaling" in next(d.message for d in diags if d.code == "FP8401")
    assert findings("r = DelayedScaling(backward_override=None)\n") == []


def test_backward_override_from_the_environment_is_unknown() -> None:
    body = 'import os\nr = DelayedScaling(backward_override=os.getenv("NVTE_BACKWARD_OVERRIDE"))\n'
    assert findings(body) == []


# ------------------------------------------------------------------ Float8BlockScaling


def test_block_dimension_must_be_1_or_2() -> None:
    bad = "r = Float8BlockScaling(grad_block_scaling_dim=3)\n"
    assert findings(bad) == [error("FP8401", bad, "3")]
    assert findings("r = Float8BlockScaling(grad_block_scaling_dim=1)\n") == []
    bad = "r = Float8BlockScaling(w_block_scaling_dim=0)\n"
    assert findings(bad) == [error("FP8401", bad, "0")]


def test_x_2d_alone_meets_the_default_2d_weights() -> None:
    bad = "r = Float8BlockScaling(x_block_scaling_dim=2)\n"
    assert findings(bad) == [error("FP8403", bad, "2")]
    diags, sites = lint_text("recipe.py", IMPORT + bad, "python", RunSettings())
    (conflict,) = [d for d in diags if d.code == "FP8403"]
    assert "`w_block_scaling_dim` 2 (TE's default)" in conflict.message
    assert [n.kind for n in sites[0].notes] == ["conflict"]
    assert findings("r = Float8BlockScaling(x_block_scaling_dim=2, w_block_scaling_dim=1)\n") == []


def test_two_written_2d_dimensions_point_at_the_first() -> None:
    bad = "r = Float8BlockScaling(w_block_scaling_dim=2, grad_block_scaling_dim=2)\n"
    assert findings(bad) == [error("FP8403", bad, "2")]
    bad = (
        "r = Float8BlockScaling(x_block_scaling_dim=2, w_block_scaling_dim=1,\n"
        "    grad_block_scaling_dim=2)\n"
    )
    assert findings(bad) == [error("FP8403", bad, "2")]
    good = "r = Float8BlockScaling(w_block_scaling_dim=2, grad_block_scaling_dim=1)\n"
    assert findings(good) == []


def test_a_coerced_string_dimension_counts() -> None:
    bad = 'r = Float8BlockScaling(x_block_scaling_dim="2")\n'
    assert findings(bad) == [error("FP8403", bad, '"2"')]


def test_defaults_are_not_assumed_when_a_splat_or_positional_may_set_them() -> None:
    assert findings("r = Float8BlockScaling(x_block_scaling_dim=2, **kw)\n") == []
    assert findings("r = Float8BlockScaling(False, x_block_scaling_dim=2)\n") == []
    # two written 2D dimensions conflict whatever a splat holds
    bad = "r = Float8BlockScaling(x_block_scaling_dim=2, w_block_scaling_dim=2, **kw)\n"
    assert findings(bad) == [error("FP8403", bad, "2")]


def test_an_unknown_dimension_is_silent() -> None:
    assert findings("r = Float8BlockScaling(x_block_scaling_dim=dim)\n") == []


def test_assignment_after_the_call_runs_no_post_init() -> None:
    body = "r = Float8BlockScaling()\nr.x_block_scaling_dim = 2\nr.fp8_dpa = True\n"
    assert findings(body) == []


def test_block_scaling_needs_split_accumulation() -> None:
    for key in ("fp8_gemm_fprop", "fp8_gemm_dgrad", "fp8_gemm_wgrad"):
        bad = f"r = Float8BlockScaling({key}=MMParams(use_split_accumulator=False))\n"
        assert findings(bad) == [error("FP8401", bad, "MMParams(")]
    bad = "r = Float8BlockScaling(fp8_gemm_wgrad=MMParams(False))\n"
    assert findings(bad) == [error("FP8401", bad, "MMParams(")]
    bad = 'r = Float8BlockScaling(fp8_gemm_dgrad={"use_split_accumulator": 0})\n'
    assert findings(bad) == [error("FP8401", bad, "{")]
    bad = "r = Float8BlockScaling(fp8_gemm_dgrad=False)\n"
    assert findings(bad) == [error("FP8401", bad, "False")]
    for good in (
        "MMParams(use_split_accumulator=True)",
        "MMParams()",
        "MMParams(True)",
        '{"use_split_accumulator": "yes"}',
        "MMParams(use_split_accumulator=flag)",
        "params",
    ):
        assert findings(f"r = Float8BlockScaling(fp8_gemm_fprop={good})\n") == [], good


def test_split_accumulation_off_is_fine_for_current_scaling() -> None:
    body = "r = Float8CurrentScaling(fp8_gemm_fprop=MMParams(use_split_accumulator=False))\n"
    assert findings(body) == []


def test_an_mmparams_fp8lint_cannot_tell_is_tes_is_silent() -> None:
    body = (
        "class MMParams:\n    def __init__(self, use_split_accumulator): ...\n"
        "r = Float8BlockScaling(fp8_gemm_fprop=MMParams(use_split_accumulator=False))\n"
    )
    assert findings(body) == []


def test_block_scaling_has_no_fp8_attention() -> None:
    bad = "r = Float8BlockScaling(fp8_dpa=True)\n"
    assert findings(bad) == [error("FP8401", bad, "True")]
    bad = 'r = Float8BlockScaling(fp8_mha="yes")\n'
    assert findings(bad) == [error("FP8401", bad, '"yes"')]
    assert findings('r = Float8BlockScaling(fp8_dpa=False, fp8_mha="no")\n') == []
    assert findings("r = Float8CurrentScaling(fp8_dpa=True)\n") == []


# ------------------------------------------------------------------ pure E5M2 (FP8404)


@pytest.mark.parametrize(
    "cls", ["DelayedScaling", "Float8CurrentScaling", "MXFP8BlockScaling", "Float8BlockScaling"]
)
def test_pure_e5m2_is_fp8404_for_each_class_that_asserts_it(cls: str) -> None:
    bad = f"r = {cls}(fp8_format=Format.E5M2)\n"
    assert findings(bad) == [error("FP8404", bad, "Format.E5M2")]
    assert findings(f"r = {cls}(fp8_format=Format.E4M3)\n") == []


def test_custom_recipe_does_not_assert_e5m2() -> None:
    assert findings("r = CustomRecipe(qfactory=f, fp8_format=Format.E5M2)\n") == []


# ------------------------------------------------------------------ NVFP4BlockScaling


def test_nvfp4_needs_e4m3_scales_and_e2m1_data() -> None:
    bad = "r = NVFP4BlockScaling(fp8_format=Format.HYBRID)\n"
    assert findings(bad) == [error("FP8401", bad, "Format.HYBRID")]
    bad = "r = NVFP4BlockScaling(fp8_format=Format.E5M2)\n"  # FP8401, not FP8404's advice
    assert findings(bad) == [error("FP8401", bad, "Format.E5M2")]
    bad = "r = NVFP4BlockScaling(fp4_format=Format.E4M3)\n"
    assert findings(bad) == [error("FP8401", bad, "Format.E4M3")]
    good = "r = NVFP4BlockScaling(fp8_format=Format.E4M3, fp4_format=Format.E2M1)\n"
    assert findings(good) == []


@pytest.mark.parametrize("key", ["nvfp4_4over6", "nvfp4_4over6_e4m3_use_256"])
def test_nvfp4_4over6_scopes(key: str) -> None:
    for value in ('"Weights"', '"some"', "None"):
        bad = f"r = NVFP4BlockScaling({key}={value})\n"
        assert findings(bad) == [error("FP8401", bad, value)], value
    for value in ('"none"', '"weights"', '"activations"', '"all"'):
        assert findings(f"r = NVFP4BlockScaling({key}={value})\n") == [], value


def test_nvfp4_4over6_err_mode_is_not_upper_cased_as_a_keyword() -> None:
    bad = 'r = NVFP4BlockScaling(nvfp4_4over6_err_mode="mse")\n'
    diags, _ = lint_text("recipe.py", IMPORT + bad, "python", RunSettings())
    assert findings(bad) == [error("FP8401", bad, '"mse"')]
    assert "case-sensitive" in next(d.message for d in diags if d.code == "FP8401")
    assert findings('r = NVFP4BlockScaling(nvfp4_4over6_err_mode="MSE")\n') == []


# ------------------------------------------------------------------ CustomRecipe


def test_custom_recipe_alignment_must_be_positive() -> None:
    for value in ("0", "-1", '"0"'):
        bad = f"r = CustomRecipe(qfactory=f, quantization_alignment={value})\n"
        assert findings(bad) == [error("FP8401", bad, value)], value
    for value in ("32", '"32"', "128.0"):
        body = f"r = CustomRecipe(qfactory=f, quantization_alignment={value})\n"
        assert findings(body) == [], value


def test_custom_recipe_without_fp8_in_the_file_passes_the_prefilter() -> None:
    from fp8lint.engine import mentions_fp8

    assert mentions_fp8(b"r = CustomRecipe(qfactory=f, quantization_alignment=0)\n")


def test_custom_recipe_is_a_site_with_no_format() -> None:
    _, sites = lint_text(
        "recipe.py", IMPORT + "r = CustomRecipe(qfactory=f)\n", "python", RunSettings()
    )
    (site,) = sites
    assert site.recipe.value == "custom" and site.fmt.known is False


# ------------------------------------------------------------------ NVIDIA's own recipes


def test_nvidias_default_recipes_stay_quiet() -> None:
    body = (
        "a = DelayedScaling()\nb = Float8CurrentScaling()\nc = MXFP8BlockScaling()\n"
        "d = Float8BlockScaling()\ne = NVFP4BlockScaling()\nf = CustomRecipe(qfactory=q)\n"
        "g = Float8BlockScaling(fp8_format=Format.E4M3)\n"
        "h = NVFP4BlockScaling(disable_rht=True, nvfp4_4over6='all',\n"
        "    backward_override='dequantized')\n"
        "i = CustomRecipe(qfactory=q, fp8_dpa=True, backward_override='high_precision')\n"
    )
    assert findings(body) == []


def test_a_recipe_wrapped_in_run_config_is_checked_the_same() -> None:
    body = "import nemo_run as run\nc = run.Config(Float8BlockScaling, x_block_scaling_dim=2)\n"
    assert findings(body) == [error("FP8403", body, "2)")]
    body = "import nemo_run as run\nc = run.Config(Float8BlockScaling, w_block_scaling_dim=1)\n"
    assert findings(body) == []


def test_lightning_recipe_mapping_is_coerced_as_delayed_scaling_coerces() -> None:
    # Lightning builds DelayedScaling(**mapping): the same lax coercion, the same literals
    body = (
        "from lightning.fabric.plugins import TransformerEnginePrecision\n"
        "p = TransformerEnginePrecision(weights_dtype=torch.bfloat16,\n"
        '    recipe={"amax_history_len": "16", "amax_compute_algo": "MAX"})\n'
    )
    diags, sites = lint_text("train.py", body, "python", RunSettings())
    bad = [(d.code, d.line, d.column) for d in diags if d.code == "FP8401"]
    assert bad == [("FP8401", 3, body.split("\n")[2].index('"MAX"') + 1)]
    assert sites[0].amax_history_len.value == 16
