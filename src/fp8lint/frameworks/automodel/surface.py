"""NeMo AutoModel's FP8 surface: the `fp8:` section of a recipe YAML (AutoModel's
`FP8Config`, NVIDIA-NeMo/Automodel@36044ad `nemo_automodel/components/quantization/fp8.py`:
`enabled` false by default, `recipe_name` absent meaning torchao's tensorwise, `filter_fqns`
default `[]`) and a model's `backend.te_fp8:` (`TEFp8Config`,
`nemo_automodel/components/models/common/utils.py` @36044ad: `recipe` current, block or
mxfp8, default `current`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.surface_types import LOWER

_SECTION = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)


class Fp8Config(BaseModel):
    """`fp8:` keys."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="NeMo AutoModel fp8"
    )

    enabled: bool = False
    recipe_name: Literal["tensorwise", "rowwise", "rowwise_with_gw_hp"] | None = Field(
        None, description="None: torchao's tensorwise Float8LinearConfig"
    )
    enable_fsdp_float8_all_gather: bool | None = None
    precompute_float8_dynamic_scale_for_fsdp: bool | None = None
    force_recompute_fp8_weight_in_bwd: bool | None = None
    filter_fqns: list[str] = Field(default_factory=list)
    emulate: bool | None = None


class TeFp8Config(BaseModel):
    """`backend.te_fp8:` keys (present means on)."""

    model_config = _SECTION

    recipe: Annotated[Literal["current", "block", "mxfp8"], LOWER] = "current"


class _Backend(BaseModel):
    model_config = _SECTION

    te_fp8: TeFp8Config | None = None


class _Model(BaseModel):
    model_config = _SECTION

    backend: _Backend | None = None


class AutoModelRecipe(BaseModel):
    """A NeMo AutoModel recipe YAML: the parts that concern FP8."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="NeMo AutoModel recipe"
    )

    fp8: Fp8Config | None = None
    model: _Model | None = None


SURFACE = Fp8Config
FILE = AutoModelRecipe
