"""NeMo 1.x's FP8 surface: the `model:` section of a Megatron GPT config (and the
NeMo-Framework-Launcher training configs that copy it).

NeMo 1.x enables FP8 with three booleans, `model.fp8` plus `model.fp8_e4m3` or
`model.fp8_hybrid`, and needs `model.transformer_engine`; every other FP8 key is a
`TransformerConfig` field under its own name, copied on the Megatron-Core path.  NeMo's own
spellings: `fp8_params` for `fp8_param_gather`, `encoder_seq_length` for the sequence
length, `activations_checkpoint_granularity` for `recompute_granularity`.

Sources (NVIDIA/NeMo@8cfedd7203462cb251a914e700e5605444277561):
`examples/nlp/language_modeling/conf/megatron_gpt_config.yaml` L227-235 (`transformer_engine`,
`fp8`, `fp8_e4m3`, `fp8_hybrid`, `fp8_margin`, `fp8_interval`, `fp8_amax_history_len: 1024`,
`fp8_amax_compute_algo: max`, `reduce_amax`); `nemo/collections/nlp/models/language_modeling/
megatron_gpt_model.py` L2240-2247 (the format from the two booleans) and L612 (`fp8_params`);
`megatron_base_model.py` `build_transformer_config` (TransformerConfig fields by name).  The
`model:` keys are `shared.tc_surface.Nemo1Model` (NVIDIA's MLPerf scripts feed them too).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from fp8lint.frameworks.shared.tc_surface import Nemo1Model


class Nemo1Config(BaseModel):
    """A NeMo 1.x (or NeMo-Framework-Launcher) training config."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="NeMo 1.x config")

    model: Nemo1Model | None = None


SURFACE = Nemo1Model
FILE = Nemo1Config
