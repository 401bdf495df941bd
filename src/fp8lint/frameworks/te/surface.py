"""Transformer Engine's FP8 surface: the keywords of its recipe classes
(`DelayedScaling(fp8_format=Format.HYBRID, margin=0, amax_history_len=1024,
amax_compute_algo="max", reduce_amax=True, fp8_dpa=False, fp8_mha=False)` and the other
recipes' subsets).

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

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

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


SURFACE = DelayedScaling
FILE = DelayedScaling
