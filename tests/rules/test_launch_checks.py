"""Megatron-LM's launch-time FP8/FP4 checks, one violating/passing twin per check.

Each pair differs in the one setting the check reads; the violating twin must give an error
at the flag or key that decides it, the passing one no error at all.  Ids are those of
`../shared/reference/upstream-2026.md` section 1 (Megatron-LM d98e8a64 / core_v0.19.0)."""

from __future__ import annotations

import pytest

from fp8lint.diagnostics import Severity
from tests.conftest import lint

RUN = "torchrun pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 8 "

# (id, code, violating command tail, passing command tail, the word the error points at)
TWINS = [
    ("P1", "FP8401", "--fp8-format HYBRID", "--fp8-format hybrid", "HYBRID"),
    (
        "P2",
        "FP8401",
        "--fp8-format e4m3 --fp8-recipe Delayed",
        "--fp8-format e4m3 --fp8-recipe delayed",
        "Delayed",
    ),
    (
        "P3",
        "FP8401",
        "--fp8-format e4m3 --fp8-amax-compute-algo MAX",
        "--fp8-format e4m3 --fp8-amax-compute-algo max",
        "MAX",
    ),
    (
        "P4",
        "FP8401",
        "--fp8-format e4m3 --fp8-amax-history-len 16.0",
        "--fp8-format e4m3 --fp8-amax-history-len 16",
        "16.0",
    ),
    ("P5", "FP8401", "--fp4-format E2M1", "--fp4-format e2m1", "E2M1"),
    (
        "P6",
        "FP8401",
        "--fp4-format e2m1 --fp4-recipe mxfp4",
        "--fp4-format e2m1 --fp4-recipe nvfp4",
        "mxfp4",
    ),
    ("P7", "FP8408", "--fp8-hybrid", "--fp8-format hybrid", "--fp8-hybrid"),
    (
        "P7b",
        "FP8408",
        "--fp8-format hybrid --tp-only-amax-red",
        "--fp8-format hybrid",
        "--tp-only-amax-red",
    ),
    (
        "P7c",
        "FP8408",
        "--fp8-format hybrid --fp8-dot-product-attention",
        "--fp8-format hybrid",
        "--fp8-dot-product-attention",
    ),
    (
        "V1",
        "FP8403",
        "--fp8-format hybrid --fp8-param-gather",
        "--fp8-format hybrid --fp8-param-gather --use-distributed-optimizer",
        "--fp8-param-gather",
    ),
    (
        "V1b",
        "FP8403",
        "--fp8-format hybrid --fp8-param-gather",
        "--fp8-format hybrid --fp8-param-gather --use-megatron-fsdp",
        "--fp8-param-gather",
    ),
    (
        "V2",
        "FP8403",
        "--fp8-format hybrid --fp4-format e2m1",
        "--fp4-format e2m1",
        "e2m1",
    ),
    (
        "V3",
        "FP8403",
        "--bf16 --fp4-param-gather",
        "--fp4-format e2m1 --fp4-param-gather",
        "--fp4-param-gather",
    ),
    (
        "V8",
        "FP8403",
        "--fp4-format e2m1 --tensor-model-parallel-size 2 --tensor-parallel-num-weight-shards 4",
        "--fp4-format e2m1 --tensor-model-parallel-size 2 --tensor-parallel-num-weight-shards 4"
        " --fp4-param-gather --use-distributed-optimizer",
        "4",
    ),
    (
        "V9",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --tensor-model-parallel-size 2"
        " --tensor-parallel-num-weight-shards 4",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --tensor-model-parallel-size 2"
        " --tensor-parallel-num-weight-shards 4 --fp8-param-gather --use-distributed-optimizer"
        " --reuse-grad-buf-for-mxfp8-param-ag",
        "4",
    ),
    (
        "V10",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --tensor-model-parallel-size 2"
        " --tensor-parallel-num-weight-shards 4 --fp8-param-gather --use-distributed-optimizer",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --tensor-model-parallel-size 2"
        " --tensor-parallel-num-weight-shards 4 --fp8-param-gather --use-distributed-optimizer"
        " --reuse-grad-buf-for-mxfp8-param-ag",
        "4",
    ),
    (
        "V11",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe tensorwise --fp8-param-gather"
        " --use-distributed-optimizer --optimizer-cpu-offload",
        "--fp8-format e4m3 --fp8-recipe delayed --fp8-param-gather"
        " --use-distributed-optimizer --optimizer-cpu-offload --fp8-amax-history-len 1024"
        " --fp8-amax-compute-algo max",
        "--optimizer-cpu-offload",
    ),
    (
        "C2",
        "FP8403",
        "--fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16"
        " --num-layers-at-start-in-bf16 3 --pipeline-model-parallel-size 2",
        "--fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16"
        " --num-layers-at-start-in-bf16 2 --pipeline-model-parallel-size 2",
        "3",
    ),
    (
        "C3",
        "FP8403",
        "--fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16"
        " --num-layers-at-end-in-bf16 5",
        "--fp8-format hybrid --fp8-recipe tensorwise --first-last-layers-bf16"
        " --num-layers-at-end-in-bf16 4",
        "5",
    ),
    (
        "C4",
        "FP8403",
        "--fp8-format hybrid --fp8-recipe custom",
        "--fp8-format hybrid --fp8-recipe custom --fp8-quantizer-factory pkg.mod.factory",
        "custom",
    ),
    (
        "C5",
        "FP8403",
        "--bf16 --fp8-param-gather --use-distributed-optimizer",
        "--bf16",
        "--fp8-param-gather",
    ),
    ("C6", "FP8403", "--bf16 --fp8-output-proj", "--bf16", "--fp8-output-proj"),
    (
        "C7",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe tensorwise --fp8-output-proj",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --fp8-output-proj",
        "--fp8-output-proj",
    ),
    (
        "C10",
        "FP8403",
        "--fp4-format e2m1 --fp4-recipe custom",
        "--fp4-format e2m1 --fp4-recipe custom --fp4-quantizer-factory pkg.mod.factory",
        "custom",
    ),
    (
        "C15",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe blockwise --num-experts 8 --moe-grouped-gemm"
        " --moe-single-grouped-weight",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --num-experts 8 --moe-grouped-gemm"
        " --moe-single-grouped-weight",
        "--moe-single-grouped-weight",
    ),
    (
        "C18",
        "FP8403",
        "--fp8-format e4m3 --recompute-granularity selective --recompute-modules core_attn"
        " layernorm",
        "--fp8-format e4m3 --recompute-granularity selective --recompute-modules core_attn",
        "core_attn",  # the value: every module word
    ),
    (
        "V6",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --inference-cuda-graph-scope block",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --inference-cuda-graph-scope block"
        " --transformer-impl inference_optimized",
        "block",
    ),
    (
        "V7",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe tensorwise --inference-cuda-graph-scope block"
        " --transformer-impl inference_optimized",
        "--fp8-format e4m3 --fp8-recipe mxfp8 --inference-cuda-graph-scope block"
        " --transformer-impl inference_optimized",
        "block",
    ),
    (
        "C22",
        "FP8403",
        "--bf16 --num-experts 8 --moe-token-dispatcher-type alltoall"
        " --moe-router-padding-for-quantization",
        "--bf16 --num-experts 8 --moe-token-dispatcher-type alltoall",
        "--moe-router-padding-for-quantization",
    ),
    (
        "C23",
        "FP8403",
        "--fp8-format e4m3 --fp8-recipe tensorwise --num-experts 8"
        " --moe-router-padding-for-quantization",
        "--fp8-format e4m3 --fp8-recipe tensorwise --num-experts 8"
        " --moe-token-dispatcher-type alltoall --moe-router-padding-for-quantization",
        "--moe-router-padding-for-quantization",
    ),
]


