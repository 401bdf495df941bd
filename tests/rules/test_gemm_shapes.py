"""FP8304 (GEMM shapes per rank) for every quantized format: a violating and a passing twin
per format and per GEMM kind (the hidden size, FFN / TP, the QKV output, the attention
projection input, tokens per rank, the MoE experts' FFN / expert TP), FP4-only Megatron
configs, and the cases where the size that matters is not certain (no finding)."""

from __future__ import annotations

from typing import Any

import pytest

from fp8lint.diagnostics import Diagnostic
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, Span
from fp8lint.rules.fp8304_fp8_gemm_shape import Fp8GemmShape

from ..conftest import lint


def args(**flags: object) -> str:
    """A Megatron `MODEL_ARGS:` block: the first flag is on line 2, the next on line 3..."""
    lines = [f"  --{k.replace('_', '-')}: {v}" for k, v in flags.items()]
    return "\n".join(["MODEL_ARGS:", *lines]) + "\n"


def shape(**flags: object) -> list[Diagnostic]:
    return lint("model_config.yaml", args(**flags), select=["FP8304"])


def one(**flags: object) -> Diagnostic:
    (d,) = shape(**flags)
    assert (d.code, d.severity.value) == ("FP8304", "error")
    return d


TENSORWISE = {"fp8_format": "hybrid", "fp8_recipe": "tensorwise"}
DELAYED = {"fp8_format": "hybrid", "fp8_recipe": "delayed"}
BLOCKWISE = {"fp8_format": "e4m3", "fp8_recipe": "blockwise"}
MXFP8 = {"fp8_format": "e4m3", "fp8_recipe": "mxfp8"}
CUSTOM = {"fp8_format": "e4m3", "fp8_recipe": "custom", "fp8_quantizer_factory": "pkg.make"}
NVFP4 = {"fp4_format": "e2m1", "fp4_recipe": "nvfp4"}
FP4_CUSTOM = {"fp4_format": "e2m1", "fp4_recipe": "custom", "fp4_quantizer_factory": "pkg.m"}


# ----------------------------------------------------------------- the hidden size (QKV/FC1 in)


@pytest.mark.parametrize("recipe", [TENSORWISE, DELAYED])
def test_per_tensor_hidden_size_needs_16(recipe: dict[str, str]) -> None:
    d = one(hidden_size=1000, num_attention_heads=8, tensor_model_parallel_size=2, **recipe)
    assert d.line == 2
    assert d.message.startswith(
        "per-tensor FP8 needs multiples of 16: hidden size (QKV/FC1 input) 1000 (+"
    )
    assert (
        shape(hidden_size=1024, num_attention_heads=8, tensor_model_parallel_size=2, **recipe) == []
    )


def test_nvfp4_fp4_only_config_is_checked() -> None:
    """`--fp4-format e2m1` with FP8 off: TE's NVFP4 quantizer needs both dims % 16."""
    d = one(hidden_size=1016, num_attention_heads=8, **NVFP4)
    assert d.line == 2
    assert d.message.startswith("NVFP4 needs multiples of 16: hidden size (QKV/FC1 input) 1016")
    assert "TE refuses it at the first quantized GEMM" in d.note
    assert shape(hidden_size=1024, num_attention_heads=8, **NVFP4) == []
    # the same shape with neither FP8 nor FP4 on: nothing runs quantized
    assert shape(hidden_size=1016, num_attention_heads=8) == []


def test_fp4_recipe_defaults_to_nvfp4() -> None:
    """Megatron's `--fp4-recipe` defaults to nvfp4 (the prefilter needs a word it knows, so
    the file also names `--fp8-param-gather`)."""
    d = one(hidden_size=1016, num_attention_heads=8, fp4_format="e2m1", fp8_param_gather="false")
    assert d.message.startswith("NVFP4 needs multiples of 16: hidden size")


# ------------------------------------------------------------- FFN / TP (FC2 input, FC1 output)


