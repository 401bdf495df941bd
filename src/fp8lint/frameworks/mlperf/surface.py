"""NVIDIA MLPerf config scripts' FP8 surface: the NeMo 1.x `model:` keys their variables feed
(`shared.tc_surface.Nemo1Model`), with Megatron Core's defaults where neither the script nor
the implementation's YAML fallback gives a value (the fallbacks are per implementation:
`reader.py` cites them).

Sources: NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553
`megatron/core/transformer/transformer_config.py` (history 1, `most_recent`);
mlcommons/training_results_v4.0 @62f111b7 and training_results_v3.1 @f33f9444 (the YAML
bindings).  The model's shape and MLP kind come from the checkpoint or base YAML: no default.
"""

from __future__ import annotations

from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.surface_types import Int
from fp8lint.frameworks.shared.tc_surface import AmaxAlgoName, Nemo1Model, section


class MlperfModelKeys(Nemo1Model):
    """The NeMo 1.x keys an MLPerf `config_*.sh` sets through its variables."""

    model_config = section("NVIDIA MLPerf NeMo 1.x model keys")

    fp8_amax_history_len: Int = 1
    fp8_amax_compute_algo: AmaxAlgoName = "most_recent"
    reduce_amax: bool | None = None
    gated_linear_unit: SkipJsonSchema[bool | None] = None


SURFACE = MlperfModelKeys
FILE = MlperfModelKeys
