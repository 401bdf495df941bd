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
