"""FP8304: a per-rank GEMM dimension that the quantized (FP8 or FP4) kernels cannot take.

What each format needs of one rank's GEMM operands, as the frameworks assert it (TE at
NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b):

- every TE recipe: `assert_dim_for_fp8_exec` (`transformer_engine/pytorch/utils.py`
  L614-624) on the input and the weight of each `Linear` / `LayerNormLinear` / `LayerNormMLP`
  (`module/linear.py` L376, `layernorm_linear.py` L184, `layernorm_mlp.py` L356) whenever the
  module runs quantized, FP4 included: the product of the leading dims a multiple of 8, the last
  dim a multiple of 16.  The input is the rank's own shard, before any sequence-parallel
  all-gather; the weight is `(out, in)` of the TP shard.
- per-tensor and blockwise FP8 (tensor and block scaling): the cuBLAS call checks that the
  contraction dim is a multiple of 16 (`common/gemm/cublaslt_gemm.cu` L161-163, L209-210,
  L252-254, L295-296); in the backward data-gradient GEMM that dim is the weight's output dim,
  so every weight dim needs 16.  Blockwise scaling pads partial 128-blocks (ceil-divided scale
  shapes, `pytorch/csrc/quantizer.cpp` L1441-1493; TE tests 320x336 shapes,
  `tests/pytorch/test_float8_blockwise_gemm_exact.py` L325-327): it needs no 128.
- MXFP8: the quantizer refuses a tensor whose flattened dims are not both multiples of 32
  (`pytorch/csrc/quantizer.cpp` L1514-1516, L1862-1864).
- NVFP4 (TE): both flattened dims a multiple of 16 (`quantizer.cpp` L1982-1986, L2771-2776).
  The 32 of `common/cast/nvfp4/quantize_transpose_nvfp4.cuh` L1472-1475 is never reached with
  other shapes: the dispatcher takes that kernel only for shapes already aligned to 32 and
  sends the rest to a generic one (`common/cast/dispatch/quantize.cuh` L132-170).
- torchtitan's NVFP4 converter (pytorch/torchtitan@b5bcd76c66d0acb1a08b176d9639425bc55e0b2a,
  `torchtitan/components/quantization/nvfp4.py` L37-39, L97-110) refuses a Linear whose
  in/out features are not multiples of 128, and torchao's kernel does the same on each rank
  (pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94,
  `torchao/prototype/moe_training/nvfp4_training/nvfp4_linear.py` L177-181).

MoE experts (Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553): their FFN is
`moe_ffn_hidden_size` (`transformer_config.py` L740, unset: `ffn_hidden_size`, L1685-1687),
split over expert TP (`moe/experts.py` L213-240).  TE's `GroupedLinear` quantizes each expert's
weight on its own (`module/grouped_linear.py` L838-847) and runs one cuBLAS GEMM per expert,
so the weight checks above apply per expert.  The tokens an expert gets vary per step, and
Megatron pads them for FP8/FP4 (`experts.py` L736-744, `moe_utils.py` L1463-1480): no token
check for experts.  Which layers of a MoE model stay dense (`moe_layer_freq`) is not read, so
a MoE model's dense FFN size is not checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, Span
from fp8lint.rule import Example, Finding, FixPlan, Rule, where


@dataclass(frozen=True)
class Alignment:
    """What one format needs of a GEMM on one rank: `tokens`, the product of an activation's
    leading dims (None: not checked); `out`, a weight's output dim; `cols`, a weight's input
    dim, which is also every activation's last dim."""

    label: str
    tokens: int | None
    out: int
    cols: int
    refusal: str = "TE refuses it at the first quantized GEMM, on the GPU"


