"""verl's FP8 surface: `override_transformer_config` is handed to Megatron Core's
`TransformerConfig` unfiltered, so its keys, types and defaults are `TransformerConfig`'s
(margin 0, history 1, `most_recent`, recipe `delayed`).  verl's own trainer configs set no FP8
key there (verl-project/verl @1dda039b `verl/trainer/config/engine/megatron.yaml`, where the
dict holds only recompute keys and `attention_backend`; `verl/workers/config/engine.py`
`McoreEngineConfig.override_transformer_config`, applied in
`verl/workers/engine/megatron/transformer_impl.py`)."""

from __future__ import annotations

from fp8lint.frameworks.shared.tc_surface import TransformerConfigFp8, section


class VerlTransformerConfig(TransformerConfigFp8):
    """The FP8 fields of `actor_rollout_ref.actor.megatron.override_transformer_config`."""

    model_config = section("verl override_transformer_config FP8 keys")


SURFACE = VerlTransformerConfig
FILE = VerlTransformerConfig
