"""NeMo 2's FP8 surface: the arguments of `MegatronMixedPrecision` (and the `DtypeConfig` it
fills), which overwrite the TransformerConfig fields of the same name.

The fields are `TransformerConfig`'s with NeMo 2's defaults (history 1, `most_recent`, no
BF16 layers at either end) plus its own: `precision`, the deprecated `fp8_params` (an alias
of `fp8_param_gather`), `fp4`/`fp4_recipe`.  Serialized NeMo 2 model configs carry the same
fields.

Sources (NVIDIA/NeMo@8cfedd7203462cb251a914e700e5605444277561):
`nemo/lightning/pytorch/plugins/mixed_precision.py` (`MegatronMixedPrecision.__init__`,
`DtypeConfig`, `update_config_with_dtype_overrides` L290-311);
`nemo/collections/llm/recipes/precision/mixed_precision.py` (the presets).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from fp8lint.frameworks.megatron.surface import TransformerConfigFp8
from fp8lint.frameworks.shared.surface_types import Int


class MegatronMixedPrecision(TransformerConfigFp8):
    """NeMo 2's mixed-precision plugin arguments that concern FP8."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        title="NeMo 2 MegatronMixedPrecision",
    )

    precision: str | int | None = Field(None, description="bf16-mixed, 16-mixed, 32, ...")
    fp8_params: bool | None = Field(None, description="deprecated: use fp8_param_gather")
    fp4: str | None = None
    fp4_recipe: str | None = "nvfp4"
    num_layers_at_start_in_bf16: Int = 0
    num_layers_at_end_in_bf16: Int = 0


SURFACE = MegatronMixedPrecision
FILE = MegatronMixedPrecision