def test_per_tensor_ffn_shard_needs_16() -> None:
    base = {"hidden_size": 2048, "ffn_hidden_size": 5440, "num_attention_heads": 16}
    d = one(**base, tensor_model_parallel_size=8, **TENSORWISE)
    assert d.line == 2
    assert d.message == "per-tensor FP8 needs multiples of 16: ffn hidden size / TP = 5440/8 = 680"
    assert d.related and d.related[0].line == 3  # where the FFN size is written
    assert shape(**base, tensor_model_parallel_size=4, **TENSORWISE) == []


def test_mxfp8_ffn_shard_needs_32() -> None:
    base = {"hidden_size": 2048, "ffn_hidden_size": 5440, "num_attention_heads": 16}
    d = one(**base, tensor_model_parallel_size=4, **MXFP8)
    assert d.message == "MXFP8 needs multiples of 32: ffn hidden size / TP = 5440/4 = 1360"
    assert shape(**base, tensor_model_parallel_size=2, **MXFP8) == []  # 2720 = 85 x 32


def test_blockwise_needs_16_not_whole_128_blocks() -> None:
    """TE pads partial 128-blocks: 1360 (not a multiple of 128) runs; 680 fails the GEMM's 16."""
    base = {"hidden_size": 2048, "ffn_hidden_size": 5440, "num_attention_heads": 16}
    assert shape(**base, tensor_model_parallel_size=4, **BLOCKWISE) == []
    d = one(**base, tensor_model_parallel_size=8, **BLOCKWISE)
    assert d.message == "blockwise FP8 needs multiples of 16: ffn hidden size / TP = 5440/8 = 680"


def test_nvfp4_needs_16_not_32() -> None:
    """TE's NVFP4 quantizer asserts 16 per dim; shapes not aligned to 32 take its generic
    kernel, so the 1360 that MXFP8 refuses is fine, and 680 is not."""
    base = {"hidden_size": 2048, "ffn_hidden_size": 5440, "num_attention_heads": 16}
    assert shape(**base, tensor_model_parallel_size=4, **NVFP4) == []
    d = one(**base, tensor_model_parallel_size=8, **NVFP4)
    assert d.message == "NVFP4 needs multiples of 16: ffn hidden size / TP = 5440/8 = 680"


# ------------------------------------------------- the QKV output and the attention projection

# head dim 20, 8 query groups: QKV output per shard (640 + 2 x 8 x 20) / 8 = 120, a multiple of
# 8 but not of 16
GQA = {
    "hidden_size": 640,
    "num_attention_heads": 32,
    "group_query_attention": "true",
    "num_query_groups": 8,
}


def test_per_tensor_qkv_output_needs_16() -> None:
    """The backward data-gradient GEMM contracts over the weight's output dim: 16 for
    per-tensor FP8, while TE's forward assert alone (a custom recipe) needs 8."""
    d = one(**GQA, tensor_model_parallel_size=8, **TENSORWISE)
    assert d.message == "per-tensor FP8 needs multiples of 16: QKV output per shard 960/8 = 120"
    assert shape(**GQA, tensor_model_parallel_size=4, **TENSORWISE) == []  # 240
    assert shape(**GQA, tensor_model_parallel_size=8, **CUSTOM) == []


def test_attention_proj_input_needs_16() -> None:
    shape_ = {"hidden_size": 1056, "num_attention_heads": 24, "tensor_model_parallel_size": 4}
    d = one(**shape_, **CUSTOM)  # the custom recipe: TE's forward assert (8, 16) only
    assert d.message == (
        "the custom recipe needs multiples of 16: attention proj input per shard 1056/4 = 264"
    )
    d = one(**shape_, **TENSORWISE)
    assert d.message == (
        "per-tensor FP8 needs multiples of 16: QKV output per shard 3168/4 = 792 (+1 more)"
    )
    assert "attention proj input per shard 1056/4 = 264 (needs 16)" in d.note
    assert (
        shape(hidden_size=1024, num_attention_heads=16, tensor_model_parallel_size=4, **CUSTOM)
        == []
    )


