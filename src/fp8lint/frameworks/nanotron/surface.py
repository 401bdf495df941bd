"""nanotron's FP8 surface: `model.dtype: float8` and the `fp8:` section.

Sources: huggingface/nanotron branch `xrsrke/fp8-end-to-end` @e118d0c3:
`src/nanotron/config/fp8_config.py` (`FP8Args`: `resid_dtype`, `accum_dtype`, `model: list of
FP8LayerArgs`, `optim`; `FP8LayerArgs`: `module_name`, `accum_dtype` and one recipe per
tensor), `src/nanotron/fp8/recipe.py` (a tensor's `{dtype, margin, interval}`; the optimizer's
storage dtypes), `src/nanotron/fp8/constants.py` (`FP8LM_LINEAR_RECIPE`, what linears use
without `fp8.model`) and `src/nanotron/fp8/meta.py` (`FP8Meta.rescale` applies no margin; the
scale comes from the max over the window).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.surface_types import Int

_SECTION = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)


class Fp8TensorRecipe(BaseModel):
    """One tensor's recipe in `fp8.model[i]`: its dtype, margin and amax window."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="nanotron FP8 tensor recipe"
    )

    dtype: str | None = Field(None, description="FP8E4M3 / FP8E5M2 (or a plain dtype)")
    margin: Int | None = Field(None, description="read, but FP8Meta.rescale applies none")
    interval: Int | None = Field(None, description="the amax window and the update period")


TensorRecipe = Fp8TensorRecipe | str | None
Constant = dict[str, Any] | None  # a recipe constant: `{dtype, margin, interval}`


class Fp8LmLinearRecipe(BaseModel):
    """`FP8LM_LINEAR_RECIPE`: every linear's recipe when `fp8.model` is not given."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="nanotron FP8LM_LINEAR_RECIPE")

    input: Constant = {"dtype": "FP8E4M3", "margin": 0, "interval": 16}
    weight: Constant = {"dtype": "FP8E4M3", "margin": 0, "interval": 1}
    bias: Constant = None
    input_grad: Constant = {"dtype": "FP8E5M2", "margin": 0, "interval": 16}
    weight_grad: Constant = {"dtype": "FP8E4M3", "margin": 0, "interval": 1}
    output_grad: Constant = {"dtype": "FP8E5M2", "margin": 0, "interval": 16}


class Fp8Meta(BaseModel):
    """What `FP8Meta` fixes (no keys): no margin, the max over the window."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="nanotron FP8Meta")

    margin: Int = 0
    amax_compute_algo: Literal["max"] = "max"


class Fp8LayerArgs(BaseModel):
    """One entry of `fp8.model`."""

    model_config = _SECTION

    module_name: str | None = None
    accum_dtype: str | None = None
    input: TensorRecipe = None
    weight: TensorRecipe = None
    bias: TensorRecipe = None
    input_grad: TensorRecipe = None
    weight_grad: TensorRecipe = None
    output_grad: TensorRecipe = None


class Fp8OptimRecipe(BaseModel):
    """`fp8.optim`: the optimizer's storage dtypes."""

    model_config = _SECTION

    master_weight_dtype: str | None = None
    accum_dtype: str | None = None
    exp_avg_dtype: str | None = None
    exp_avg_sq_dtype: str | None = None


class Fp8Args(BaseModel):
    model_config = _SECTION

    resid_dtype: str | None = None
    accum_dtype: str | None = None
    model: list[Fp8LayerArgs] | None = Field(None, description="None: FP8LM_LINEAR_RECIPE")
    optim: Fp8OptimRecipe | None = None


class _Model(BaseModel):
    model_config = _SECTION

    dtype: str | None = Field(None, description="float8 turns the FP8 branch on")


class NanotronConfig(BaseModel):
    """A nanotron training config: `model.dtype` and the `fp8:` section."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="nanotron config (FP8)"
    )

    model: _Model | None = None
    fp8: Fp8Args | None = None


SURFACE = Fp8TensorRecipe
FILE = NanotronConfig