def _errors(text: str, filename: str = "run.sh") -> list[tuple[str, int, int]]:
    return [
        (d.code, d.line, d.column) for d in lint(filename, text) if d.severity is Severity.ERROR
    ]


@pytest.mark.parametrize(("check", "code", "bad", "good", "word"), TWINS, ids=[t[0] for t in TWINS])
def test_launch_twins(check: str, code: str, bad: str, good: str, word: str) -> None:
    text = RUN + bad + "\n"
    column = text.rindex(" " + word) + 2  # the last word so written
    assert (code, 1, column) in _errors(text), (check, _errors(text))
    assert _errors(RUN + good + "\n") == [], (check, _errors(RUN + good + "\n"))


def test_model_args_yaml_is_as_strict_as_the_command_line() -> None:
    """`MODEL_ARGS:` values reach argparse as their text: a YAML 16.0 is refused there."""
    bad = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 16.0\n"
    assert ("FP8401", 3, 27) in _errors(bad, "model_config.yaml")
    assert _errors(bad.replace("16.0", "16"), "model_config.yaml") == []


def test_a_transformer_config_mapping_takes_integral_floats_but_not_case_variants() -> None:
    """A TransformerConfig mapping is not argparse: 16.0 reaches TE, whose pydantic field
    takes it; the choices are still exact (get_fp8_recipe compares strings)."""
    base = "fp8: hybrid\nfp8_recipe: delayed\nfp8_amax_history_len: 16.0\nfp8_margin: 0\n"
    assert _errors(base, "tc.yaml") == []
    assert ("FP8401", 1, 6) in _errors(base.replace("hybrid", "Hybrid"), "tc.yaml")