# ------------------------------------------------------------------------------ tokens per rank


def test_tokens_per_rank_after_sequence_parallel() -> None:
    base = {"hidden_size": 1024, "num_attention_heads": 16, "tensor_model_parallel_size": 2}
    d = one(**base, seq_length=2056, micro_batch_size=1, sequence_parallel="true", **TENSORWISE)
    assert d.message == "per-tensor FP8 needs multiples of 8: tokens per rank 2056x1/2 = 1028"
    assert d.related and d.related[0].line == 5  # `--seq-length`
    assert shape(**base, seq_length=2056, micro_batch_size=1, **TENSORWISE) == []
    # context parallelism splits the sequence too
    d = one(**base, seq_length=2056, micro_batch_size=1, context_parallel_size=2, **TENSORWISE)
    assert d.message.endswith("tokens per rank 2056x1/2 = 1028")


def test_tokens_per_rank_by_format() -> None:
    base = {"hidden_size": 1024, "num_attention_heads": 16, "tensor_model_parallel_size": 2}
    sp = {"seq_length": 1040, "micro_batch_size": 1, "sequence_parallel": "true"}
    assert shape(**base, **sp, **TENSORWISE) == []  # 520 = 65 x 8
    d = one(**base, **sp, **MXFP8)
    assert d.message == "MXFP8 needs multiples of 32: tokens per rank 1040x1/2 = 520"
    # FP4: NVFP4 needs 16; a custom FP4 recipe only TE's forward assert (8)
    one_rank = {"hidden_size": 1024, "num_attention_heads": 16, "seq_length": 2056}
    d = one(**one_rank, micro_batch_size=1, **NVFP4)
    assert d.message == "NVFP4 needs multiples of 16: tokens per rank 2056x1/1 = 2056"
    assert shape(**one_rank, micro_batch_size=1, **FP4_CUSTOM) == []


# ------------------------------------------------------------------------------- MoE experts

MOE = {"hidden_size": 2048, "ffn_hidden_size": 5440, "num_attention_heads": 16}


def test_experts_use_their_own_ffn_size_over_expert_tp() -> None:
    """The dense FFN size (5440/4 = 1360, not a multiple of 32) is not the experts' GEMM."""
    experts = {"moe_ffn_hidden_size": 1408, "num_experts": 64, "tensor_model_parallel_size": 4}
    assert shape(**MOE, **experts, expert_tensor_parallel_size=1, **MXFP8) == []
    d = one(**MOE, **experts, expert_tensor_parallel_size=8, **MXFP8)
    assert d.line == 2
    assert d.message == "MXFP8 needs multiples of 32: expert FFN size / expert TP = 1408/8 = 176"
    assert d.related and d.related[0].line == 5  # `--moe-ffn-hidden-size`


def test_expert_tp_defaults_to_tp_and_expert_ffn_to_the_ffn_size() -> None:
    base = {**MOE, "num_experts": 8, "tensor_model_parallel_size": 4}
    d = one(**base, **MXFP8)  # 5440 / expert TP (= TP 4)
    assert d.message == "MXFP8 needs multiples of 32: expert FFN size / expert TP = 5440/4 = 1360"
    assert shape(**base, expert_tensor_parallel_size=1, **MXFP8) == []


@pytest.mark.parametrize(
    ("recipe", "multiple"), [(TENSORWISE, 16), (BLOCKWISE, 16), (NVFP4, 16), (MXFP8, 32)]
)
def test_expert_shard_per_format(recipe: dict[str, str], multiple: int) -> None:
    base = {**MOE, "num_experts": 8, "tensor_model_parallel_size": 2}
    # 1416 / 2 = 708: not a multiple of 16 (nor 32)
    d = one(**base, moe_ffn_hidden_size=1416, **recipe)
    assert d.message.endswith(f"{multiple}: expert FFN size / expert TP = 1416/2 = 708")
    assert shape(**base, moe_ffn_hidden_size=1408, **recipe) == []  # 704 = 22 x 32


