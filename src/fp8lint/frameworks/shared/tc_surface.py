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

Choices are case-sensitive, as Megatron reads them: argparse's `choices` on the command line,
and `get_fp8_recipe` (`megatron/core/fp8_utils.py` L761-793), which compares `fp8` with
`"e4m3"`/`"hybrid"` and `fp8_recipe` with the `Fp8Recipe` members, for a `TransformerConfig`
built in code or from YAML; TE's `DelayedScaling` takes `amax_compute_algo` as a
`Literal["max", "most_recent"]` (`transformer_engine/common/recipe/__init__.py` L256 at
NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b).  Integers may be written as
integral floats or decimal strings in a mapping (the command line is stricter:
`megatron.surface`), and `fp8: false` is FP8 off.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.surface_types import Int

Fp8FormatName = Literal["e4m3", "hybrid"]
Fp8RecipeName = Literal["tensorwise", "delayed", "mxfp8", "blockwise", "custom"]
AmaxAlgoName = Literal["max", "most_recent"]
Fp4FormatName = Literal["e2m1"]
Fp4RecipeName = Literal["nvfp4", "custom"]

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

    fp8: Fp8FormatName | Literal[False, ""] | None = Field(
        None, description="FP8 format; null, false or an empty string: FP8 off"
    )
    fp8_recipe: Fp8RecipeName = "delayed"
    fp8_margin: Int = 0
    fp8_interval: Int = Field(1, description="ignored by Transformer Engine >= 1.8")
    fp8_amax_history_len: Int = 1
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
    fp8_quantizer_factory: str | None = None
    # FP4 (`fp4_param` is `--fp4-param-gather` on the command line, as `fp8_param` is
    # `--fp8-param-gather`); transformer_config.py L673-692
    # any non-empty string turns FP4 on (`if self.fp4:`; get_fp4_recipe reads the recipe
    # only): the command line is stricter (`megatron.surface`)
    fp4: str | None = None
    fp4_recipe: Fp4RecipeName | None = "nvfp4"
    fp4_param_gather: bool | None = False
    fp4_quantizer_factory: str | None = None
    reduce_amax: bool | None = None
    overlap_moe_expert_parallel_comm: bool | None = False
    sequence_parallel: bool | None = False
    # virtual pipeline stages and CUDA graphs (Megatron-LM@d98e8a64 model_parallel_config.py
    # L86; transformer_config.py L1049, L1075): no default here, so a stack that does not
    # write them leaves them unset (Megatron's command line gives "none")
    virtual_pipeline_model_parallel_size: Int | None = None
    cuda_graph_impl: str | None = None
    enable_cuda_graph: bool | None = None
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
    # generalized TP: the shards of each weight, `--tensor-parallel-num-weight-shards`
    # (`megatron/core/model_parallel_config.py` L58, L135; null: TP, no GTP)
    tensor_parallel_num_weight_shards: Int | None = None
    expert_tensor_parallel_num_weight_shards: Int | None = None
    # what the launch checks read besides FP8 (transformer_config.py L560, L771-776, L864,
    # L891, L1184): selective recompute's modules, MoE routing padding, dispatcher, grouped
    # weight, batch-invariant mode
    recompute_modules: SkipJsonSchema[list[str] | str | None] = None
    moe_router_padding_for_quantization: SkipJsonSchema[bool | None] = False
    moe_router_padding_for_fp8: SkipJsonSchema[bool | None] = False
    moe_token_dispatcher_type: SkipJsonSchema[str | None] = "allgather"
    moe_single_grouped_weight: SkipJsonSchema[bool | None] = False
    batch_invariant_mode: SkipJsonSchema[bool | None] = False
    # L997-1004, L898, L525, L850, L1314, L1108
    moe_dispatch_fwd_dtype: SkipJsonSchema[str | None] = "bf16"
    moe_combine_bwd_dtype: SkipJsonSchema[str | None] = "bf16"
    moe_flex_dispatcher_backend: SkipJsonSchema[str | None] = "deepep"
    use_transformer_engine_op_fuser: SkipJsonSchema[bool | None] = False
    moe_grouped_gemm: SkipJsonSchema[bool | None] = False
    transformer_impl: SkipJsonSchema[str | None] = "transformer_engine"
    inference_cuda_graph_scope: SkipJsonSchema[str | None] = None
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
    fp8_amax_history_len: Int = 1024
    fp8_amax_compute_algo: AmaxAlgoName = "max"
    reduce_amax: bool | None = Field(True, description="read on the legacy path only")
    fp8_param_gather: bool | None = Field(False, alias="fp8_params")
    seq_length: Int | None = Field(None, alias="encoder_seq_length")


SURFACE = TransformerConfigFp8
