"""Transformer Engine's recipe classes as pydantic models of their keywords and defaults
(`DelayedScaling(fp8_format=Format.HYBRID, margin=0, amax_history_len=1024,
amax_compute_algo="max", reduce_amax=True, fp8_dpa=False, fp8_mha=False)` and the other
recipes' subsets).  Shared: TE's own recipe calls, Lightning's recipe mapping, Accelerate's
and LLaMA-Factory's TE handlers and Megatron's TE defaults all read these (`te_recipes`);
the te family's surface is `DelayedScaling`.

Sources (NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b, 2.20):
`transformer_engine/common/recipe/__init__.py` L29-50 (`Format`: E2M1, E4M3, E5M2, HYBRID),
L172-282 (`DelayedScaling`: `margin: int`, `fp8_format: Format`, `amax_history_len: int`,
`amax_compute_algo: Literal['max', 'most_recent'] | Callable`, `reduce_amax: bool`,
`fp8_dpa: bool`, `fp8_mha: bool`, `backward_override: Optional[str]`) and the classes after
it; `interval` was removed in v2.3 (commit 945a559b) and `override_linear_precision` in v2.0.

How TE reads a keyword.  Each recipe is a `pydantic.dataclasses.dataclass` with pydantic's
default (lax) configuration, and its `__post_init__` then asserts.  So a keyword is first
coerced as pydantic's lax mode does it, and these models use pydantic's own `int` and `bool`
for TE's `int` and `bool` fields, so they accept and refuse exactly what TE does (checked
against a throwaway pydantic dataclass with TE's annotations, pydantic 2.14; the cases are
in `tests/frameworks/test_te_recipe_checks.py`):

- an `int` takes an int, an integral float (`16.0`), a bool (`True` is 1), and a string of
  an integer with optional sign, surrounding blanks, underscores or a `.0` (`"16"`,
  `" 16 "`, `"1_6"`, `"16.0"`); it refuses `16.5`, `"0.5"`, `"1e3"`, `"0x10"`, None;
- a `bool` takes True/False, 0/1 (and 0.0/1.0), and the strings `0/1`, `true/false`,
  `yes/no`, `on/off`, `t/f`, `y/n` in any case, without blanks; it refuses `2`, `1.5`, `""`,
  `" yes"`, None;
- a `str` (`backward_override`, the NVFP4 4over6 keywords) takes a string only, as written
  (no trimming, no case-folding);
- `amax_compute_algo` is a `Literal` or a callable: `"MAX"` is refused (literals are
  case-sensitive);
- `fp8_format` is an `Enum` whose values are namedtuples: a member passes, a string (even
  `"HYBRID"`) is refused.  The recognizer hands a member over by its name, and reports a
  string itself.

Two limits fp8lint keeps where TE has none at construction: an integer must fit in int64,
and `amax_history_len` must be at least 1.  TE's dataclass takes 0 or a negative length, but
the first module that builds its FP8 state under autocast fails on it
(`DelayedScalingRecipeState` in `transformer_engine/pytorch/quantization.py` L1436-1449
allocates `torch.zeros(amax_history_len, n)`, which refuses a negative length, and reads row
0, which an empty history lacks).

The `__post_init__` assertions that one keyword decides are in the models too, each with its
message (the lines are TE 2.20's; the release that brought each is in
`frameworks/te/construct.py`): `backward_override` in None/`high_precision`/`dequantized`
(L265-267, and only None for `DelayedScaling`, L268-270), the block dimensions of
`Float8BlockScaling` in 1 or 2 (L446-448) and no FP8 attention there (L461-463), NVFP4's
E2M1 data and E4M3 scales (L577-578) and its 4over6 choices (L582-590), and a positive
`quantization_alignment` for `CustomRecipe` (L699-700).  The checks that take more than one
keyword or a call's value (two 2D block dimensions, `MMParams`) are `te/construct.py`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from fp8lint.frameworks.shared.surface_types import INT_LIMIT

FormatName = Literal["HYBRID", "E4M3", "E5M2", "E2M1"]
"""A `Format` member's name, as the recognizer hands it over (`Format.hybrid` does not
exist: no case-folding)."""

TeInt = Annotated[int, Field(ge=-INT_LIMIT, lt=INT_LIMIT)]
"""A TE recipe `int`, read as pydantic's lax mode reads it."""

TeHistoryLen = Annotated[int, Field(ge=1, lt=INT_LIMIT)]
"""An amax history length: at least one entry (see the module docstring)."""

TeBool = bool
"""A TE recipe `bool`, read as pydantic's lax mode reads it."""


def _case_sensitive(*choices: str) -> Any:
    """Before a `Literal` of `choices`: a string that differs from one only in case is
    refused with a message that says so (TE compares them as written)."""
    quoted = [f"`{c}`" for c in choices]
    shown = ", ".join(quoted[:-1]) + " or " + quoted[-1]

    def check(value: Any) -> Any:
        if isinstance(value, str) and value not in choices:
            if value.lower() in {c.lower() for c in choices}:
                raise PydanticCustomError(
                    "te_case", f"expected {shown} (the choices are case-sensitive)"
                )
        return value

    return BeforeValidator(check)


def _asserts(test: Callable[[Any], bool], message: str) -> Any:
    """After the type: TE's `__post_init__` assertion on the coerced value."""

    def check(value: Any) -> Any:
        if not test(value):
            raise PydanticCustomError("te_assert", message)
        return value

    return AfterValidator(check)