PER_TENSOR = Alignment("per-tensor FP8", 8, 16, 16)
# any TE recipe (a custom one, or one the file does not say): `assert_dim_for_fp8_exec` alone
TE_ANY = Alignment("any TE recipe", 8, 8, 16)
TE = {
    Recipe.DELAYED: PER_TENSOR,
    Recipe.TENSORWISE: PER_TENSOR,
    Recipe.BLOCKWISE: Alignment("blockwise FP8", 8, 16, 16),
    Recipe.MXFP8: Alignment("MXFP8", 32, 32, 32),
    Recipe.NVFP4: Alignment("NVFP4", 16, 16, 16),
    Recipe.CUSTOM: Alignment("the custom recipe", 8, 8, 16),
}
# torchtitan checks the weights; the token dim of its GEMMs depends on its own TP layout
TORCHTITAN_NVFP4 = Alignment(
    "torchtitan NVFP4", None, 128, 128, "torchtitan refuses the Linear when it builds the model"
)


def alignment(site: Fp8Site) -> Alignment | None:
    """The alignment the site's quantized GEMMs need; None where it is not known."""
    recipe = site.recipe
    if site.framework == Framework.TORCHAO:
        on = site.is_on and site.family == "torchtitan" and recipe.value is Recipe.NVFP4
        return TORCHTITAN_NVFP4 if on else None
    if site.is_on:
        if recipe.value is not None:
            return TE.get(recipe.value)
        return TE_ANY if recipe.written else None  # unresolved: still some TE recipe
    if site.enabled.value is not True and site.fp4.value:  # Megatron's FP4 (FP8 off)
        fp4 = site.fp4_recipe
        if fp4.value is None:
            return TE_ANY if fp4.written else TE[Recipe.NVFP4]  # unset: nvfp4
        return {"nvfp4": TE[Recipe.NVFP4], "custom": TE[Recipe.CUSTOM]}.get(fp4.value.lower())
    return None


@dataclass(frozen=True)
class Problem:
    what: str  # the dimension and how it is computed: `ffn hidden size / TP = 5440/4 = 1360`
    multiple: int
    setting: Setting[Any]  # the size it comes from


def _size(setting: Setting[int], absent: int | None) -> int | None:
    """A count's value; `absent` when the file leaves it to the framework; None: unknown."""
    if setting.value is not None:
        return setting.value
    return None if setting.written else absent


def ffn_shards(site: Fp8Site, tp: int | None) -> list[tuple[str, int, int, Setting[int]]]:
    """(label, size, divisor, setting) of the FFN GEMMs whose per-rank size is certain."""
    ffn, moe_ffn, experts = site.ffn_hidden_size, site.moe_ffn_hidden_size, site.num_experts
    dense = ("ffn hidden size / TP", ffn.value, tp, ffn) if ffn.value and tp else None
    moe_size = moe_ffn.value
    if moe_size is None and not moe_ffn.written:
        moe_size = ffn.value  # Megatron: the experts' FFN size defaults to the FFN size
    etp = _size(site.expert_tensor_parallel, tp)  # unset: TP
    expert = None
    if moe_size and etp:
        setting = moe_ffn if moe_ffn.value is not None else ffn
        expert = ("expert FFN size / expert TP", moe_size, etp, setting)
    if experts.value is None and (experts.known or not experts.written):
        return [dense] if dense else []  # no experts: a dense model
    if experts.value is not None and experts.value > 1:
        return [expert] if expert else []  # which layers stay dense is not read
    # unknown, or one expert (NeMo 1.x's "no MoE", Megatron's one-expert MoE): only a size
    # both readings agree on
    if dense and expert and dense[1:3] == expert[1:3]:
        return [dense]
    return []


