"""Megatron-Bridge: `MixedPrecisionConfig` and the presets it registers by name, read from
Python recipe code.

The config's fields are TransformerConfig fields with Bridge's defaults (tensorwise where
NeMo 2 says delayed); the presets are NeMo 2's plus two delayed-scaling names of Bridge's
own, and Bridge's MXFP8 presets write `fp8 = "e4m3"` (both in `shared.mixed_precision`).  A
preset named as a string (`mixed_precision="bf16_with_fp8_mixed"`) is Bridge's: its config
container looks the name up.  Names and values: Megatron-Bridge
`src/megatron/bridge/training/mixed_precision.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from fp8lint.frameworks.shared import mixed_precision as mp
from fp8lint.model import Fp8Site

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.base import Arg
    from fp8lint.frameworks.shared.python_args import Context, Val

BRIDGE_CLASS = "MixedPrecisionConfig"
BRIDGE_PROFILE = mp.BRIDGE_PROFILE


def is_bridge_preset(name: str, origin: str) -> bool:
    """A preset call is Bridge's when only Bridge has the name, or it is imported from
    Bridge."""
    return name in mp.BRIDGE_ONLY_PRESETS or "bridge" in origin.lower()


def preset_site(
    ctx: Context,
    name: str,
    written_as: str,
    node: cst.CSTNode,
    topology: dict[str, Arg],
    overrides: Sequence[tuple[str, Val]],
) -> Fp8Site:
    preset = mp.bridge_preset(name)
    profile = replace(BRIDGE_PROFILE, kind=f"Megatron-Bridge preset `{written_as}`")
    return mp.preset_site(ctx, preset, written_as, node, profile, topology, overrides)


# `_perf_precision("fp8_cs")` (src/megatron/bridge/perf_recipes/_common.py L99-123) and
# `get_precision_config("fp8_mx")` (scripts/performance/utils/precision.py L26-43) at
# NVIDIA-NeMo/Megatron-Bridge 067f987d: the preset each string returns, and what the helper
# changes in it (BF16 first/last layers off for current and delayed scaling; `nvfp4`
# unchanged: _common.py L118-119, precision.py L39-41)
_NO_EDGES: dict[str, object] = {"first_last_layers_bf16": False}
PERF_PRECISION: dict[str, dict[str, tuple[str, dict[str, object]]]] = {
    "_perf_precision": {
        "fp8_cs": ("bf16_with_fp8_current_scaling_mixed", _NO_EDGES),
        "fp8_ds": ("bf16_with_fp8_delayed_scaling_mixed", _NO_EDGES),
        "fp8_mx": ("bf16_with_mxfp8_mixed", {}),
        "nvfp4": ("bf16_with_nvfp4_mixed", {}),
    },
    "get_precision_config": {
        "fp8_cs": ("bf16_with_fp8_current_scaling_mixed", _NO_EDGES),
        "fp8_mx": ("bf16_with_mxfp8_mixed", {}),
        "fp8_sc": ("bf16_with_fp8_subchannel_scaling_mixed", {}),
        "nvfp4": ("bf16_with_nvfp4_mixed", {}),
    },
}


def perf_sites(ctx: Context) -> list[Fp8Site]:
    """The Bridge performance recipes' precision helpers called with a literal string: the
    preset it returns, as `_perf_precision("fp8_cs")` is written.  `bf16` is not FP8;
    `nvfp4` returns `bf16_with_nvfp4_mixed()` unchanged (_common.py L118-119,
    precision.py L39-41)."""
    from fp8lint.frameworks.shared.python_args import positional

    out: list[Fp8Site] = []
    for helper, table in PERF_PRECISION.items():
        for call in ctx.facts.calls.get(helper, ()):
            args = positional(call)
            if not args:
                continue
            ok, value = ctx.literal(args[0].value)
            if not ok or not isinstance(value, str) or value not in table:
                continue
            name, changes = table[value]
            preset = {**mp.bridge_preset(name), **changes}
            written_as = ctx.text(call)
            profile = replace(BRIDGE_PROFILE, kind=f'Megatron-Bridge `{helper}("{value}")`')
            out.append(mp.preset_site(ctx, preset, written_as, call, profile, {}, []))
    return out