def test_one_expert_checks_only_what_both_readings_agree_on() -> None:
    """`--num-experts 1`: NeMo 1.x means no MoE, Megatron a one-expert MoE layer.  With expert
    TP 1 the two readings differ (5440/4 or 5440/1): no finding; with expert TP = TP they agree."""
    base = {**MOE, "num_experts": 1, "tensor_model_parallel_size": 4}
    assert shape(**base, expert_tensor_parallel_size=1, **MXFP8) == []
    d = one(**base, **MXFP8)
    assert d.message == "MXFP8 needs multiples of 32: ffn hidden size / TP = 5440/4 = 1360"


# ----------------------------------------------------- sizes a check needs that are not known


def test_unknown_sizes_stay_silent() -> None:
    base = {"hidden_size": 2048, "ffn_hidden_size": 5440, "num_attention_heads": 16}
    text = args(**base, tensor_model_parallel_size="${TP}", **MXFP8)
    assert lint("model_config.yaml", text, select=["FP8304"]) == []  # TP unknown
    # a recipe the file does not resolve is still a TE recipe: TE's forward assert applies
    text = args(hidden_size=1000, num_attention_heads=8, fp8_format="hybrid", fp8_recipe="${R}")
    (d,) = lint("model_config.yaml", text, select=["FP8304"])
    assert d.message.startswith("any TE recipe needs multiples of 16: hidden size")
    # so is an unresolved FP4 recipe (nvfp4 or custom): 8 tokens per rank, not NVFP4's 16
    fp4 = {"fp4_format": "e2m1", "fp4_recipe": "${R}", "fp8_param_gather": "false"}
    one_rank = {"hidden_size": 1024, "num_attention_heads": 16, "micro_batch_size": 1}
    assert lint("m.yaml", args(**one_rank, seq_length=2056, **fp4), select=["FP8304"]) == []
    (d,) = lint("m.yaml", args(**one_rank, seq_length=2052, **fp4), select=["FP8304"])
    assert d.message == "any TE recipe needs multiples of 8: tokens per rank 2052x1/1 = 2052"
    # an expert FFN size the launcher fills in: the experts are not checked
    experts = {**base, "num_experts": 8, "tensor_model_parallel_size": 4}
    text = args(**experts, moe_ffn_hidden_size="${M}", **MXFP8)
    assert lint("model_config.yaml", text, select=["FP8304"]) == []
    assert len(lint("model_config.yaml", args(**experts, **MXFP8), select=["FP8304"])) == 1


# --------------------------------------------------------- torchtitan's NVFP4 converter (128)


def _setting(value: Any) -> Setting[Any]:
    return Setting[Any].model_construct(value=value, known=True, provenance="written")


def _titan(tp: int, recipe: Recipe = Recipe.NVFP4) -> Fp8Site:
    span = Span.model_construct(path="t.py", line=1, column=1, end_line=1, end_column=2)
    return Fp8Site.model_construct(
        path="t.py",
        framework=Framework.TORCHAO,
        family="torchtitan",
        kind="converter",
        span=span,
        enabled=_setting(True),
        recipe=_setting(recipe),
        hidden_size=_setting(4096),
        ffn_hidden_size=_setting(11008),
        num_attention_heads=_setting(32),
        num_query_groups=_setting(8),
        tensor_parallel=_setting(tp),
    )


def test_torchtitan_nvfp4_needs_128_per_rank() -> None:
    """No reader gives a torchtitan site its model shape yet; the rule is ready for one."""
    (f,) = Fp8GemmShape().check(_titan(4), {})
    assert (
        f.message
        == "torchtitan NVFP4 needs multiples of 128: ffn hidden size / TP = 11008/4 = 2752"
    )
    assert "torchtitan refuses the Linear" in f.note
    assert list(Fp8GemmShape().check(_titan(2), {})) == []  # 5504 = 43 x 128
    # torchao's own MXFP8 is not TE's: no TE table for it
    assert list(Fp8GemmShape().check(_titan(4, Recipe.MXFP8), {})) == []