def shard_problems(site: Fp8Site, align: Alignment) -> list[Problem]:
    hidden = site.hidden_size.value
    if hidden is None:
        return []
    tp = _size(site.tensor_parallel, 1)
    out: list[Problem] = []
    if hidden % align.cols:
        out.append(Problem(f"hidden size (QKV/FC1 input) {hidden}", align.cols, site.hidden_size))
    for label, size, div, setting in ffn_shards(site, tp):
        if size % div == 0 and (size // div) % align.cols:
            what = f"{label} = {size}/{div} = {size // div}"
            out.append(Problem(what, align.cols, setting))
    heads_s, groups_s = site.num_attention_heads, site.num_query_groups
    heads = heads_s.value
    groups = groups_s.value or (None if groups_s.written else heads)
    if tp and heads and groups and hidden % heads == 0 and heads % tp == 0:
        qkv = hidden + 2 * groups * (hidden // heads)
        if groups % tp == 0 and (qkv // tp) % align.out:
            what = (
                f"QKV output per shard {qkv}/{tp} = {qkv // tp}" if tp > 1 else f"QKV output {qkv}"
            )
            out.append(Problem(what, align.out, heads_s))
        if tp > 1 and (hidden // tp) % align.cols:  # at TP 1: the hidden size, above
            what = f"attention proj input per shard {hidden}/{tp} = {hidden // tp}"
            out.append(Problem(what, align.cols, site.hidden_size))
    seq, mbs = site.seq_length.value, site.micro_batch_size.value
    cp = _size(site.context_parallel, 1)
    sp = site.sequence_parallel.value
    if align.tokens and seq and mbs and cp and tp and (sp is not None or tp == 1):
        tokens = seq * mbs
        div = cp * (tp if sp else 1)
        if tokens % div == 0 and (tokens // div) % align.tokens:
            what = f"tokens per rank {seq}x{mbs}/{div} = {tokens // div}"
            out.append(Problem(what, align.tokens, site.seq_length))
    return out


def _related(problem: Problem, at: Span) -> tuple[tuple[Span, str], ...]:
    s = problem.setting
    if s.written and s.span is not None and s.span != at:
        return ((s.span, f"`{s.key}` is set here"),)
    return ()


class Fp8GemmShape(Rule):
    code = "FP8304"
    name = "fp8-gemm-shape"
    severity = Severity.ERROR
    fix = Applicability.DISPLAY_ONLY
    summary = "A per-rank GEMM dimension breaks the FP8/FP4 kernels' alignment"
    valid = (
        Example(
            "ok.yaml",
            "MODEL_ARGS:\n  --hidden-size: 4096\n  --num-attention-heads: 32\n"
            "  --tensor-model-parallel-size: 8\n  --fp8-format: hybrid\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
        ),
        # blockwise pads partial 128-blocks: 5440/4 = 1360 is fine (a multiple of 16)
        Example(
            "block.yaml",
            "MODEL_ARGS:\n  --hidden-size: 2048\n  --ffn-hidden-size: 5440\n"
            "  --num-attention-heads: 16\n  --tensor-model-parallel-size: 4\n"
            "  --fp8-format: e4m3\n  --fp8-recipe: blockwise\n",
        ),
        # MoE: the experts use --moe-ffn-hidden-size over expert TP, not the dense FFN over TP
        Example(
            "moe.yaml",
            "MODEL_ARGS:\n  --hidden-size: 2048\n  --ffn-hidden-size: 5440\n"
            "  --moe-ffn-hidden-size: 1408\n  --num-experts: 64\n"
            "  --num-attention-heads: 16\n  --tensor-model-parallel-size: 4\n"
            "  --expert-tensor-parallel-size: 1\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n",
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
        # FP4 only (FP8 off): TE's NVFP4 quantizer needs 16; 1016 is not
        Example(
            "fp4.yaml",
            "MODEL_ARGS:\n  --hidden-size: 1016\n  --num-attention-heads: 8\n"
            "  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        align = alignment(site)
        if align is None:
            return
        problems = shard_problems(site, align)
        if not problems:
            return
        first, rest = problems[0], problems[1:]
        at = where(site.hidden_size, site)
        more = f" (+{len(rest)} more)" if rest else ""
        shown = [f"{p.what} (needs {p.multiple})" for p in rest[:2]]
        if len(rest) > 2:
            shown.append(f"{len(rest) - 2} more")
        yield Finding(
            span=at,
            message=f"{align.label} needs multiples of {first.multiple}: {first.what}{more}",
            note="; ".join([*shown, align.refusal]),
            related=_related(first, at),
            fix=FixPlan(
                Applicability.DISPLAY_ONLY,
                f"choose hidden/FFN sizes and TP sizes so that every weight dim per rank is a "
                f"multiple of {align.cols}"
                + (f", and tokens per rank a multiple of {align.tokens}" if align.tokens else ""),
            ),
        )
