"""MaxText's FP8 surface: `quantization` and the tensor-parallel mesh axes (`base.yml` keys,
in a YAML config or as `key=value` arguments).

Sources: AI-Hypercomputer/maxtext@e591f30c `src/maxtext/configs/base.yml` and
`src/maxtext/configs/types.py` (`quantization: ""`, `use_qwix_quantization: false`,
`ici_tensor_parallelism: 1`, `dcn_tensor_parallelism: 1`) and
`src/maxtext/layers/quantizations.py` (the FP8 `quantization` values); Flax
`flax/linen/fp8_ops.py` (`Fp8DotGeneralOp.amax_history_length = 1024`, `compute_scale(...,
margin=0)`, the scale from the max over the history).  A value is matched after trimming and
case-folding, as fp8lint has always read it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from fp8lint.frameworks.shared.surface_types import LOWER, HistoryLen, Int

Fp8Mode = Literal[
    "fp8",
    "nanoo_fp8",
    "fp8_gpu",
    "fp8_nanoo",
    "te_fp8_delayedscaling",
    "te_fp8_currentscaling",
    "te_mxfp8",
    "te_nvfp4",
    "te_nvfp4_no_rht",
    "fp8_full",
    "aqt_fp8",
    "aqt_fp8_full",
]
FP8_MODES: tuple[str, ...] = get_args(Fp8Mode)


def _one_of(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:  # worded as fp8lint has always reported it
        raise PydanticCustomError("fp8_mode", "expected one of " + ", ".join(FP8_MODES)) from None


class MaxTextFp8(BaseModel):
    """The MaxText keys that decide FP8 (an FP8 `quantization` is checked against the modes)."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="MaxText FP8 keys"
    )

    quantization: Annotated[Fp8Mode, LOWER, WrapValidator(_one_of)] | Literal[""] = Field(
        "", description="an FP8 mode (or another quantization, not FP8)"
    )
    use_qwix_quantization: bool | None = Field(False, description="`fp8` is Qwix's E4M3 rule")
    ici_tensor_parallelism: Int = 1
    dcn_tensor_parallelism: Int = 1


class FlaxDelayedScaling(BaseModel):
    """What Flax's FP8 dot ops fix (no MaxText keys): the delayed-scaling modes' defaults."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="Flax Fp8DotGeneralOp")

    amax_history_length: HistoryLen = 1024
    margin: Int = 0
    amax_compute_algo: Literal["max"] = "max"


SURFACE = MaxTextFp8
FILE = MaxTextFp8  # a MaxText config is flat: the keys are top-level