def _only(choice: str, message: str) -> Any:
    """Before a one-member `Literal`: anything else refused with `message`."""

    def check(value: Any) -> Any:
        if value != choice:
            raise PydanticCustomError("te_assert", message)
        return value

    return BeforeValidator(check)


Algo = Annotated[Literal["max", "most_recent"], _case_sensitive("max", "most_recent")]
BackwardOverride = Literal[None, "high_precision", "dequantized"]
BlockDim = Annotated[TeInt, _asserts(lambda v: v in (1, 2), "expected 1 or 2 (1D or 2D blocks)")]
Scope = Literal["none", "weights", "activations", "all"]


class DelayedScaling(BaseModel):
    """Recipe keywords (a callable `amax_compute_algo` is not a value: it is not checked)."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        title="Transformer Engine recipe keywords",
    )

    fp8_format: FormatName = Field("HYBRID", description="a transformer_engine Format member")
    margin: TeInt = 0
    amax_history_len: TeHistoryLen = 1024
    amax_compute_algo: Algo = "max"
    reduce_amax: TeBool = True
    fp8_dpa: TeBool = False
    fp8_mha: TeBool = False
    interval: TeInt = Field(1, description="removed in Transformer Engine 2.3")
    # accepted and dropped since v2.0 (not a value to check; not in the exported schema)
    override_linear_precision: SkipJsonSchema[Any] = None
    # TE's `Optional[str]`, and then only None: one message for any other value
    backward_override: Annotated[
        Any, _asserts(lambda v: v is None, "expected None: DelayedScaling has no backward override")
    ] = Field(None, description="only None (since Transformer Engine 2.15)")


class _Recipe(BaseModel):
    """What every other recipe class takes: the format, FP8 attention switches, the
    backward override."""

    model_config = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)

    fp8_format: FormatName = "HYBRID"
    fp8_dpa: TeBool = False
    fp8_mha: TeBool = False
    backward_override: BackwardOverride = None


# switches whose default TE reads from an NVTE_* variable (L302, L373, L429, L558-563): the
# default here is only the variable's own default
_SWITCH = Field(False, description="a bool; its default comes from an NVTE_* variable")


class Float8CurrentScaling(_Recipe):
    """Per-tensor current scaling (`Float8CurrentScaling()`: HYBRID)."""

    use_power_2_scales: TeBool = _SWITCH


class MXFP8BlockScaling(_Recipe):
    """MXFP8 (`MXFP8BlockScaling()`: E4M3, a margin kept for the API)."""

    fp8_format: FormatName = "E4M3"
    margin: TeInt = 0
    enable_2d_quantization: TeBool = False


_NO_ATTENTION = _asserts(lambda v: not v, "expected False: Float8BlockScaling has no FP8 attention")


class Float8BlockScaling(_Recipe):
    """Blockwise scaling (`Float8BlockScaling()`: E4M3, 1D activations and gradients, 2D
    weights; no FP8 attention)."""

    fp8_format: FormatName = "E4M3"
    x_block_scaling_dim: BlockDim = 1
    w_block_scaling_dim: BlockDim = 2
    grad_block_scaling_dim: BlockDim = 1
    use_f32_scales: TeBool = _SWITCH
    fp8_dpa: Annotated[TeBool, _NO_ATTENTION] = False
    fp8_mha: Annotated[TeBool, _NO_ATTENTION] = False


class NVFP4BlockScaling(_Recipe):
    """NVFP4 (`NVFP4BlockScaling()`: E2M1 data, its FP8 scale format E4M3)."""

    fp8_format: Annotated[
        Literal["E4M3"], _only("E4M3", "expected `E4M3`: NVFP4's block scales are E4M3")
    ] = "E4M3"
    fp4_format: Annotated[
        Literal["E2M1"], _only("E2M1", "expected `E2M1`: NVFP4's data is E2M1")
    ] = "E2M1"
    nvfp4_4over6: Annotated[Scope, _case_sensitive("none", "weights", "activations", "all")] = (
        "none"
    )
    nvfp4_4over6_e4m3_use_256: Annotated[
        Scope, _case_sensitive("none", "weights", "activations", "all")
    ] = "all"
    # upper-cased by TE only when it comes from NVTE_NVFP4_4OVER6_ERR_MODE, not as a keyword
    nvfp4_4over6_err_mode: Annotated[Literal["MAE", "MSE"], _case_sensitive("MAE", "MSE")] = "MAE"
    disable_rht: TeBool = _SWITCH
    disable_stochastic_rounding: TeBool = _SWITCH
    disable_2d_quantization: TeBool = _SWITCH
    row_scaled_activation: TeBool = _SWITCH


class CustomRecipe(_Recipe):
    """A quantizer factory's recipe (`CustomRecipe(qfactory=...)`: the factory picks the
    formats; `fp8_format` only tells TE's internals a default)."""

    quantization_alignment: Annotated[int, Field(ge=1, lt=INT_LIMIT)] = 128


class MMParams(BaseModel):
    """`MMParams(use_split_accumulator=True)`, the GEMM options of a recipe (TE L53-74)."""

    model_config = ConfigDict(defer_build=True)

    use_split_accumulator: TeBool = True


# every recipe class by name: its keywords are its fields, its defaults theirs
RECIPES: dict[str, type[BaseModel]] = {
    "DelayedScaling": DelayedScaling,
    "Float8CurrentScaling": Float8CurrentScaling,
    "MXFP8BlockScaling": MXFP8BlockScaling,
    "Float8BlockScaling": Float8BlockScaling,
    "NVFP4BlockScaling": NVFP4BlockScaling,
    "CustomRecipe": CustomRecipe,
}
