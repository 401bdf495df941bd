"""Megatron-Bridge's FP8 surface: `MixedPrecisionConfig`, the same fields as NeMo 2's
`DtypeConfig` with Bridge's defaults (recipe `tensorwise`) and its own `fp8_param`,
`fp4_param`, `fp4_param_gather`.

Sources (NVIDIA-NeMo/Megatron-Bridge@067f987df03b8355b03192d88d70f1709fedf51a):
`src/megatron/bridge/training/mixed_precision.py` L33-75 (`MixedPrecisionConfig`) and
L167-182 (presets registered by name); `src/megatron/bridge/training/config.py` L1008
(`ConfigContainer.mixed_precision`).
"""

from __future__ import annotations

from pydantic import ConfigDict

from fp8lint.frameworks.shared.tc_surface import Fp8RecipeName, MegatronMixedPrecision


class MixedPrecisionConfig(MegatronMixedPrecision):
    """Megatron-Bridge's mixed-precision config fields that concern FP8."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        title="Megatron-Bridge MixedPrecisionConfig",
    )

    fp8_recipe: Fp8RecipeName = "tensorwise"
    fp8_param: bool | None = None
    fp4_param: bool | None = None
    fp4_param_gather: bool | None = None


SURFACE = MixedPrecisionConfig
FILE = MixedPrecisionConfig
