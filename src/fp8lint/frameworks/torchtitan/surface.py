"""torchtitan's FP8 surface: the float8 converter's TOML section, `[quantize.linear.float8]`
(before 2025-09 `[float8]`), switched on by `[model] converters = ["float8"]`.

Sources: pytorch/torchtitan@238fa9953e4aec2a62582121564273d7cbb1e9f1 (the last TOML-era
commit) `torchtitan/config/job_config.py` L731-753 (`Float8Linear`:
`enable_fsdp_float8_all_gather`, `precompute_float8_dynamic_scale_for_fsdp`, `recipe_name:
"tensorwise" | "rowwise" | "rowwise_with_gw_hp" | None`, `filter_fqns`, `emulate`); the
section was `[float8]` before commit 5b5d46856 (with `moe_fqns_prototype`, and in late 2024
`enable_float8_linear`).  The recipe names are torchao's `Float8LinearRecipeName` values
(pytorch/ao@36027d82 `torchao/float8/config.py`; the pre-0.9 names `all_tensorwise`,
`all_axiswise`, `lw_axiswise_with_gw_hp` still read, renamed in commit 7fc8ad40d).  TOML
values are typed, and torchtitan copies them into its dataclass unconverted, so a boolean
must be a TOML boolean and names match exactly.

The Python converter config (pytorch/torchtitan b5bcd76
`torchtitan/components/quantization/float8.py`, `Float8LinearConverter.Config`) defaults
`recipe_name` to `rowwise`; the reader validates it as `converter_recipe_name`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from fp8lint.frameworks.shared.torchao_names import RecipeName
from fp8lint.frameworks.shared.worded import worded

_SECTION = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)


class Float8Linear(BaseModel):
    """`[quantize.linear.float8]` (or the older `[float8]`)."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="torchtitan float8 converter"
    )

    enable_fsdp_float8_all_gather: StrictBool = False
    precompute_float8_dynamic_scale_for_fsdp: StrictBool = False
    recipe_name: RecipeName | None = Field(None, description="None: the tensorwise default")
    filter_fqns: list[StrictStr] = Field(default_factory=list)
    emulate: StrictBool = False
    enable_float8_linear: StrictBool | None = Field(None, description="late-2024 switch")
    moe_fqns_prototype: list[StrictStr] | None = None


class _Model(BaseModel):
    model_config = _SECTION

    converters: list[StrictStr] = Field(default_factory=list)


class _Linear(BaseModel):
    model_config = _SECTION

    float8: Float8Linear | None = None


class _Quantize(BaseModel):
    model_config = _SECTION

    linear: _Linear | None = None


class TorchtitanJob(BaseModel):
    """A torchtitan TOML job config: the parts that concern float8."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        title="torchtitan job config (float8)",
    )

    model: _Model | None = None
    quantize: _Quantize | None = None
    float8: Float8Linear | None = None


class TorchtitanKeys(Float8Linear):
    """What the readers validate: the float8 section's keys and, as `converter_recipe_name`,
    the Python converter config's `recipe_name` (any torchao name reaches torchao, but the
    message names the two its type allows)."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="torchtitan FP8 keys"
    )

    converter_recipe_name: Annotated[
        RecipeName, worded("expected rowwise or rowwise_with_gw_hp")
    ] = "rowwise"


SURFACE = TorchtitanKeys
FILE = TorchtitanJob
