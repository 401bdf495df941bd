"""Levanter's FP8 surface: `trainer.quantization`, haliax's `QuantizationConfig`.

Sources: stanford-crfm/levanter@9263f81e `src/levanter/trainer.py` (`TrainerConfig.quantization`)
and stanford-crfm/haliax@f41e7d40 `src/haliax/quantization.py` (`QuantizationConfig`: `targets:
list[str] | str | None = None` (a list of module names or one regex), `amax_history_length: int
= 1024`, `compute_dtype = None`, `fp8: bool = False`, `int8: bool = False`) and
`src/haliax/_src/fp8.py` (the scale is `fp8_max / amax` over the history: no margin, `max`).
A boolean is read as fp8lint always has (YAML true/false, `"true"`/`"yes"`/`"1"` strings, 0/1).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from fp8lint.frameworks.shared.surface_types import HistoryLen, Int

_WORDS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}


def _flag(value: Any) -> Any:
    if isinstance(value, str) and value.lower() in _WORDS:
        return _WORDS[value.lower()]
    if value is None or isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return value
    raise PydanticCustomError("bool_type", "Input should be a valid boolean")


def _positive(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    try:
        return handler(value)
    except ValidationError:  # worded as fp8lint has always reported it
        raise PydanticCustomError("positive_int", "expected a positive integer") from None


Flag = Annotated[bool, BeforeValidator(_flag)]
History = Annotated[HistoryLen, WrapValidator(_positive)]


class QuantizationConfig(BaseModel):
    """`trainer.quantization: {...}` (haliax's `QuantizationConfig`)."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="haliax QuantizationConfig"
    )

    fp8: Flag | None = Field(False, description="Fp8DotGeneralOp in every (targeted) hnn.Linear")
    int8: bool | None = False
    targets: list[str] | str | None = Field(None, description="module names, or one regex")
    amax_history_length: History = 1024
    compute_dtype: str | None = None


class Fp8DotGeneralOp(BaseModel):
    """What haliax's FP8 op fixes (no keys): the scale is `fp8_max / amax`."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="haliax Fp8DotGeneralOp")

    margin: Int = 0
    amax_compute_algo: Literal["max"] = "max"


class _Trainer(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)

    quantization: QuantizationConfig | None = None
    model_axis_size: Int | None = Field(None, description="the model (tensor) axis")


class LevanterConfig(BaseModel):
    """A Levanter training config: only `trainer.quantization` concerns FP8."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="Levanter config (FP8)"
    )

    trainer: _Trainer | None = None


SURFACE = QuantizationConfig
FILE = LevanterConfig
