"""Targeted twins: for each launch-time check of /work/shared/reference/upstream-2026.md
section 1, a violating config and its passing twin (the same config with the one knob
fixed), in each surface where the check is reachable.

CLI knobs render as a launch script and a functional-test model_config.yaml; TC knobs as a
TransformerConfig mapping; TE sources as a recipe file.  Where one check has several ways to
go wrong (a wrong case, a wrong word, a fraction), each is a variant with its own twins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from oracle_cases import (
    CLI_SURFACES,
    DROP,
    MOE_FIELDS,
    MOE_FLAGS,
    TE_RECIPE,
    TRANSFORMER_CONFIG,
    Case,
    Knobs,
    render,
)


@dataclass(frozen=True)
class Twin:
    check: str
    label: str
    cli: tuple[Knobs, Knobs | None] | None = None  # (violating, passing) flags
    tc: tuple[Knobs, Knobs | None] | None = None  # TransformerConfig fields
    te: tuple[str, str | None] | None = None  # recipe statements
    why_no_passing: str = ""  # when a passing twin cannot be built here


# checks the catalogue marks as out of reach for a launch-time oracle
SKIPPED: Mapping[str, str] = {
    "V4": "not violable: needs TE < 2.7.0.dev0; the oracle runs TE 2.20.2",
    "V5": "environment only: FlashInfer's version",
    "C11": "inference only (inference_optimized MoE)",
    "C12": "not violable: dead code (fp8 is a format, never 'mxfp8')",
    "C13": "inference only (inference grouped-GEMM backend)",
    "C19": "not violable: TE version floors, all below 2.20.2",
}

HYB: Knobs = {"--fp8-format": "hybrid"}
E4M3: Knobs = {"--fp8-format": "e4m3"}
FP4: Knobs = {"--fp4-format": "e2m1"}
DISTOPT: Knobs = {"--use-distributed-optimizer": True}
TC_HYB: Knobs = {"fp8": "hybrid"}
TC_FP4: Knobs = {"fp4": "e2m1"}
FACTORY8 = "oracle_quantizers.fp8_factory"
FACTORY4 = "oracle_quantizers.fp4_factory"
GTP: Knobs = {"--tensor-parallel-num-weight-shards": 2}
GROUPED: Knobs = {**MOE_FLAGS, "--moe-grouped-gemm": True, "--moe-use-grouped-tensor": True}
TC_GROUPED: Knobs = {**MOE_FIELDS, "moe_grouped_gemm": True, "moe_use_grouped_tensor": True}
# a serialized config with pipeline parallelism names its pipeline dtype (a torch dtype
# there; TransformerConfig only asks that it is set)
TC_PP2: Knobs = {"pipeline_model_parallel_size": 2, "pipeline_dtype": "bfloat16"}
TC_PP4: Knobs = {"pipeline_model_parallel_size": 4, "pipeline_dtype": "bfloat16"}
# inference CUDA graphs per block need the local CUDA-graph implementation
GRAPH_BLOCK: Knobs = {"--cuda-graph-impl": "local", "--inference-cuda-graph-scope": "block"}
# what batch-invariant mode asks of attention before it looks at FP8
BATCH_INVARIANT: Knobs = {
    "--batch-invariant-mode": True,
    "--attention-backend": "flash",
    "--flash-attention-version": 3,
    "--attention-dropout": 0.0,
}
NCCLEP: Knobs = {
    **MOE_FLAGS,
    "--moe-token-dispatcher-type": "flex",
    "--moe-flex-dispatcher-backend": "ncclep",
}


def _cli(
    violating: Knobs, passing: Knobs | None, base: Knobs | None = None
) -> tuple[Knobs, Knobs | None]:
    b = base or {}
    return {**b, **violating}, (None if passing is None else {**b, **passing})


TWINS: tuple[Twin, ...] = (
    # -- argparse choices and types (P) -----------------------------------------------------
    Twin("P1", "--fp8-format HYBRID", cli=({"--fp8-format": "HYBRID"}, HYB)),
    Twin("P1", "--fp8-format E4M3", cli=({"--fp8-format": "E4M3"}, E4M3)),
    Twin("P1", "--fp8-format e5m2", cli=({"--fp8-format": "e5m2"}, E4M3)),
    Twin(
        "P2",
        "--fp8-recipe Delayed",
        cli=_cli({"--fp8-recipe": "Delayed"}, {"--fp8-recipe": "delayed"}, HYB),
    ),
    Twin(
        "P2",
        "--fp8-recipe current",
        cli=_cli({"--fp8-recipe": "current"}, {"--fp8-recipe": "tensorwise"}, HYB),
    ),
    Twin(
        "P2",
        "--fp8-recipe MXFP8",
        cli=_cli({"--fp8-recipe": "MXFP8"}, {"--fp8-recipe": "mxfp8"}, E4M3),
    ),
    Twin(
        "P3",
        "--fp8-amax-compute-algo MAX",
        cli=_cli({"--fp8-amax-compute-algo": "MAX"}, {"--fp8-amax-compute-algo": "max"}, HYB),
    ),
    Twin(
        "P3",
        "--fp8-amax-compute-algo mean",
        cli=_cli(
            {"--fp8-amax-compute-algo": "mean"}, {"--fp8-amax-compute-algo": "most_recent"}, HYB
        ),
    ),
    Twin("P4", "--fp8-margin 0.5", cli=_cli({"--fp8-margin": 0.5}, {"--fp8-margin": 1}, HYB)),
    Twin(
        "P4",
        "--fp8-amax-history-len 16.0",
        cli=_cli({"--fp8-amax-history-len": 16.0}, {"--fp8-amax-history-len": 16}, HYB),
    ),
    Twin("P4", "--fp8-interval 1.5", cli=_cli({"--fp8-interval": 1.5}, {"--fp8-interval": 1}, HYB)),
    Twin(
        "P4",
        "--num-layers-at-start-in-bf16 1.5",
        cli=_cli(
            {"--num-layers-at-start-in-bf16": 1.5},
            {"--num-layers-at-start-in-bf16": 1},
            {**HYB, "--fp8-recipe": "tensorwise", "--first-last-layers-bf16": True},
        ),
    ),
    Twin("P5", "--fp4-format E2M1", cli=({"--fp4-format": "E2M1"}, FP4)),
    Twin("P5", "--fp4-format nvfp4", cli=({"--fp4-format": "nvfp4"}, FP4)),
    Twin(
        "P6",
        "--fp4-recipe NVFP4",
        cli=_cli({"--fp4-recipe": "NVFP4"}, {"--fp4-recipe": "nvfp4"}, FP4),
    ),
    Twin(
        "P6",
        "--fp4-recipe mxfp4",
        cli=_cli({"--fp4-recipe": "mxfp4"}, {"--fp4-recipe": "nvfp4"}, FP4),
    ),
    Twin(
        "P7",
        "--fp8-dot-product-attention",
        cli=_cli({"--fp8-dot-product-attention": True}, {}, HYB),
    ),
    Twin(
        "P7", "--fp8-multi-head-attention", cli=_cli({"--fp8-multi-head-attention": True}, {}, HYB)
    ),
    Twin("P7", "--tp-only-amax-red", cli=_cli({"--tp-only-amax-red": True}, {}, HYB)),
    Twin("P7", "--fp8-hybrid", cli=({"--fp8-hybrid": True}, HYB)),
    Twin("P7", "--fp8-e4m3", cli=({"--fp8-e4m3": True}, E4M3)),
    # -- validate_args (V) --------------------------------------------------------------------
    Twin(
        "V1",
        "--fp8-param-gather without a distributed optimizer",
        cli=_cli({"--fp8-param-gather": True}, {"--fp8-param-gather": True, **DISTOPT}, HYB),
    ),
    Twin("V2", "--fp4-format with --fp8-format", cli=({**FP4, **E4M3}, FP4)),
    Twin(
        "V3",
        "--fp4-param-gather without --fp4-format",
        cli=_cli({"--fp4-param-gather": True}, {"--fp4-param-gather": True, **FP4}, DISTOPT),
    ),
    Twin(
        "V6",
        "fp8 + --inference-cuda-graph-scope block, transformer_engine impl",
        cli=({**E4M3, "--fp8-recipe": "mxfp8", **GRAPH_BLOCK}, None),
        why_no_passing="the fix (--transformer-impl inference_optimized with mxfp8) needs "
        "FlashInfer >= 0.6.4 (V5, environment)",
    ),
    Twin(
        "V7",
        "fp8 tensorwise + --inference-cuda-graph-scope block",
        cli=(
            {
                **E4M3,
                "--fp8-recipe": "tensorwise",
                **GRAPH_BLOCK,
                "--transformer-impl": "inference_optimized",
            },
            None,
        ),
        why_no_passing="the fix (mxfp8 with inference_optimized) needs FlashInfer >= 0.6.4 "
        "(V5, environment)",
    ),
    Twin(
        "V8",
        "GTP + --fp4-format without --fp4-param-gather",
        cli=_cli({}, {"--fp4-param-gather": True}, {**FP4, **GTP, **DISTOPT}),
    ),
    Twin(
        "V9",
        "GTP + mxfp8 without --fp8-param-gather",
        cli=_cli(
            {},
            {"--fp8-param-gather": True, "--reuse-grad-buf-for-mxfp8-param-ag": True},
            {**E4M3, "--fp8-recipe": "mxfp8", **GTP, **DISTOPT},
        ),
    ),
    Twin(
        "V10",
        "GTP + mxfp8 + --fp8-param-gather without --reuse-grad-buf-for-mxfp8-param-ag",
        cli=_cli(
            {},
            {"--reuse-grad-buf-for-mxfp8-param-ag": True},
            {**E4M3, "--fp8-recipe": "mxfp8", **GTP, **DISTOPT, "--fp8-param-gather": True},
        ),
    ),
    Twin(
        "V11",
        "--optimizer-cpu-offload + --fp8-param-gather with tensorwise",
        cli=_cli(
            {"--fp8-recipe": "tensorwise"},
            {"--fp8-recipe": "delayed"},
            {
                **HYB,
                **DISTOPT,
                "--fp8-param-gather": True,
                "--optimizer-cpu-offload": True,
                "--use-precision-aware-optimizer": True,
            },
        ),
    ),
    # -- TransformerConfig.__post_init__ (C) ----------------------------------------------------
    Twin(
        "C1",
        "--first-last-layers-bf16 with delayed",
        cli=_cli(
            {"--fp8-recipe": "delayed"},
            {"--fp8-recipe": "tensorwise"},
            {**HYB, "--first-last-layers-bf16": True},
        ),
        tc=(
            {**TC_HYB, "first_last_layers_bf16": True, "fp8_recipe": "delayed"},
            {**TC_HYB, "first_last_layers_bf16": True, "fp8_recipe": "tensorwise"},
        ),
    ),
    Twin(
        "C2",
        "--num-layers-at-start-in-bf16 5 > 4 layers",
        cli=_cli(
            {"--num-layers-at-start-in-bf16": 5},
            {"--num-layers-at-start-in-bf16": 4},
            {**HYB, "--fp8-recipe": "tensorwise", "--first-last-layers-bf16": True},
        ),
        tc=(
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                "num_layers_at_start_in_bf16": 5,
            },
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                "num_layers_at_start_in_bf16": 4,
            },
        ),
    ),
    Twin(
        "C2",
        "--num-layers-at-start-in-bf16 3 > 4 layers / PP 2",
        cli=_cli(
            {"--num-layers-at-start-in-bf16": 3},
            {"--num-layers-at-start-in-bf16": 2},
            {
                **HYB,
                "--fp8-recipe": "tensorwise",
                "--first-last-layers-bf16": True,
                "--pipeline-model-parallel-size": 2,
            },
        ),
        tc=(
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                **TC_PP2,
                "num_layers_at_start_in_bf16": 3,
            },
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                **TC_PP2,
                "num_layers_at_start_in_bf16": 2,
            },
        ),
    ),
    Twin(
        "C2",
        "--num-layers-at-start-in-bf16 -1",
        cli=_cli(
            {"--num-layers-at-start-in-bf16": -1},
            {"--num-layers-at-start-in-bf16": 0},
            {**HYB, "--fp8-recipe": "tensorwise", "--first-last-layers-bf16": True},
        ),
        tc=(
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                "num_layers_at_start_in_bf16": -1,
            },
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                "num_layers_at_start_in_bf16": 0,
            },
        ),
    ),
    Twin(
        "C3",
        "--num-layers-at-end-in-bf16 5 > 4 layers",
        cli=_cli(
            {"--num-layers-at-end-in-bf16": 5},
            {"--num-layers-at-end-in-bf16": 3},
            {
                **HYB,
                "--fp8-recipe": "mxfp8",
                "--fp8-format": "e4m3",
                "--first-last-layers-bf16": True,
            },
        ),
        tc=(
            {
                "fp8": "e4m3",
                "fp8_recipe": "mxfp8",
                "first_last_layers_bf16": True,
                "num_layers_at_end_in_bf16": 5,
            },
            {
                "fp8": "e4m3",
                "fp8_recipe": "mxfp8",
                "first_last_layers_bf16": True,
                "num_layers_at_end_in_bf16": 3,
            },
        ),
    ),
    Twin(
        "C3",
        "--num-layers-at-end-in-bf16 3 > 8 layers / PP 4",
        cli=_cli(
            {"--num-layers-at-end-in-bf16": 3},
            {"--num-layers-at-end-in-bf16": 2},
            {
                **HYB,
                "--fp8-recipe": "tensorwise",
                "--first-last-layers-bf16": True,
                "--num-layers": 8,
                "--pipeline-model-parallel-size": 4,
            },
        ),
        tc=(
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                "num_layers": 8,
                **TC_PP4,
                "num_layers_at_end_in_bf16": 3,
            },
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "first_last_layers_bf16": True,
                "num_layers": 8,
                **TC_PP4,
                "num_layers_at_end_in_bf16": 2,
            },
        ),
    ),
    Twin(
        "C4",
        "--fp8-recipe custom without --fp8-quantizer-factory",
        cli=_cli({}, {"--fp8-quantizer-factory": FACTORY8}, {**HYB, "--fp8-recipe": "custom"}),
        tc=(
            {**TC_HYB, "fp8_recipe": "custom"},
            {**TC_HYB, "fp8_recipe": "custom", "fp8_quantizer_factory": FACTORY8},
        ),
    ),
    Twin(
        "C5",
        "fp8 param gather without fp8",
        cli=_cli({}, HYB, {"--fp8-param-gather": True, **DISTOPT}),
        tc=({"fp8_param": True}, {**TC_HYB, "fp8_param": True}),
    ),
    Twin(
        "C6",
        "--fp8-output-proj without fp8",
        cli=_cli({}, {**E4M3, "--fp8-recipe": "mxfp8"}, {"--fp8-output-proj": True}),
        tc=(
            {"fp8_output_proj": True},
            {"fp8_output_proj": True, "fp8": "e4m3", "fp8_recipe": "mxfp8"},
        ),
    ),
    Twin(
        "C7",
        "--fp8-output-proj with tensorwise",
        cli=_cli(
            {"--fp8-recipe": "tensorwise"},
            {"--fp8-recipe": "mxfp8"},
            {**E4M3, "--fp8-output-proj": True},
        ),
        tc=(
            {"fp8": "e4m3", "fp8_recipe": "tensorwise", "fp8_output_proj": True},
            {"fp8": "e4m3", "fp8_recipe": "mxfp8", "fp8_output_proj": True},
        ),
    ),
    Twin("C8", "fp4_param without fp4", tc=({"fp4_param": True}, {**TC_FP4, "fp4_param": True})),
    Twin("C9", "fp4 with fp8", tc=({**TC_FP4, **TC_HYB}, TC_FP4)),
    Twin(
        "C10",
        "--fp4-recipe custom without --fp4-quantizer-factory",
        cli=_cli({}, {"--fp4-quantizer-factory": FACTORY4}, {**FP4, "--fp4-recipe": "custom"}),
        tc=(
            {**TC_FP4, "fp4_recipe": "custom"},
            {**TC_FP4, "fp4_recipe": "custom", "fp4_quantizer_factory": FACTORY4},
        ),
    ),
    Twin(
        "C15",
        "--moe-single-grouped-weight with tensorwise",
        cli=_cli(
            {"--fp8-recipe": "tensorwise"},
            {"--fp8-recipe": "mxfp8"},
            {**GROUPED, **E4M3, "--moe-single-grouped-weight": True},
        ),
        tc=(
            {
                **TC_GROUPED,
                "fp8": "e4m3",
                "fp8_recipe": "tensorwise",
                "moe_single_grouped_weight": True,
            },
            {**TC_GROUPED, "fp8": "e4m3", "fp8_recipe": "mxfp8", "moe_single_grouped_weight": True},
        ),
    ),
    Twin(
        "C15",
        "--moe-single-grouped-weight with fp4 custom",
        cli=_cli(
            {"--fp4-recipe": "custom", "--fp4-quantizer-factory": FACTORY4},
            {"--fp4-recipe": "nvfp4"},
            {
                **GROUPED,
                **FP4,
                "--fp4-param-gather": True,
                **DISTOPT,
                "--moe-single-grouped-weight": True,
            },
        ),
        tc=(
            {
                **TC_GROUPED,
                **TC_FP4,
                "fp4_param": True,
                "fp4_recipe": "custom",
                "fp4_quantizer_factory": FACTORY4,
                "moe_single_grouped_weight": True,
            },
            {
                **TC_GROUPED,
                **TC_FP4,
                "fp4_param": True,
                "fp4_recipe": "nvfp4",
                "moe_single_grouped_weight": True,
            },
        ),
    ),
    Twin(
        "C16",
        "--moe-single-grouped-weight + fp4 without --fp4-param-gather",
        cli=_cli(
            {},
            {"--fp4-param-gather": True},
            {**GROUPED, **FP4, **DISTOPT, "--moe-single-grouped-weight": True},
        ),
        tc=(
            {**TC_GROUPED, **TC_FP4, "moe_single_grouped_weight": True},
            {**TC_GROUPED, **TC_FP4, "moe_single_grouped_weight": True, "fp4_param": True},
        ),
    ),
    Twin(
        "C17",
        "--moe-dispatch-fwd-dtype mxfp8 without the op fuser",
        cli=_cli(
            {},
            {"--use-transformer-engine-op-fuser": True},
            {
                **NCCLEP,
                **E4M3,
                "--fp8-recipe": "mxfp8",
                "--moe-grouped-gemm": True,
                "--moe-dispatch-fwd-dtype": "mxfp8",
            },
        ),
        tc=(
            {
                **MOE_FIELDS,
                "moe_token_dispatcher_type": "flex",
                "moe_flex_dispatcher_backend": "ncclep",
                "fp8": "e4m3",
                "fp8_recipe": "mxfp8",
                "moe_grouped_gemm": True,
                "moe_dispatch_fwd_dtype": "mxfp8",
            },
            {
                **MOE_FIELDS,
                "moe_token_dispatcher_type": "flex",
                "moe_flex_dispatcher_backend": "ncclep",
                "fp8": "e4m3",
                "fp8_recipe": "mxfp8",
                "moe_grouped_gemm": True,
                "moe_dispatch_fwd_dtype": "mxfp8",
                "use_transformer_engine_op_fuser": True,
            },
        ),
    ),
    Twin(
        "C17",
        "--moe-combine-bwd-dtype mxfp8 without grouped GEMM",
        cli=_cli(
            {},
            {"--moe-grouped-gemm": True},
            {
                **NCCLEP,
                **E4M3,
                "--fp8-recipe": "mxfp8",
                "--use-transformer-engine-op-fuser": True,
                "--moe-combine-bwd-dtype": "mxfp8",
            },
        ),
    ),
    Twin(
        "C18",
        "selective recompute of layernorm with delayed",
        cli=_cli(
            {"--fp8-recipe": "delayed"},
            {"--fp8-recipe": "tensorwise"},
            {**HYB, "--recompute-granularity": "selective", "--recompute-modules": ["layernorm"]},
        ),
        tc=(
            {
                **TC_HYB,
                "fp8_recipe": "delayed",
                "recompute_granularity": "selective",
                "recompute_modules": ["layernorm"],
            },
            {
                **TC_HYB,
                "fp8_recipe": "tensorwise",
                "recompute_granularity": "selective",
                "recompute_modules": ["layernorm"],
            },
        ),
    ),
    Twin(
        "C18",
        "selective recompute of moe_act with delayed",
        cli=_cli(
            {"--fp8-recipe": "delayed"},
            {"--fp8-recipe": "mxfp8", **E4M3},
            {
                **HYB,
                **MOE_FLAGS,
                "--moe-grouped-gemm": True,
                "--recompute-granularity": "selective",
                "--recompute-modules": ["moe_act"],
            },
        ),
    ),
    Twin(
        "C22",
        "--moe-router-padding-for-quantization without fp8/fp4",
        cli=_cli({}, HYB, {**MOE_FLAGS, "--moe-router-padding-for-quantization": True}),
        tc=(
            {**MOE_FIELDS, "moe_router_padding_for_quantization": True},
            {**MOE_FIELDS, **TC_HYB, "moe_router_padding_for_quantization": True},
        ),
    ),
    Twin(
        "C22",
        "--moe-router-padding-for-fp8 without fp8/fp4",
        cli=_cli({}, FP4, {**MOE_FLAGS, "--moe-router-padding-for-fp8": True}),
    ),
    Twin(
        "C23",
        "router padding with the allgather dispatcher",
        cli=_cli(
            {"--moe-token-dispatcher-type": "allgather"},
            {"--moe-token-dispatcher-type": "alltoall"},
            {**MOE_FLAGS, **HYB, "--moe-router-padding-for-quantization": True},
        ),
        tc=(
            {
                **MOE_FIELDS,
                **TC_HYB,
                "moe_router_padding_for_quantization": True,
                "moe_token_dispatcher_type": "allgather",
            },
            {
                **MOE_FIELDS,
                **TC_HYB,
                "moe_router_padding_for_quantization": True,
                "moe_token_dispatcher_type": "alltoall",
            },
        ),
    ),
    Twin(
        "C24",
        "moe_preprocess CUDA graph + --moe-router-padding-for-fp8 (alltoall)",
        cli=_cli(
            {"--cuda-graph-modules": ["attn", "moe_router", "moe_preprocess"]},
            {"--cuda-graph-modules": ["attn", "moe_router"]},
            {
                **MOE_FLAGS,
                **HYB,
                "--fp8-recipe": "tensorwise",
                "--moe-router-padding-for-fp8": True,
                "--cuda-graph-impl": "transformer_engine",
            },
        ),
    ),
    Twin(
        "C26",
        "--batch-invariant-mode MoE with fp8",
        cli=_cli({}, {"--fp8-format": DROP}, {**MOE_FLAGS, **HYB, **BATCH_INVARIANT}),
    ),
    Twin(
        "C27",
        "activation_func_fp8_input_store without SwiGLU",
        tc=({"activation_func_fp8_input_store": True}, None),
        why_no_passing="the fix (activation_func silu + gated_linear_unit) needs a callable, "
        "which a YAML mapping cannot hold; and there is no CLI flag",
    ),
    # -- get_fp8_recipe / get_fp4_recipe on the TransformerConfig path (R) -------------------
    Twin("R1", "fp8: HYBRID", tc=({"fp8": "HYBRID"}, TC_HYB)),
    Twin("R1", "fp8: e5m2", tc=({"fp8": "e5m2"}, {"fp8": "e4m3"})),
    Twin(
        "R1",
        "fp8: true",
        tc=(
            {"fp8": True, "fp8_recipe": "tensorwise"},
            {"fp8": "hybrid", "fp8_recipe": "tensorwise"},
        ),
    ),
    Twin(
        "R2",
        "fp8_recipe: current",
        tc=({**TC_HYB, "fp8_recipe": "current"}, {**TC_HYB, "fp8_recipe": "tensorwise"}),
    ),
    Twin(
        "R2",
        "fp8_recipe: Delayed",
        tc=({**TC_HYB, "fp8_recipe": "Delayed"}, {**TC_HYB, "fp8_recipe": "delayed"}),
    ),
    Twin(
        "R4",
        "fp4_recipe: NVFP4",
        tc=({**TC_FP4, "fp4_recipe": "NVFP4"}, {**TC_FP4, "fp4_recipe": "nvfp4"}),
    ),
    Twin(
        "R4",
        "fp4_recipe: mxfp4",
        tc=({**TC_FP4, "fp4_recipe": "mxfp4"}, {**TC_FP4, "fp4_recipe": "nvfp4"}),
    ),
    # -- TE's recipe dataclasses --------------------------------------------------------------
    Twin(
        "TE-pyd",
        "margin 0.5",
        tc=({**TC_HYB, "fp8_margin": 0.5}, {**TC_HYB, "fp8_margin": 1}),
        te=("recipe = DelayedScaling(margin=0.5)", "recipe = DelayedScaling(margin=1)"),
    ),
    Twin(
        "TE-pyd",
        "amax_history_len 16.5",
        tc=({**TC_HYB, "fp8_amax_history_len": 16.5}, {**TC_HYB, "fp8_amax_history_len": 16}),
        te=(
            "recipe = DelayedScaling(amax_history_len=16.5)",
            "recipe = DelayedScaling(amax_history_len=16)",
        ),
    ),
    Twin(
        "TE-pyd",
        "amax_compute_algo MAX",
        tc=({**TC_HYB, "fp8_amax_compute_algo": "MAX"}, {**TC_HYB, "fp8_amax_compute_algo": "max"}),
        te=(
            'recipe = DelayedScaling(amax_compute_algo="MAX")',
            'recipe = DelayedScaling(amax_compute_algo="max")',
        ),
    ),
    Twin(
        "TE-pyd",
        "amax_compute_algo mean",
        te=(
            'recipe = DelayedScaling(amax_compute_algo="mean")',
            'recipe = DelayedScaling(amax_compute_algo="most_recent")',
        ),
    ),
    Twin(
        "TE-pyd",
        "fp8_dpa 'maybe'",
        te=(
            'recipe = Float8CurrentScaling(fp8_dpa="maybe")',
            "recipe = Float8CurrentScaling(fp8_dpa=True)",
        ),
    ),
    Twin(
        "TE-pyd",
        "reduce_amax 2",
        te=("recipe = DelayedScaling(reduce_amax=2)", "recipe = DelayedScaling(reduce_amax=False)"),
    ),
    Twin(
        "TE-pyd",
        "fp8_format 'hybrid' (a string)",
        te=(
            'recipe = DelayedScaling(fp8_format="hybrid")',
            "recipe = DelayedScaling(fp8_format=Format.HYBRID)",
        ),
    ),
    Twin(
        "TE264",
        "DelayedScaling E5M2",
        te=(
            "recipe = DelayedScaling(fp8_format=Format.E5M2)",
            "recipe = DelayedScaling(fp8_format=Format.HYBRID)",
        ),
    ),
    Twin(
        "TE264",
        "Float8CurrentScaling E5M2",
        te=(
            "recipe = Float8CurrentScaling(fp8_format=Format.E5M2)",
            "recipe = Float8CurrentScaling(fp8_format=Format.E4M3)",
        ),
    ),
    Twin(
        "TE264",
        "MXFP8BlockScaling E5M2",
        te=(
            "recipe = MXFP8BlockScaling(fp8_format=Format.E5M2)",
            "recipe = MXFP8BlockScaling(fp8_format=Format.E4M3)",
        ),
    ),
    Twin(
        "TE264",
        "Float8BlockScaling E5M2",
        te=(
            "recipe = Float8BlockScaling(fp8_format=Format.E5M2)",
            "recipe = Float8BlockScaling(fp8_format=Format.HYBRID)",
        ),
    ),
    Twin(
        "TE268",
        "DelayedScaling backward_override high_precision",
        te=(
            'recipe = DelayedScaling(backward_override="high_precision")',
            "recipe = DelayedScaling(backward_override=None)",
        ),
    ),
    Twin(
        "TE268",
        "Float8CurrentScaling backward_override fp32",
        te=(
            'recipe = Float8CurrentScaling(backward_override="fp32")',
            'recipe = Float8CurrentScaling(backward_override="dequantized")',
        ),
    ),
    Twin(
        "TE268",
        "MXFP8BlockScaling backward_override HIGH_PRECISION",
        te=(
            'recipe = MXFP8BlockScaling(backward_override="HIGH_PRECISION")',
            'recipe = MXFP8BlockScaling(backward_override="high_precision")',
        ),
    ),
    Twin(
        "TE268",
        "NVFP4BlockScaling backward_override dequantize",
        te=(
            'recipe = NVFP4BlockScaling(backward_override="dequantize")',
            'recipe = NVFP4BlockScaling(backward_override="dequantized")',
        ),
    ),
    Twin(
        "TE446",
        "Float8BlockScaling x_block_scaling_dim 3",
        te=(
            "recipe = Float8BlockScaling(x_block_scaling_dim=3)",
            "recipe = Float8BlockScaling(x_block_scaling_dim=1)",
        ),
    ),
    Twin(
        "TE446",
        "Float8BlockScaling w_block_scaling_dim 0",
        te=(
            "recipe = Float8BlockScaling(w_block_scaling_dim=0)",
            "recipe = Float8BlockScaling(w_block_scaling_dim=1)",
        ),
    ),
    Twin(
        "TE449",
        "Float8BlockScaling 2D x and 2D w",
        te=(
            "recipe = Float8BlockScaling(x_block_scaling_dim=2, w_block_scaling_dim=2)",
            "recipe = Float8BlockScaling(x_block_scaling_dim=2, w_block_scaling_dim=1)",
        ),
    ),
    Twin(
        "TE449",
        "Float8BlockScaling 2D w and 2D grad",
        te=(
            "recipe = Float8BlockScaling(grad_block_scaling_dim=2)",
            "recipe = Float8BlockScaling(grad_block_scaling_dim=1)",
        ),
    ),
    Twin(
        "TE458",
        "Float8BlockScaling fprop without split accumulator",
        te=(
            "recipe = Float8BlockScaling(fp8_gemm_fprop=MMParams(use_split_accumulator=False))",
            "recipe = Float8BlockScaling(fp8_gemm_fprop=MMParams(use_split_accumulator=True))",
        ),
    ),
    Twin(
        "TE458",
        "Float8BlockScaling wgrad without split accumulator",
        te=(
            "recipe = Float8BlockScaling(fp8_gemm_wgrad=MMParams(use_split_accumulator=False))",
            "recipe = Float8BlockScaling(fp8_gemm_wgrad=MMParams())",
        ),
    ),
    Twin(
        "TE461",
        "Float8BlockScaling fp8_dpa",
        te=(
            "recipe = Float8BlockScaling(fp8_dpa=True)",
            "recipe = Float8BlockScaling(fp8_dpa=False)",
        ),
    ),
    Twin(
        "TE461",
        "Float8BlockScaling fp8_mha",
        te=(
            "recipe = Float8BlockScaling(fp8_mha=True)",
            "recipe = Float8CurrentScaling(fp8_mha=True)",
        ),
    ),
    Twin(
        "TE577",
        "NVFP4BlockScaling fp4_format E4M3",
        te=(
            "recipe = NVFP4BlockScaling(fp4_format=Format.E4M3)",
            "recipe = NVFP4BlockScaling(fp4_format=Format.E2M1)",
        ),
    ),
    Twin(
        "TE577",
        "NVFP4BlockScaling fp8_format HYBRID",
        te=(
            "recipe = NVFP4BlockScaling(fp8_format=Format.HYBRID)",
            "recipe = NVFP4BlockScaling(fp8_format=Format.E4M3)",
        ),
    ),
    Twin(
        "TE582",
        "NVFP4BlockScaling nvfp4_4over6 both",
        te=(
            'recipe = NVFP4BlockScaling(nvfp4_4over6="both")',
            'recipe = NVFP4BlockScaling(nvfp4_4over6="weights")',
        ),
    ),
    Twin(
        "TE582",
        "NVFP4BlockScaling nvfp4_4over6_e4m3_use_256 yes",
        te=(
            'recipe = NVFP4BlockScaling(nvfp4_4over6_e4m3_use_256="yes")',
            'recipe = NVFP4BlockScaling(nvfp4_4over6_e4m3_use_256="none")',
        ),
    ),
    Twin(
        "TE582",
        "NVFP4BlockScaling nvfp4_4over6_err_mode mae",
        te=(
            'recipe = NVFP4BlockScaling(nvfp4_4over6_err_mode="mae")',
            'recipe = NVFP4BlockScaling(nvfp4_4over6_err_mode="MSE")',
        ),
    ),
    Twin(
        "TE706",
        "CustomRecipe quantization_alignment 0",
        te=(
            "recipe = CustomRecipe(qfactory=qfactory, quantization_alignment=0)",
            "recipe = CustomRecipe(qfactory=qfactory, quantization_alignment=32)",
        ),
    ),
)


def _slug(text: str) -> str:
    out = "".join(c if c.isalnum() else "-" for c in text.lower())
    return "-".join(part for part in out.split("-") if part)[:48]


def twin_cases() -> list[Case]:
    cases: list[Case] = []
    for n, twin in enumerate(TWINS, 1):
        rows: list[tuple[tuple[str, ...], tuple[object, object | None]]] = []
        if twin.cli:
            rows.append((CLI_SURFACES, twin.cli))
        if twin.tc:
            rows.append(((TRANSFORMER_CONFIG,), twin.tc))
        if twin.te:
            rows.append(((TE_RECIPE,), twin.te))
        for surfaces, (violating, passing) in rows:
            for kind, knobs in (("violating", violating), ("passing", passing)):
                if knobs is None:
                    continue
                for surface in surfaces:
                    case_id = f"{twin.check}-{n:03d}-{kind[0]}-{surface}"
                    title = f"oracle {twin.check} {kind}: {twin.label}"
                    assert isinstance(knobs, (dict, str))
                    cases.append(
                        Case(
                            id=f"{case_id}-{_slug(twin.label)}",
                            surface=surface,
                            text=render(surface, knobs, title),
                            check=twin.check,
                            twin=kind,
                            label=twin.label,
                            knobs=knobs if isinstance(knobs, dict) else {"source": knobs},
                        )
                    )
    return cases
