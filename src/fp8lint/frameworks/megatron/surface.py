"""Megatron-LM's FP8 surface: `TransformerConfig` fields and the command-line flags made from
them.

`TransformerConfigFp8` names the fields as `TransformerConfig` does; every stack built on it
(NeMo 1.x, NeMo 2, Megatron-Bridge, Megatron's `--yaml-cfg`) reuses it.  `MegatronArgs` is
the same surface spelled as flags: `--` + the field with `_` turned into `-`, except where
`argparse_meta` renames it (`fp8` is `--fp8-format`, `fp4` is `--fp4-format`,
`num_moe_experts` is `--num-experts`, `gated_linear_unit` is `--swiglu`).

Sources (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553):
`megatron/core/transformer/transformer_config.py` L585-692 (`fp8:
Optional[Literal['e4m3','hybrid']]`, `fp8_recipe`, `fp8_margin`, `fp8_interval`,
`fp8_amax_history_len`, `fp8_amax_compute_algo: Literal['most_recent','max']`, `fp8_wgrad`,
`fp8_dot_product_attention`, `fp8_multi_head_attention`, `tp_only_amax_red`,
`first_last_layers_bf16`, `num_layers_at_{start,end}_in_bf16`); `megatron/core/enums.py`
L12-19 (`Fp8Recipe`: tensorwise, delayed, mxfp8, blockwise, custom);
`megatron/training/argument_utils.py` L45-200 (flags generated from the fields) and
`megatron/training/arguments.py` (`--fp8-param-gather`; the legacy `--fp8-e4m3` /
`--fp8-hybrid`, replaced by `--fp8-format` in commit 1b7a3836).

Values are read as fp8lint always read them: case-insensitive choices, integers that may be
written as integral floats or decimal strings, `fp8: false` as FP8 off.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.surface_types import LOWER, HistoryLen, Int

Fp8FormatName = Annotated[Literal["e4m3", "hybrid"], LOWER]
Fp8RecipeName = Annotated[Literal["tensorwise", "delayed", "mxfp8", "blockwise", "custom"], LOWER]
AmaxAlgoName = Annotated[Literal["max", "most_recent"], LOWER]

_SECTION = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)


class TransformerConfigFp8(BaseModel):
    """The `TransformerConfig` fields that FP8 depends on: format, recipe, scaling, which layers
    stay in BF16, and the topology and shape the FP8 rules read."""

    model_config = _SECTION

    fp8: Fp8FormatName | Literal[False] | None = Field(
        None, description="FP8 format; any value but null turns FP8 on"
    )
    fp8_recipe: Fp8RecipeName = "delayed"
    fp8_margin: Int = 0
    fp8_interval: Int = Field(1, description="ignored by Transformer Engine >= 1.8")
    fp8_amax_history_len: HistoryLen = 1
    fp8_amax_compute_algo: AmaxAlgoName = "most_recent"
    fp8_wgrad: bool | None = True
    fp8_output_proj: bool | None = False
    fp8_dot_product_attention: bool | None = False
    fp8_multi_head_attention: bool | None = False
    tp_only_amax_red: bool | None = False
    first_last_layers_bf16: bool | None = False
    num_layers_at_start_in_bf16: Int = 1
    num_layers_at_end_in_bf16: Int = 1
    fp8_param_gather: bool | None = False
    reduce_amax: bool | None = None
    overlap_moe_expert_parallel_comm: bool | None = False
    sequence_parallel: bool | None = False
    # topology and shape (null: derived or left to the framework)
    tensor_model_parallel_size: Int | None = 1
    pipeline_model_parallel_size: Int | None = 1
    context_parallel_size: Int | None = 1
    expert_model_parallel_size: Int | None = 1
    expert_tensor_parallel_size: Int | None = None
    hidden_size: Int | None = None
    ffn_hidden_size: Int | None = None
    num_attention_heads: Int | None = None
    num_query_groups: Int | None = None
    num_layers: Int | None = None
    num_moe_experts: Int | None = None
    seq_length: Int | None = None
    micro_batch_size: Int | None = None
    world_size: Int | None = None


_RENAMED_FLAGS = {
    "fp8": "--fp8-format",
    "fp4": "--fp4-format",
    "num_moe_experts": "--num-experts",
    "gated_linear_unit": "--swiglu",
}


def flag_of(name: str) -> str:
    """How Megatron's command line spells a `TransformerConfig` field."""
    return _RENAMED_FLAGS.get(name, "--" + name.replace("_", "-"))


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
