"""NeMo 2's FP8 surface: the arguments of `MegatronMixedPrecision` (and the `DtypeConfig` it
fills), which overwrite the TransformerConfig fields of the same name.

The fields are `TransformerConfig`'s with NeMo 2's defaults (history 1, `most_recent`, no
BF16 layers at either end) plus its own: `precision`, the deprecated `fp8_params` (an alias
of `fp8_param_gather`), `fp4`/`fp4_recipe`.  Serialized NeMo 2 model configs carry the same
fields.

Sources (NVIDIA/NeMo@8cfedd7203462cb251a914e700e5605444277561):
`nemo/lightning/pytorch/plugins/mixed_precision.py` (`MegatronMixedPrecision.__init__`,
`DtypeConfig`, `update_config_with_dtype_overrides` L290-311);
`nemo/collections/llm/recipes/precision/mixed_precision.py` (the presets).  The model is
`shared.tc_surface.MegatronMixedPrecision` (Megatron-Bridge's config extends it).
"""

from __future__ import annotations

from fp8lint.frameworks.shared.tc_surface import MegatronMixedPrecision

SURFACE = MegatronMixedPrecision
FILE = MegatronMixedPrecision
