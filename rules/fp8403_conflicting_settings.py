"""FP8403: settings that contradict each other."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe, Setting
from fp8lint.rule import Example, Finding, Rule, targets, term, where
from fp8lint.rules.fp8201_per_tensor_outlier_layers import MEGATRON_STACKS
from fp8lint.settings import Targets


class ConflictingSettings(Rule):
    code = "FP8403"
    name = "conflicting-settings"
    severity = Severity.ERROR
    summary = "Settings Megatron or NeMo refuse together (fp8+fp4, param gather, BF16 layers, MoE)"
    valid = (
        Example(
            "ok.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_e4m3: false\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
        ),
        Example(
            "mx_proj.yaml",
            "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n  --fp8-output-proj: true\n",
        ),
    )
    invalid = (
        Example(
            "grpo.yaml",
            "policy:\n  megatron_cfg:\n    enabled: true\n"
            "    fp8_cfg: {enabled: true, fp8: e4m3, fp8_recipe: blockwise, fp8_param: false}\n"
            "    fp4_cfg: {enabled: true}\n",
            lines=(5,),
        ),
        Example(
            "both.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_e4m3: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
            lines=(5,),
        ),
        Example(
            "neither.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_e4m3: false\n  fp8_hybrid: false\n",
            lines=(3,),
        ),
        Example(
            "fp4.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp4-format: e2m1\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
            lines=(3,),
        ),
        Example(
            "proj.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --fp8-output-proj: true\n  --first-last-layers-bf16: true\n",
            lines=(4,),
        ),
        Example(
            "custom.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: custom\n",
            lines=(3,),
        ),
        Example(
            "gather.yaml",
            "MODEL_ARGS:\n  --bf16: true\n  --fp8-param-gather: true\n"
            "  --use-distributed-optimizer: true\n",
            lines=(3,),
        ),
        Example(
            "gather_ddp.sh",
            "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-param-gather\n",
            lines=(1,),
        ),
        Example(
            "bf16_stage.sh",
            "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-recipe tensorwise \\\n"
            "  --num-layers 4 --pipeline-model-parallel-size 2 \\\n"
            "  --first-last-layers-bf16 --num-layers-at-start-in-bf16 3\n",
            lines=(3,),
        ),
        Example(
            "padding.sh",
            "torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe mxfp8 --num-experts 8 \\\n"
            "  --moe-router-padding-for-quantization\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        target = targets(options)
        for n in site.notes:
            if n.kind == "conflict" and target.has(n.since):
                why = f"{n.why} ({target.assumed(n.since)})" if n.since else n.why
                yield Finding(span=n.span, message=n.message, note=why)
        if site.framework in MEGATRON_STACKS:
            yield from megatron_launch(site, targets(options))
        if not site.is_on:
            return
        # a TE NVFP4 recipe in an autocast (MaxText `te_nvfp4`) is FP4 alone, not FP8 as well
        if site.fp4.value and site.recipe.value is not Recipe.NVFP4:
            yield Finding(
                span=where(site.fp4, site),
                message=f"FP8 and FP4 are both on: {term(site.fmt)}, {term(site.fp4)}",
                note="Megatron accepts only one of them",
            )
        proj = site.fp8_output_proj
        if proj.value is True and site.recipe.known and site.recipe.value is not Recipe.MXFP8:
            yield Finding(
                span=where(proj, site),
                message=f"`{proj.key}` needs the mxfp8 recipe, not {term(site.recipe)}",
                note=(
                    "Megatron allows an FP8 output projection only with mxfp8; per-tensor "
                    "FP8 on the LM head is why it stays in BF16 by default"
                ),
            )
        if (
            site.recipe.value is Recipe.CUSTOM
            and site.framework in MEGATRON_STACKS
            and not site.quantizer_factory.written
        ):
            yield Finding(
                span=where(site.recipe, site),
                message=f"the custom recipe needs `--fp8-quantizer-factory`: {term(site.recipe)}",
                note="Megatron raises at launch without a quantizer factory's import path",
            )


# -- Megatron's launch checks (validate_args, TransformerConfig.__post_init__) ---------------
# NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553, the same at core_v0.19.0:
# megatron/training/arguments.py and megatron/core/transformer/transformer_config.py, at the
# lines each check names.  Each needs every value it reads to be known: a value an unread
# word, file or layer could set keeps it silent.


CORE = "megatron-core"


def _true(setting: Setting[Any]) -> bool:
    return setting.known and setting.value is True


def _false(setting: Setting[Any]) -> bool:
    return setting.known and setting.value is False


def _not_bf16(setting: Setting[Any]) -> bool:
    """A payload dtype written as something other than BF16 (`mxfp8`)."""
    return setting.written and setting.known and setting.value not in (None, "bf16")


def _fp4_on(site: Fp8Site) -> bool | None:
    """FP4 on (`--fp4-format` given), off (known absent), or unknown."""
    if not site.fp4.known:
        return None
    return bool(site.fp4.value)


def _gtp(site: Fp8Site) -> Setting[Any] | None:
    """The weight-shards setting that turns generalized TP on (more shards than TP ranks)."""
    for shards, tp in (
        (site.weight_shards, site.tensor_parallel),
        (site.expert_weight_shards, site.expert_tensor_parallel),
    ):
        if (
            shards.written
            and isinstance(shards.value, int)
            and isinstance(tp.value, int)
            and shards.value > tp.value
        ):
            return shards
    return None


def megatron_launch(site: Fp8Site, target: Targets) -> Iterator[Finding]:
    """The FP8/FP4 combinations Megatron refuses at start-up, each from the megatron-core
    release that added it (the earliest core_v* tag whose source has it); one only on the main
    branch is checked when the target is `main`."""
    off = site.enabled.value is False
    fp4 = _fp4_on(site)
    recipe = site.recipe.value if site.recipe.known else None
    gather = site.fp8_param_gather
    raises = f"Megatron raises at launch ({target.label(CORE)})"

    def since(release: str) -> bool:
        return target.at_least(CORE, release)

    # arguments.py L1095: FP8 weights need a sharded optimizer to all-gather them
    if (
        since("0.12")
        and _true(gather)
        and gather.written
        and _false(site.distributed_optimizer)
        and _false(site.fsdp)
    ):
        yield Finding(
            span=where(gather, site),
            message=f"`{gather.key}` needs `--use-distributed-optimizer` or FSDP",
            note=f"{raises} (validate_args): only a sharded optimizer all-gathers FP8 weights",
        )
    elif off and _true(gather) and gather.written:  # transformer_config.py L1566
        yield Finding(
            span=where(gather, site),
            message=f"`{gather.key}` keeps parameters in FP8, but FP8 is off",
            note=f"{raises} (FP8 is off: {site.enabled.describe()})",
        )
    # arguments.py L1104, transformer_config.py L1578
    fp4_gather = site.fp4_param_gather
    if since("0.15") and fp4 is False and _true(fp4_gather) and fp4_gather.written:
        yield Finding(
            span=where(fp4_gather, site),
            message=f"`{fp4_gather.key}` needs FP4 (`--fp4-format e2m1`), which is off",
            note=f"{raises}: FP4 parameters need the FP4 format",
        )
    # arguments.py L1108: NVFP4 needs TE 2.7 (only an older transformer-engine target)
    if fp4 and not target.at_least("transformer-engine", "2.7"):
        yield Finding(
            span=where(site.fp4, site),
            message=f"FP4 needs Transformer Engine 2.7 or newer: {term(site.fp4)}",
            note=f"{raises}; the target is {target.label('transformer-engine')}",
        )
    # transformer_config.py L1570: an FP8 output projection needs FP8 (L1573: and mxfp8)
    proj = site.fp8_output_proj
    if since("0.18") and off and _true(proj) and proj.written:
        yield Finding(
            span=where(proj, site),
            message=f"`{proj.key}` needs FP8, which is off",
            note=f"{raises}: the FP8 output projection is an FP8 feature",
        )
    # transformer_config.py L1586: the custom FP4 recipe needs its factory
    if (
        since("0.16")
        and fp4
        and site.fp4_recipe.value == "custom"
        and not site.fp4_quantizer_factory.written
    ):
        yield Finding(
            span=where(site.fp4_recipe, site),
            message="the custom FP4 recipe needs `--fp4-quantizer-factory`",
            note=f"{raises} without a quantizer factory's import path",
        )
    # transformer_config.py L1543-1559: BF16 layer counts fit one pipeline stage
    if since("0.12"):
        yield from _bf16_layer_counts(site, raises)
    # arguments.py L1516, L1576, L1583: generalized TP keeps no BF16 weight
    gtp = _gtp(site) if since("0.19") else None
    if gtp is not None:
        if fp4 and _false(fp4_gather):
            yield Finding(
                span=where(gtp, site),
                message=f"GTP ({term(gtp)}) with FP4 needs `--fp4-param-gather`",
                note=f"{raises}: GTP all-gathers the NVFP4 weights themselves",
            )
        if recipe is Recipe.MXFP8 and _false(gather):
            yield Finding(
                span=where(gtp, site),
                message=f"GTP ({term(gtp)}) with mxfp8 needs `--fp8-param-gather`",
                note=f"{raises}: GTP keeps no BF16 weight to re-quantize",
            )
        elif (
            recipe is Recipe.MXFP8
            and _true(gather)
            and _false(site.reuse_grad_buf_for_mxfp8_param_ag)
        ):
            yield Finding(
                span=where(gtp, site),
                message=f"GTP ({term(gtp)}) with mxfp8 needs `--reuse-grad-buf-for-mxfp8-param-ag`",
                note=f"{raises}: MXFP8 weights cannot be mapped into the parameter buffer",
            )
    # arguments.py L1889: the CPU-offloaded optimizer keeps FP8 weights only for delayed
    if (
        since("0.14")
        and _true(site.optimizer_cpu_offload)
        and _true(gather)
        and recipe is not None
        and recipe is not Recipe.DELAYED
    ):
        yield Finding(
            span=where(site.optimizer_cpu_offload, site),
            message=f"`{site.optimizer_cpu_offload.key}` with FP8 weights needs the delayed "
            f"recipe, not {term(site.recipe)}",
            note=f"{raises} (validate_args)",
        )
    yield from _moe_and_inference(site, since, raises)


def _moe_and_inference(
    site: Fp8Site, since: Callable[[str], bool], raises: str
) -> Iterator[Finding]:
    """Megatron's MoE and inference checks that read FP8/FP4 (the rest of `megatron_launch`,
    with its release gate and its note)."""
    on, off = site.enabled.value is True, site.enabled.value is False
    fp4 = _fp4_on(site)
    recipe = site.recipe.value if site.recipe.known else None
    fp4_gather = site.fp4_param_gather

    # transformer_config.py L1723: one grouped expert weight only for mxfp8 or nvfp4
    single = site.moe_single_grouped_weight
    if since("0.18") and _true(single) and single.written:
        if (on and recipe is not None and recipe is not Recipe.MXFP8) or (
            fp4 and site.fp4_recipe.known and site.fp4_recipe.value != "nvfp4"
        ):
            shown = term(site.recipe) if on else term(site.fp4_recipe)
            yield Finding(
                span=where(single, site),
                message=f"`{single.key}` needs mxfp8 or nvfp4, not {shown}",
                note=f"{raises}: grouped partial casts exist for those weights only",
            )
        elif since("main") and fp4 and _false(fp4_gather):  # transformer_config.py L1731
            yield Finding(
                span=where(single, site),
                message=f"`{single.key}` with FP4 needs `--fp4-param-gather`",
                note=f"{raises}: the split-quantize fallback is being removed",
            )
    # transformer_config.py L2003: delayed scaling cannot recompute layernorm / moe_act
    selective = site.recompute_granularity.value == "selective"
    if since("0.14") and on and recipe is Recipe.DELAYED and selective:
        modules = site.recompute_modules
        names = set(str(modules.value).split()) if modules.known and modules.value else set()
        hit = sorted(names & {"layernorm", "moe_act"})
        if hit:
            yield Finding(
                span=where(modules, site),
                message=f"delayed scaling cannot recompute {' or '.join(hit)}: {term(site.recipe)}",
                note=f"{raises}: recomputing them would replay the amax history",
            )
    # transformer_config.py L2651, L2656: routing padding to the quantized GEMM's alignment
    padding = site.moe_router_padding
    if since("0.16") and _true(padding) and padding.written:
        if off and fp4 is False:
            yield Finding(
                span=where(padding, site),
                message=f"`{padding.key}` needs FP8 or FP4, and both are off",
                note=f"{raises}: the padding is to a quantized GEMM's alignment",
            )
        dispatcher = site.moe_token_dispatcher
        if dispatcher.known and dispatcher.value in ("allgather", "alltoall_seq"):
            yield Finding(
                span=where(padding, site),
                message=f"`{padding.key}` does not work with the {dispatcher.value} "
                f"dispatcher: {term(dispatcher)}",
                note=f"{raises}; use the alltoall or flex dispatcher",
            )
    # transformer_config.py L1776-1790 (main only): MXFP8 all-to-all payloads need the
    # NCCL-EP flex dispatcher, and TE's op fuser with grouped GEMM to consume them
    quantized = [
        d for d in (site.moe_dispatch_fwd_dtype, site.moe_combine_bwd_dtype) if _not_bf16(d)
    ]
    if since("main") and quantized:
        payload = quantized[0]
        dispatcher, backend = site.moe_token_dispatcher, site.moe_flex_backend
        if (dispatcher.known and dispatcher.value != "flex") or (
            backend.known and backend.value != "ncclep"
        ):
            yield Finding(
                span=where(payload, site),
                message=f"{term(payload)} needs the flex dispatcher's ncclep backend",
                note=f"{raises}: only NCCL-EP sends quantized payloads",
            )
        elif _false(site.te_op_fuser) or _false(site.moe_grouped_gemm):
            yield Finding(
                span=where(payload, site),
                message=f"{term(payload)} needs `--use-transformer-engine-op-fuser` and "
                "`--moe-grouped-gemm`",
                note=f"{raises}: only the fused grouped GEMM reads the MXFP8 payload",
            )
    # arguments.py L1240-1245: FP8 with block-scoped inference CUDA graphs (inference only)
    scope = site.inference_graph_scope
    if since("0.19") and on and scope.written and scope.known and scope.value == "block":
        impl = site.transformer_impl
        if impl.known and impl.value != "inference_optimized":
            yield Finding(
                span=where(scope, site),
                message=f"FP8 with {term(scope)} needs `--transformer-impl inference_optimized`",
                note=f"{raises} (an inference setting)",
            )
        if recipe is not None and recipe is not Recipe.MXFP8:
            yield Finding(
                span=where(scope, site),
                message=f"FP8 with {term(scope)} needs the mxfp8 recipe, not {term(site.recipe)}",
                note=f"{raises} (an inference setting)",
            )
    # transformer_config.py L3261 (main only): batch-invariant MoE is BF16-only
    invariant = site.batch_invariant
    experts = site.num_experts.value
    if (
        since("main")
        and _true(invariant)
        and invariant.written
        and isinstance(experts, int)
        and experts > 0
        and (on or fp4)
    ):
        yield Finding(
            span=where(invariant, site),
            message=f"`{invariant.key}` with MoE needs BF16, not FP8 or FP4",
            note=f"{raises}: batch-invariant MoE has no quantized GEMM path",
        )


def _bf16_layer_counts(site: Fp8Site, raises: str) -> Iterator[Finding]:
    """transformer_config.py L1543-1559: with FP8 on and `first_last_layers_bf16`, each count
    lies in 0..num_layers // PP (one pipeline stage's layers); below 0 whatever the layers."""
    if not (site.is_on and _true(site.first_last_layers_bf16)):
        return
    layers, pp = site.num_layers.value, site.pipeline_parallel.value
    most: int | None = None
    if (
        site.num_layers.known
        and site.pipeline_parallel.known
        and isinstance(layers, int)
        and isinstance(pp, int)
        and pp >= 1
    ):
        most = layers // pp
    for count in (site.num_layers_at_start_in_bf16, site.num_layers_at_end_in_bf16):
        value = count.value
        if not count.known or not isinstance(value, int):
            continue
        if value < 0:
            message = f"{term(count)} is negative"
        elif most is not None and value > most:
            stage = f"{layers} layers / PP {pp}" if pp != 1 else f"{layers} layers"
            message = f"{term(count)} is outside 0..{most} ({stage})"
        else:
            continue
        yield Finding(
            span=where(count, site),
            message=message,
            note=f"{raises}: the BF16 layers must fit one pipeline stage",
        )
