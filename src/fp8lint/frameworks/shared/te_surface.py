"""Transformer Engine's recipe classes as pydantic models of their keywords and defaults
(`DelayedScaling(fp8_format=Format.HYBRID, margin=0, amax_history_len=1024,
amax_compute_algo="max", reduce_amax=True, fp8_dpa=False, fp8_mha=False)` and the other
recipes' subsets).  Shared: TE's own recipe calls, Lightning's recipe mapping, Accelerate's
and LLaMA-Factory's TE handlers and Megatron's TE defaults all read these (`te_recipes`);
the te family's surface is `DelayedScaling`.

Sources (NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b):
`transformer_engine/common/recipe/__init__.py` L29-50 (`Format`: E4M3, E5M2, HYBRID) and
L172-282 (`DelayedScaling`: `margin: int`, `fp8_format: Format`, `amax_history_len: int`,
`amax_compute_algo: Literal['max', 'most_recent'] | Callable`, `reduce_amax: bool`,
`fp8_dpa: bool`, `fp8_mha: bool`); `interval` was removed in v2.3 (commit 945a559b) and
`override_linear_precision` in v2.0.  An integral float passes (the recipes are pydantic
dataclasses); a string for an integer is reported, as a mistake in code.  A format
is written as a `Format` member; the recognizer hands over its name.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.surface_types import LOWER, UPPER, CodeBool, CodeHistoryLen, CodeInt

FormatName = Annotated[Literal["HYBRID", "E4M3", "E5M2"], UPPER]


class DelayedScaling(BaseModel):
    """Recipe keywords (a callable `amax_compute_algo` is not a value: it is not checked)."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        title="Transformer Engine recipe keywords",
    )

    fp8_format: FormatName = Field("HYBRID", description="a transformer_engine Format member")
    margin: CodeInt = 0
    amax_history_len: CodeHistoryLen = 1024
    amax_compute_algo: Annotated[Literal["max", "most_recent"], LOWER] = "max"
    reduce_amax: CodeBool = True
    fp8_dpa: CodeBool = False
    fp8_mha: CodeBool = False
    interval: CodeInt = Field(1, description="removed in Transformer Engine 2.3")
    # accepted and dropped since v2.0 (not a value to check; not in the exported schema)
    override_linear_precision: SkipJsonSchema[Any] = None


class _Recipe(BaseModel):
    """What every other recipe class takes: the format, FP8 attention switches."""

    model_config = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)

    fp8_format: FormatName = "HYBRID"
    fp8_dpa: CodeBool = False
    fp8_mha: CodeBool = False


class Float8CurrentScaling(_Recipe):
    """Per-tensor current scaling (`Float8CurrentScaling()`: HYBRID)."""


class MXFP8BlockScaling(_Recipe):
    """MXFP8 (`MXFP8BlockScaling()`: E4M3, a margin kept for the API)."""

    fp8_format: FormatName = "E4M3"
    margin: CodeInt = 0


class Float8BlockScaling(_Recipe):
    """Blockwise scaling (`Float8BlockScaling()`: E4M3)."""

    fp8_format: FormatName = "E4M3"


class NVFP4BlockScaling(_Recipe):
    """NVFP4 (`NVFP4BlockScaling()`: its FP8 scale format E4M3)."""

    fp8_format: FormatName = "E4M3"


# every recipe class by name: its keywords are its fields, its defaults theirs
RECIPES: dict[str, type[BaseModel]] = {
    "DelayedScaling": DelayedScaling,
    "Float8CurrentScaling": Float8CurrentScaling,
    "MXFP8BlockScaling": MXFP8BlockScaling,
    "Float8BlockScaling": Float8BlockScaling,
    "NVFP4BlockScaling": NVFP4BlockScaling,
}