def test_unread_words_keep_the_training_flags_unknown() -> None:
    """`$EXTRA_ARGS` may hold `--use-distributed-optimizer`: V1 stays silent."""
    text = RUN + "--fp8-format hybrid --fp8-param-gather $EXTRA_ARGS\n"
    assert _errors(text) == []
    assert _errors(text.replace(" $EXTRA_ARGS", "")) != []


def test_a_transformer_config_mapping_never_assumes_the_training_flags() -> None:
    """`fp8_param: true` in a mapping: the optimizer is configured elsewhere, so V1 is not
    judged; FP8 off is (C5)."""
    on = "fp8: hybrid\nfp8_recipe: tensorwise\nfp8_param: true\nfp8_margin: 0\n"
    assert _errors(on, "tc.yaml") == []
    off = "fp8: null\nfp8_recipe: tensorwise\nfp8_param: true\nfp8_margin: 0\n"
    assert ("FP8403", 3, 12) in _errors(off, "tc.yaml")


def test_megatron_deepspeed_keeps_its_legacy_flags() -> None:
    text = "deepspeed pretrain_gpt.py --deepspeed --deepspeed_config ds.json --fp8-hybrid\n"
    assert not [e for e in _errors(text) if e[0] == "FP8408"]


def test_negative_margin_is_an_error_only_where_a_recipe_reads_it() -> None:
    """FP8104 under delayed scaling; under tensorwise the margin is ignored (FP8402)."""
    delayed = RUN + "--fp8-format hybrid --fp8-margin -1\n"
    assert "FP8104" in {e[0] for e in _errors(delayed)}
    current = RUN + "--fp8-format hybrid --fp8-recipe tensorwise --fp8-margin -1\n"
    assert _errors(current) == []
    assert "FP8402" in {d.code for d in lint("run.sh", current)}


def test_empty_history_is_dormant_when_fp8_is_off() -> None:
    off = RUN + "--bf16 --fp8-amax-history-len 0\n"
    assert _errors(off) == []
    assert [d.code for d in lint("run.sh", off, select=["FP8405"])] == ["FP8405"]
    on = RUN + "--fp8-format hybrid --fp8-amax-history-len 0\n"
    assert "FP8401" in {e[0] for e in _errors(on)}


def test_a_negative_bf16_layer_count_needs_no_layer_count() -> None:
    """Megatron-Bridge Python: the model's layers are elsewhere, but -1 is below 0 anyway."""
    text = (
        "from megatron.bridge.training.mixed_precision import MixedPrecisionConfig\n"
        'cfg = MixedPrecisionConfig(fp8="hybrid", fp8_recipe="tensorwise",\n'
        "    first_last_layers_bf16=True, num_layers_at_start_in_bf16=-1)\n"
    )
    assert ("FP8403", 3, 62) in _errors(text, "recipe.py")  # at `-1`
    assert _errors(text.replace("=-1", "=2"), "recipe.py") == []


def test_a_train_py_may_define_its_own_fp8_flags() -> None:
    """Only Megatron's own `pretrain_*.py` programs are judged by Megatron's parser."""
    assert [e[0] for e in _errors("torchrun pretrain_gpt.py --fp8-foo 1\n")] == ["FP8408"]
    assert _errors("torchrun train.py --fp8-foo 1\n") == []


def test_a_switch_takes_no_value() -> None:
    """`action="store_true"`: a value after the flag is a word argparse cannot place.  In
    `MODEL_ARGS:`, `true` is the bare flag and `false` the word `false`."""
    yaml = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-output-proj: false\n"
    assert ("FP8401", 3, 22) in _errors(yaml, "model_config.yaml")
    assert "FP8401" not in {e[0] for e in _errors(yaml.replace("false", "true"), "m.yaml")}
    shell = RUN + "--fp8-format hybrid --fp8-recipe mxfp8 --fp8-output-proj true\n"
    assert ("FP8401", 1, shell.rindex("true") + 1) in _errors(shell)
    assert _errors(shell.replace(" true\n", "\n")) == []


