"""AMD Primus' FP8 surface: the Megatron arguments a `framework: megatron` module's
`overrides` write, with the defaults Primus' own module and model files give them.

Sources (AMD-AGI/Primus @fd1eeabb): `primus/configs/modules/megatron/trainer_base.yaml`
(`fp8: null`, `fp8_margin: 0`, `fp8_recipe: delayed`, `fp8_interval: 1`,
`fp8_amax_history_len: 1024`, `fp8_amax_compute_algo: max`, `fp8_wgrad: true`,
`fp8_param_gather: false`, `first_last_layers_bf16: false`, `num_layers_at_start_in_bf16: 1`,
`num_layers_at_end_in_bf16: 1`); `primus/configs/models/megatron/language_model.yaml`
(parallel sizes 1, `sequence_parallel: true`).  The MLP kind comes from the model file, which
is not read: no default.
"""

from __future__ import annotations

from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.surface_types import Int
from fp8lint.frameworks.shared.tc_surface import AmaxAlgoName, TransformerConfigFp8, section


class PrimusMegatronOverrides(TransformerConfigFp8):
    """The FP8 keys of `modules.<name>.overrides` for a Megatron module."""

    model_config = section("AMD Primus Megatron overrides")

    fp8_amax_history_len: Int = 1024
    fp8_amax_compute_algo: AmaxAlgoName = "max"
    sequence_parallel: bool | None = True
    gated_linear_unit: SkipJsonSchema[bool | None] = None


SURFACE = PrimusMegatronOverrides
FILE = PrimusMegatronOverrides
