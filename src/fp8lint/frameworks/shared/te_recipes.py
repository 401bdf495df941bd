"""Transformer Engine's recipe classes as several families meet them: their names, the
format and amax-algorithm members, each class's keywords and defaults, and the reading of a
recipe's checked keywords (TE's own recipe calls, Lightning's recipe mapping, Accelerate's
and LLaMA-Factory's TE handlers).

Names, fields and defaults: TE `transformer_engine/common/recipe/__init__.py`
(`DelayedScaling` and its siblings); the defaults are the te surface's field defaults
(`te/surface.py`, where they are written once), read here.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, written
from fp8lint.model import AmaxAlgo, Fp8Format, Recipe, Setting

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context

TE = "Transformer Engine"

CLASSES: dict[str, Recipe] = {
    "DelayedScaling": Recipe.DELAYED,
    "Float8CurrentScaling": Recipe.TENSORWISE,
    "MXFP8BlockScaling": Recipe.MXFP8,
    "Float8BlockScaling": Recipe.BLOCKWISE,
    "NVFP4BlockScaling": Recipe.NVFP4,
    "CustomRecipe": Recipe.CUSTOM,
}
FORMATS: dict[str, Fp8Format] = {
    "HYBRID": Fp8Format.HYBRID,
    "E4M3": Fp8Format.E4M3,
    "E5M2": Fp8Format.E5M2,
    # an FP8 recipe accepts the FP4 member and stores E5M2 in both passes: get_fp8_te_dtype
    # picks E4M3 only for E4M3 and HYBRID's forward (pytorch/quantization.py L290-296)
    "E2M1": Fp8Format.E5M2,
}
ALGOS: dict[str, AmaxAlgo] = {"max": AmaxAlgo.MAX, "most_recent": AmaxAlgo.MOST_RECENT}
# the keywords whose written value is validated as it is (the format and algorithm are
# handed over by name)
CHECKED = frozenset({"margin", "amax_history_len", "interval", "reduce_amax", "fp8_dpa", "fp8_mha"})
# the keywords only a recipe's construction checks (TE's `__post_init__`, through the class's
# model): no model field holds them
CONSTRUCTED = frozenset(
    {
        "backward_override",
        "x_block_scaling_dim",
        "w_block_scaling_dim",
        "grad_block_scaling_dim",
        "nvfp4_4over6",
        "nvfp4_4over6_e4m3_use_256",
        "nvfp4_4over6_err_mode",
        "quantization_alignment",
        # the recipes' other switches: a `bool` as pydantic reads it (`disable_rht=2` fails)
        "use_power_2_scales",
        "enable_2d_quantization",
        "use_f32_scales",
        "disable_rht",
        "disable_stochastic_rounding",
        "disable_2d_quantization",
        "row_scaled_activation",
    }
)


@cache
def delayed_defaults() -> dict[str, Any]:
    """`DelayedScaling()`'s defaults in TE's own terms (format member, algorithm name), read
    from its model (`te_surface`) the first time a file needs them."""
    from fp8lint.frameworks.shared.te_surface import DelayedScaling

    defaults = surfaces.defaults_of(DelayedScaling)
    keys = ("fp8_format", "margin", "amax_history_len", "amax_compute_algo", "reduce_amax")
    return {key: defaults[key] for key in keys}


@cache
def keywords(cls: str) -> frozenset[str]:
    """The keywords a recipe class takes (TE's pydantic dataclass drops any other)."""
    from fp8lint.frameworks.shared.te_surface import RECIPES

    return frozenset(RECIPES[cls].model_fields)


@cache
def default_format(cls: str) -> Fp8Format:
    """A recipe class's default format (HYBRID for delayed and current scaling, E4M3 for the
    block formats)."""
    from fp8lint.frameworks.shared.te_surface import RECIPES

    return FORMATS[surfaces.defaults_of(RECIPES[cls])["fp8_format"]]


def checked_setting(
    ctx: Context, arg: Arg, checked: surfaces.Checked, key: str, names: dict[str, Any] | None = None
) -> Setting[Any]:
    """A keyword's setting from what the surface made of it (unreadable when rejected)."""
    if not arg.known:
        return written(arg, None)
    if not checked.ok(key):
        return ctx.unreadable(arg)
    value = checked.values[key]
    return written(arg, names[value] if names is not None else value)
