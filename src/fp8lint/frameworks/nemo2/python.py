"""NeMo 2: `MegatronMixedPrecision` (the precision plugin), its named presets, and the
`MegatronStrategy` topology, read from Python recipe code.

The plugin's fields are TransformerConfig fields with NeMo 2's defaults; a preset
(`bf16_with_fp8_mixed()`, ...) fixes some of them.  Both, shared with Megatron-Bridge, are
`shared.mixed_precision`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.mixed_precision import (
    NEMO2_PROFILE,
    PRESETS,
    mixed_precision_site,
    preset_site,
)
from fp8lint.model import Fp8Site

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context, Target, Val

NEMO2_CLASS = "MegatronMixedPrecision"
STRATEGY_CLASS = "MegatronStrategy"
TOPOLOGY_KEYS = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "sequence_parallel",
    "expert_model_parallel_size",
    "expert_tensor_parallel_size",
)
# re-exported for the dispatch (`python_sites`) and the performance scripts
__all__ = [
    "NEMO2_CLASS",
    "NEMO2_PROFILE",
    "PRESETS",
    "STRATEGY_CLASS",
    "mixed_precision_site",
    "nemo2_preset_site",
    "preset_site",
    "topology",
]


def topology(ctx: Context, strategies: list[Target]) -> dict[str, Arg]:
    """The topology keywords of the file's one `MegatronStrategy` (none if several)."""
    if len(strategies) != 1:
        return {}
    call = strategies[0].call
    kw = ctx.keywords(call)
    for name, val in ctx.overrides(call):
        kw[name] = val
    return {k: kw[k].arg for k in TOPOLOGY_KEYS if k in kw}


def nemo2_preset_site(
    ctx: Context,
    name: str,
    written_as: str,
    node: cst.CSTNode,
    topology: dict[str, Arg],
    overrides: Sequence[tuple[str, Val]],
) -> Fp8Site:
    profile = replace(NEMO2_PROFILE, kind=f"NeMo 2 preset {written_as}()")
    return preset_site(ctx, dict(PRESETS[name]), written_as, node, profile, topology, overrides)
