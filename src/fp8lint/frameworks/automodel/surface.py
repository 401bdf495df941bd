"""NeMo AutoModel's FP8 surface: the `fp8:` section of a recipe YAML (AutoModel's
`FP8Config`, NVIDIA-NeMo/Automodel@36044ad `nemo_automodel/components/quantization/fp8.py`:
`enabled` false by default, `recipe_name` absent meaning torchao's tensorwise, `filter_fqns`
default `[]`) and a model's `backend.te_fp8:` (`TEFp8Config`,
`nemo_automodel/components/models/common/utils.py` @36044ad: `recipe` current, block or
mxfp8, default `current`).  Values are read as fp8lint always has: `enabled` as a YAML switch,
the recipe names spelled exactly.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.worded import YamlBool, worded

_SECTION = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)


class Fp8Config(BaseModel):
    """`fp8:` keys."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="NeMo AutoModel fp8"
    )

    enabled: YamlBool = False
    recipe_name: Annotated[
        Literal["tensorwise", "rowwise", "rowwise_with_gw_hp"] | None,
        worded("expected tensorwise, rowwise or rowwise_with_gw_hp"),
    ] = Field(None, description="None: torchao's tensorwise Float8LinearConfig")
    enable_fsdp_float8_all_gather: bool | None = None
    precompute_float8_dynamic_scale_for_fsdp: bool | None = None
    force_recompute_fp8_weight_in_bwd: bool | None = None
    filter_fqns: list[str] = Field(default_factory=list)
    emulate: bool | None = None


TeRecipe = Annotated[
    Literal["current", "block", "mxfp8"], worded("expected current, block or mxfp8")
]


class TeFp8Config(BaseModel):
    """`backend.te_fp8:` keys (present means on)."""

    model_config = _SECTION

    recipe: TeRecipe = "current"


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


class AutoModelKeys(Fp8Config):
    """What the reader validates: the `fp8:` keys and, as `te_fp8_recipe`, the `recipe` of a
    `te_fp8:` section."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="NeMo AutoModel FP8 keys"
    )

    te_fp8_recipe: TeRecipe = TeFp8Config.model_fields["recipe"].default


SURFACE = AutoModelKeys
FILE = AutoModelRecipe
