"""FP8304: a per-TP-shard GEMM dimension that FP8 kernels cannot take."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, FixPlan, Rule, where

# (leading-dims multiple, last-dim multiple) per recipe: TE `assert_dim_for_fp8_exec` (8, 16),
# MXFP8 blocks of 32, Float8BlockScaling blocks of 128, NVFP4 16
ALIGN = {
    Recipe.DELAYED: (8, 16),
    Recipe.TENSORWISE: (8, 16),
    Recipe.MXFP8: (32, 32),
    Recipe.BLOCKWISE: (128, 128),
    Recipe.NVFP4: (16, 16),
}


def shard_problems(site: Fp8Site) -> list[str]:
    recipe = site.recipe.value
    hidden, heads = site.hidden_size.value, site.num_attention_heads.value
    tp = site.tensor_parallel.value or 1
    if recipe not in ALIGN or hidden is None:
        return []
    lead, last = ALIGN[recipe]
    out: list[str] = []
    if hidden % last:
        out.append(f"hidden size {hidden} (QKV/FC1 input) is not a multiple of {last}")
    ffn = site.ffn_hidden_size.value
    if ffn is not None and ffn % tp == 0:
        shard = ffn // tp
        if shard % last:
            out.append(f"ffn hidden size / TP = {ffn}/{tp} = {shard} is not a multiple of {last}")
        width = 2 * shard if site.gated_mlp.value else shard
        if width % lead and shard % last == 0:
            out.append(f"FC1 output per shard {width} is not a multiple of {lead}")
    if heads and hidden % heads == 0 and heads % tp == 0:
        kv = hidden // heads
        groups = site.num_query_groups.value or heads
        qkv = hidden + 2 * groups * kv
        if groups % tp == 0 and (qkv // tp) % lead:
            out.append(f"QKV output per shard {qkv}/{tp} = {qkv // tp} is not a multiple of {lead}")
        if (hidden // tp) % last:
            out.append(
                f"attention proj input per shard {hidden}/{tp} = {hidden // tp} is not a "
                f"multiple of {last}"
            )
    seq, mbs = site.seq_length.value, site.micro_batch_size.value
    if seq is not None and mbs is not None:
        tokens = seq * mbs
        cp = site.context_parallel.value or 1
        div = cp * (tp if site.sequence_parallel.value else 1)
        if tokens % div == 0 and (tokens // div) % lead:
            out.append(
                f"tokens per rank {seq}x{mbs}/{div} = {tokens // div} is not a multiple of {lead}"
            )
    return out


class Fp8GemmShape(Rule):
    code = "FP8304"
    name = "fp8-gemm-shape"
    severity = Severity.ERROR
    fix = Applicability.DISPLAY_ONLY
    summary = "A per-TP-shard GEMM dimension breaks FP8 alignment"
    valid = (
        Example(
            "ok.yaml",
            "MODEL_ARGS:\n  --hidden-size: 4096\n  --num-attention-heads: 32\n"
            "  --tensor-model-parallel-size: 8\n  --fp8-format: hybrid\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
        ),
    )
    invalid = (
        Example(
            "bad.yaml",
            "MODEL_ARGS:\n  --hidden-size: 1000\n  --num-attention-heads: 8\n"
            "  --tensor-model-parallel-size: 2\n  --fp8-format: hybrid\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
            lines=(2,),
        ),
        Example(
            "mx.yaml",
            "MODEL_ARGS:\n  --hidden-size: 2048\n  --ffn-hidden-size: 5440\n"
            "  --num-attention-heads: 16\n  --tensor-model-parallel-size: 4\n"
            "  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on:
            return
        problems = shard_problems(site)
        if not problems:
            return
        recipe = site.recipe.value
        assert recipe is not None
        lead, last = ALIGN[recipe]
        yield Finding(
            span=where(site.hidden_size, site),
            message=(
                f"FP8 GEMM shape not aligned for {recipe.value}: {problems[0]}"
                + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "")
            ),
            note=(
                "; ".join([*problems[1:], ""])
                + f"{recipe.value} needs multiples of {lead} (leading dims) and {last} (last); "
                "TE fails at the first step"
            ),
            fix=FixPlan(
                Applicability.DISPLAY_ONLY,
                f"choose hidden/ffn sizes and a TP size so that every per-shard dimension is a "
                f"multiple of {last}, and tokens per rank a multiple of {lead}",
            ),
        )
