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
`megatron_base_model.py` `build_transformer_config` (TransformerConfig fields by name).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.megatron.surface import AmaxAlgoName, TransformerConfigFp8
from fp8lint.frameworks.shared.surface_types import HistoryLen, Int


class Nemo1Model(TransformerConfigFp8):
    """The FP8 keys of NeMo 1.x's `model:` section."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        title="NeMo 1.x model: FP8 keys",
    )

    fp8: bool | None = Field(False, description="turns FP8 on (with transformer_engine)")  # type: ignore[assignment]
    fp8_e4m3: bool | None = Field(False, description="E4M3 everywhere; wins over fp8_hybrid")
    fp8_hybrid: bool | None = Field(False, description="E4M3 forward, E5M2 gradients")
    transformer_engine: bool | None = False
    mcore_gpt: bool | None = None
    fp8_amax_history_len: HistoryLen = 1024
    fp8_amax_compute_algo: AmaxAlgoName = "max"
    reduce_amax: bool | None = Field(True, description="read on the legacy path only")
    fp8_param_gather: bool | None = Field(False, alias="fp8_params")
    seq_length: Int | None = Field(None, alias="encoder_seq_length")


class Nemo1Config(BaseModel):
    """A NeMo 1.x (or NeMo-Framework-Launcher) training config."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="NeMo 1.x config")

    model: Nemo1Model | None = None


SURFACE = Nemo1Model
FILE = Nemo1Config
