"""NeMo 2 `MegatronMixedPrecision` and Megatron-Bridge `MixedPrecisionConfig`: the same
TransformerConfig fields with each stack's defaults (from its surface model), and the named
presets both register (`bf16_with_fp8_mixed()`, ...), which NeMo 2's and Bridge's recipe code,
launch commands and performance scripts install.

Sources: NeMo (NVIDIA/NeMo@8cfedd7203462cb251a914e700e5605444277561)
`nemo/collections/llm/recipes/precision/mixed_precision.py`; Megatron-Bridge
(NVIDIA-NeMo/Megatron-Bridge@067f987df03b8355b03192d88d70f1709fedf51a)
`src/megatron/bridge/training/mixed_precision.py` L167-182 (presets registered by name; its
MXFP8 presets write `fp8 = "e4m3"`, and two delayed-scaling names are Bridge's own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.transformer_config import (
    MODEL_TO_CONFIG,
    Profile,
    SurfaceDefaults,
    build_site,
)
from fp8lint.model import Fp8Site, Framework, Setting

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context, Target, Val

NEMO2_DEFAULTS = SurfaceDefaults("nemo2")
BRIDGE_DEFAULTS = SurfaceDefaults("bridge")
NEMO2_PROFILE = Profile(
    framework=Framework.NEMO2,
    label="NeMo 2 MegatronMixedPrecision",
    defaults=NEMO2_DEFAULTS,
    surface="nemo2",
    kind="NeMo 2 MegatronMixedPrecision(...)",
)
BRIDGE_PROFILE = Profile(
    framework=Framework.BRIDGE,
    label="Megatron-Bridge MixedPrecisionConfig",
    defaults=BRIDGE_DEFAULTS,
    surface="bridge",
    kind="Megatron-Bridge MixedPrecisionConfig(...)",
)

# Named presets (NeMo `llm/recipes/precision/mixed_precision.py`, Bridge
# `training/mixed_precision.py`): the TransformerConfig fields each one fixes.
_DELAYED: dict[str, Any] = {
    "fp8": "hybrid",
    "fp8_recipe": "delayed",
    "fp8_margin": 0,
    "fp8_amax_history_len": 1024,
    "fp8_amax_compute_algo": "max",
    "fp8_param_gather": True,
}
_CURRENT: dict[str, Any] = {
    "fp8": "hybrid",
    "fp8_recipe": "tensorwise",
    "first_last_layers_bf16": True,
    "num_layers_at_start_in_bf16": 1,
    "num_layers_at_end_in_bf16": 1,
    "fp8_param_gather": True,
}
_MXFP8: dict[str, Any] = {"fp8": "hybrid", "fp8_recipe": "mxfp8", "fp8_param_gather": True}
_SUBCHANNEL: dict[str, Any] = {
    "fp8": "hybrid",
    "fp8_recipe": "blockwise",
    "fp8_param_gather": False,
}
# Bridge's NVFP4 presets (mixed_precision.py L404-429 @067f987d; the Ultra one is 0.6.2's,
# L432 there: BF16 first/last layers, none at the start, 16 at the end)
_NVFP4: dict[str, Any] = {
    "fp4": "e2m1",
    "fp4_recipe": "nvfp4",
    "fp8_param_gather": False,
    "fp4_param_gather": True,
}
PRESETS: dict[str, dict[str, Any]] = {
    "bf16_with_fp8_mixed": _DELAYED,
    "fp16_with_fp8_mixed": _DELAYED,
    "bf16_with_fp8_delayed_scaling_mixed": _DELAYED,
    "fp16_with_fp8_delayed_scaling_mixed": _DELAYED,
    "bf16_with_fp8_current_scaling_mixed": _CURRENT,
    "fp16_with_fp8_current_scaling_mixed": _CURRENT,
    "nemotron_h_bf16_with_fp8_current_scaling_mixed": {
        **_CURRENT,
        "num_layers_at_start_in_bf16": 2,
        "num_layers_at_end_in_bf16": 2,
    },
    "nanov2_bf16_with_fp8_current_scaling_mixed": {
        **_CURRENT,
        "fp8_recipe": "blockwise",
        "num_layers_at_start_in_bf16": 2,
        "num_layers_at_end_in_bf16": 2,
    },
    "bf16_with_mxfp8_mixed": _MXFP8,
    "fp16_with_mxfp8_mixed": _MXFP8,
    "bf16_with_fp8_subchannel_scaling_mixed": _SUBCHANNEL,
    "fp16_with_fp8_subchannel_scaling_mixed": _SUBCHANNEL,
    "bf16_with_nvfp4_mixed": _NVFP4,
    "nemotron_3_super_bf16_with_nvfp4_mixed": {
        **_NVFP4,
        "first_last_layers_bf16": True,
        "num_layers_at_end_in_bf16": 14,
    },
    "nemotron_3_ultra_bf16_with_nvfp4_mixed": {
        **_NVFP4,
        "first_last_layers_bf16": True,
        "num_layers_at_start_in_bf16": 0,
        "num_layers_at_end_in_bf16": 16,
    },
}
# TransformerConfig field -> the model fields it sets
_PRESET_MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "fp8": ("enabled", "fmt"),
    "fp8_recipe": ("recipe",),
    "fp8_margin": ("margin",),
    "fp8_amax_history_len": ("amax_history_len",),
    "fp8_amax_compute_algo": ("amax_compute_algo",),
    "fp8_param_gather": ("fp8_param_gather",),
    "fp4": ("fp4",),
    "fp4_recipe": ("fp4_recipe",),
    "fp4_param_gather": ("fp4_param_gather",),
    "first_last_layers_bf16": ("first_last_layers_bf16",),
    "num_layers_at_start_in_bf16": ("num_layers_at_start_in_bf16",),
    "num_layers_at_end_in_bf16": ("num_layers_at_end_in_bf16",),
}


BRIDGE_ONLY_PRESETS = frozenset(
    {
        "bf16_with_fp8_delayed_scaling_mixed",
        "fp16_with_fp8_delayed_scaling_mixed",
        "bf16_with_nvfp4_mixed",
        "nemotron_3_super_bf16_with_nvfp4_mixed",
        "nemotron_3_ultra_bf16_with_nvfp4_mixed",
    }
)
# Bridge's MXFP8 presets write `fp8 = "e4m3"` where NeMo 2's write "hybrid"
PRESET_CHANGES: dict[str, dict[str, Any]] = {
    "bf16_with_mxfp8_mixed": {"fp8": "e4m3"},
    "fp16_with_mxfp8_mixed": {"fp8": "e4m3"},
}


def bridge_preset(name: str) -> dict[str, Any]:
    """The fields Bridge's preset of that name fixes."""
    return {**PRESETS[name], **PRESET_CHANGES.get(name, {})}