def test_a_mapping_s_delayed_only_values_matter_only_to_the_delayed_recipe() -> None:
    """No argparse reads a TransformerConfig mapping: a bad margin reaches TE (and fails) only
    under the delayed recipe; the command line refuses it whatever the recipe."""
    mapping = "fp8: hybrid\nfp8_recipe: tensorwise\nfp8_margin: 0.5\nfp8_amax_history_len: 1\n"
    assert _errors(mapping, "tc.yaml") == []
    assert ("FP8401", 3, 13) in _errors(mapping.replace("tensorwise", "delayed"), "tc.yaml")
    off = mapping.replace("fp8: hybrid", "fp8: null").replace("tensorwise", "delayed")
    assert _errors(off, "tc.yaml") == []
    shell = RUN + "--fp8-format hybrid --fp8-recipe tensorwise --fp8-margin 0.5\n"
    assert "FP8401" in {e[0] for e in _errors(shell)}


def test_an_empty_format_in_a_mapping_is_fp8_off() -> None:
    """`if self.fp8:` is false for an empty string; argparse has no empty choice."""
    mapping = 'fp8: ""\nfp8_recipe: delayed\nfp8_margin: 0\n'
    assert _errors(mapping, "tc.yaml") == []
    assert "FP8401" in {e[0] for e in _errors(RUN + '--fp8-format ""\n')}


def test_a_mapping_reads_fp4_and_the_recipes_as_transformer_config_does() -> None:
    """`if self.fp4:` takes any non-empty string, get_fp4_recipe reads only the recipe; a
    recipe is compared (and refused) only when its format is on; `fp8: true` beside
    Megatron's `fp8_recipe` is refused by get_fp8_recipe."""
    assert _errors("fp4: nvfp4\nfp8: null\nfp8_recipe: delayed\nfp8_margin: 0\n", "tc.yaml") == []
    off = 'fp8: ""\nfp8_recipe: MXFP8\nfp8_margin: 0\n'
    assert _errors(off, "tc.yaml") == []
    assert ("FP8401", 2, 13) in _errors(off.replace('""', "hybrid"), "tc.yaml")
    true = "fp8: true\nfp8_recipe: tensorwise\nfp8_margin: 0\n"
    assert ("FP8401", 1, 6) in _errors(true, "tc.yaml")


def test_every_switch_fp8lint_reads_takes_no_value() -> None:
    """`--sequence-parallel: false` in `MODEL_ARGS:` is the word `false` after a switch."""
    yaml = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --sequence-parallel: false\n"
    assert ("FP8401", 3, 24) in _errors(yaml, "model_config.yaml")


def test_fp4_s_format_on_an_fp8_recipe_is_a_warning_not_an_error() -> None:
    """TE builds `DelayedScaling(fp8_format=Format.E2M1)` and stores E5M2 in both passes."""
    text = (
        "from transformer_engine.common.recipe import DelayedScaling, Format\n"
        "r = DelayedScaling(fp8_format=Format.E2M1)\n"
    )
    assert _errors(text, "recipe.py") == []
    (found,) = [d for d in lint("recipe.py", text) if d.code == "FP8404"]
    assert found.severity is Severity.WARNING and "E2M1" in found.message


def test_a_mapping_s_bf16_counts_matter_only_with_fp8_on() -> None:
    """`__post_init__` reads them under `if self.fp8:` only."""
    text = "fp8: null\nfp8_recipe: tensorwise\nfp8_margin: 0\nnum_layers_at_end_in_bf16: 1.5\n"
    assert _errors(text, "tc.yaml") == []
    assert "FP8401" in {e[0] for e in _errors(text.replace("null", "hybrid"), "tc.yaml")}


def test_te_s_other_switches_are_bools_as_pydantic_reads_them() -> None:
    """`disable_rht=2` is refused by NVFP4BlockScaling's pydantic field; `"yes"` is a bool."""
    text = (
        "from transformer_engine.common.recipe import NVFP4BlockScaling\n"
        "n = NVFP4BlockScaling(disable_rht=2)\n"
    )
    assert ("FP8401", 2, 35) in _errors(text, "recipe.py")
    assert _errors(text.replace("=2", '="yes"'), "recipe.py") == []
