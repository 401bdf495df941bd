"""Megatron-LM's FP8 surface: `TransformerConfig` fields and the command-line flags made from
them.

The fields are `TransformerConfig`'s (`shared.tc_surface.TransformerConfigFp8`, which every
stack built on it reuses, with the citations of its fields).  `MegatronArgs` is that surface
spelled as flags: `--` + the field with `_` turned into `-`, except where
`argparse_meta` renames it (`fp8` is `--fp8-format`, `fp4` is `--fp4-format`,
`num_moe_experts` is `--num-experts`, `gated_linear_unit` is `--swiglu`).

Sources (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553):
`megatron/training/argument_utils.py` L45-200 (flags generated from the fields) and
`megatron/training/arguments.py` (`--fp8-param-gather`; the legacy `--fp8-e4m3` /
`--fp8-hybrid`, replaced by `--fp8-format` in commit 1b7a3836).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.megatron_flags import flag_of
from fp8lint.frameworks.shared.tc_surface import TransformerConfigFp8


class MegatronArgs(TransformerConfigFp8):
    """Megatron's FP8 flags, as a functional-test `MODEL_ARGS:` block writes them."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        alias_generator=flag_of,
        field_title_generator=lambda name, _info: flag_of(name),
        title="Megatron-LM FP8 flags",
    )

    # legacy and negated spellings (read before validation; here for editors)
    fp8_e4m3: bool | None = Field(None, description="legacy: --fp8-format e4m3")
    fp8_hybrid: bool | None = Field(None, description="legacy: --fp8-format hybrid")
    no_fp8_wgrad: bool | None = None
    disable_fp8_wgrad: bool | None = None


class MegatronModelConfig(BaseModel):
    """A Megatron functional-test `model_config.yaml`: flags under `MODEL_ARGS:`."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="Megatron model_config.yaml")

    MODEL_ARGS: MegatronArgs | None = None


SURFACE = MegatronArgs
FILE = MegatronModelConfig
