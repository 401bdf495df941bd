"""Megatron Core's `TransformerConfig` FP8 fields as a surface model, and the stacks' models
that spell the same fields (NeMo 2 / Megatron-Bridge mixed precision, NeMo 1.x `model:`).

`TransformerConfigFp8` names the fields as `TransformerConfig` does; every stack built on it
(Megatron's flags and `--yaml-cfg`, NeMo 1.x, NeMo 2, Megatron-Bridge, ms-swift, AMD Primus,
NeMo-RL, NVIDIA's MLPerf scripts) validates against it or a subclass with its own defaults.

Sources (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553):
`megatron/core/transformer/transformer_config.py` L585-692 (`fp8:
Optional[Literal['e4m3','hybrid']]`, `fp8_recipe`, `fp8_margin`, `fp8_interval`,
`fp8_amax_history_len`, `fp8_amax_compute_algo: Literal['most_recent','max']`, `fp8_wgrad`,
`fp8_dot_product_attention`, `fp8_multi_head_attention`, `tp_only_amax_red`,
`first_last_layers_bf16`, `num_layers_at_{start,end}_in_bf16`; `gated_linear_unit`, default
False; `moe_ffn_hidden_size` L740, which `__post_init__` sets to `ffn_hidden_size` when unset,
L1685-1687); `megatron/core/enums.py` L12-19 (`Fp8Recipe`: tensorwise, delayed, mxfp8,
blockwise, custom).  NeMo (NVIDIA/NeMo@8cfedd7203462cb251a914e700e5605444277561):
`nemo/lightning/pytorch/plugins/mixed_precision.py` (`MegatronMixedPrecision.__init__`,
`DtypeConfig`); `examples/nlp/language_modeling/conf/megatron_gpt_config.yaml` L227-235 and
`megatron_gpt_model.py` L2240-2247, L612 (NeMo 1.x's FP8 keys).

Values are read as fp8lint always read them: case-insensitive choices, integers that may be
written as integral floats or decimal strings, `fp8: false` as FP8 off.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.surface_types import LOWER, HistoryLen, Int

Fp8FormatName = Annotated[Literal["e4m3", "hybrid"], LOWER]
Fp8RecipeName = Annotated[Literal["tensorwise", "delayed", "mxfp8", "blockwise", "custom"], LOWER]
AmaxAlgoName = Annotated[Literal["max", "most_recent"], LOWER]

SECTION = ConfigDict(defer_build=True, extra="allow", validate_by_name=True)


def section(title: str) -> ConfigDict:
    """A stack's section of TransformerConfig fields, keyed by name or by its alias."""
    return ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, validate_by_alias=True, title=title
    )


class TransformerConfigFp8(BaseModel):
    """The `TransformerConfig` fields that FP8 depends on: format, recipe, scaling, which layers
    stay in BF16, and the topology and shape the FP8 rules read."""

    model_config = SECTION

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
    moe_ffn_hidden_size: Int | None = None
    seq_length: Int | None = None
    micro_batch_size: Int | None = None
    world_size: Int | None = None
    # the MLP kind (read for the FFN size; not an FP8 key, so not in the exported schemas)
    gated_linear_unit: SkipJsonSchema[bool | None] = False
    # run length, for the severity policy (Megatron's `--train-iters`, `--finetune`;
    # megatron/training/arguments.py): not FP8 keys either
    train_iters: SkipJsonSchema[Int | None] = None
    global_batch_size: SkipJsonSchema[Int | None] = None
    finetune: SkipJsonSchema[bool | None] = False


class MegatronMixedPrecision(TransformerConfigFp8):
    """NeMo 2's mixed-precision plugin arguments that concern FP8."""

    model_config = section("NeMo 2 MegatronMixedPrecision")

    precision: str | int | None = Field(None, description="bf16-mixed, 16-mixed, 32, ...")
    fp8_params: bool | None = Field(None, description="deprecated: use fp8_param_gather")
    fp4: str | None = None
    fp4_recipe: str | None = "nvfp4"
    num_layers_at_start_in_bf16: Int = 0
    num_layers_at_end_in_bf16: Int = 0


class Nemo1Model(TransformerConfigFp8):
    """The FP8 keys of NeMo 1.x's `model:` section."""

    model_config = section("NeMo 1.x model: FP8 keys")

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
