"""NeMo-RL's FP8 surface: the `policy.megatron_cfg` keys it copies onto the Megatron
`TransformerConfig` of its model provider, with `TransformerConfig`'s defaults (margin 0,
history 1, `most_recent`) for every FP8 field it does not copy.

Sources (NVIDIA-NeMo/RL @7ea279ab): `nemo_rl/models/megatron/setup.py` (`fp8_cfg.fp8`,
`fp8_recipe`, `fp8_param` copied when `fp8_cfg.enabled`; the parallel sizes and
`sequence_parallel` as written).  The model's shape and MLP kind come from the Hugging Face
checkpoint: no default.
"""

from __future__ import annotations

from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.tc_surface import TransformerConfigFp8, section


class NemoRlMegatronConfig(TransformerConfigFp8):
    """The FP8 fields of `policy.megatron_cfg` (and its `fp8_cfg`)."""

    model_config = section("NeMo-RL policy.megatron_cfg FP8 keys")

    gated_linear_unit: SkipJsonSchema[bool | None] = None


SURFACE = NemoRlMegatronConfig
FILE = NemoRlMegatronConfig