def mixed_precision_site(
    ctx: Context, tgt: Target, profile: Profile, topology: dict[str, Arg]
) -> Fp8Site:
    """`MegatronMixedPrecision(...)` (or Bridge's `MixedPrecisionConfig(...)`): its keywords
    and attribute overrides as TransformerConfig fields, `fp8_params` standing for
    `fp8_param_gather`, and the strategy's topology."""
    call = tgt.call
    kw = {k: v.arg for k, v in ctx.keywords(call).items()}
    for name, val in ctx.overrides(call):
        kw[name] = val.arg
    fields: dict[str, Arg] = {}
    for key, arg in kw.items():
        if key == "fp8_params":
            if "fp8_param_gather" not in kw:
                fields["fp8_param_gather"] = arg
            continue
        fields[key] = arg
    for key, arg in topology.items():
        fields.setdefault(key, arg)
    profile = replace(profile, edit=ctx.edit_info(call, MODEL_TO_CONFIG))
    return build_site(fields, profile, ctx.file.path, ctx.span(call))


def preset_site(
    ctx: Context,
    preset: dict[str, Any],
    written_as: str,
    node: cst.CSTNode,
    profile: Profile,
    topology: dict[str, Arg],
    overrides: Sequence[tuple[str, Val]],
) -> Fp8Site:
    """A named preset (a call or, for Bridge, a string): the fields it fixes are `preset`
    settings, attribute overrides after it are written ones, the rest the profile's
    defaults."""
    span = ctx.span(node)
    fields = {
        k: Arg(key=written_as, value=v, span=span, value_span=span) for k, v in preset.items()
    }
    overridden: set[str] = set()
    for key, val in overrides:
        real = "fp8_param_gather" if key == "fp8_params" else key
        fields[real] = val.arg
        overridden.add(real)
    for key, arg in topology.items():
        fields.setdefault(key, arg)
    site = build_site(fields, profile, ctx.file.path, span)
    updates: dict[str, Any] = {}
    for key in preset:
        if key in overridden:
            continue
        for model_field in _PRESET_MODEL_FIELDS.get(key, ()):
            setting: Setting[Any] = getattr(site, model_field)
            updates[model_field] = setting.model_copy(
                update={"provenance": "preset", "raw": None, "key": written_as}
            )
    return site.model_copy(update=updates)
