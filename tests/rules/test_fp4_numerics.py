"""FP8703 (NVFP4 4over6 / row-scaled activations with RHT on: TE refuses) and FP8704 (FP4 BF16
layer counts out of range, which Megatron checks only under FP8).  The configurations are
written in the shape of launch scripts, Megatron `MODEL_ARGS` and NeMo-RL recipes."""

from __future__ import annotations

from pathlib import Path

from fp8lint.diagnostics import Severity
from fp8lint.settings import RunSettings, Selection, Targets

from .fixing import findings

LAUNCH = "torchrun pretrain_gpt.py --fp4-format e2m1 --fp4-recipe nvfp4 --num-layers 32\n"
RHT_ON = "export NVTE_NVFP4_DISABLE_RHT=0\n"
BOTH = RHT_ON + "export NVTE_NVFP4_4OVER6=all\nexport NVTE_NVFP4_ROW_SCALED_ACTIVATION=1\n"


def found(name: str, text: str, code: str, **versions: str) -> list[tuple[int, Severity, str]]:
    settings = RunSettings(
        selection=Selection(select=(code, "FP8403")),
        targets=Targets({k.replace("_", "-"): v for k, v in versions.items()}),
    )
    return [(d.line, d.severity, d.code) for d in findings(name, text, settings)]


# ------------------------------------------------------------------------------ FP8703


def test_both_refusals_are_errors_at_their_assignments() -> None:
    assert found("run.sh", BOTH + LAUNCH, "FP8703") == [
        (2, Severity.ERROR, "FP8703"),
        (3, Severity.ERROR, "FP8703"),
    ]


def test_target_release_gates_each_check() -> None:
    """Row-scaled activations are read since TE 2.16, 4over6 since 2.17."""
    assert found("run.sh", BOTH + LAUNCH, "FP8703", transformer_engine="2.16") == [
        (3, Severity.ERROR, "FP8703")
    ]
    assert found("run.sh", BOTH + LAUNCH, "FP8703", transformer_engine="2.15") == []


def test_rht_off_unknown_or_unwritten_stays_silent() -> None:
    opts = "export NVTE_NVFP4_4OVER6=all\nexport NVTE_NVFP4_ROW_SCALED_ACTIVATION=1\n"
    assert found("a.sh", "export NVTE_NVFP4_DISABLE_RHT=1\n" + opts + LAUNCH, "FP8703") == []
    assert found("b.sh", 'export NVTE_NVFP4_DISABLE_RHT="$RHT"\n' + opts + LAUNCH, "FP8703") == []
    assert found("c.sh", opts + LAUNCH, "FP8703") == []  # the job's environment may set it


def test_weights_scope_and_unknown_scope_pass() -> None:
    assert found("w.sh", RHT_ON + "export NVTE_NVFP4_4OVER6=weights\n" + LAUNCH, "FP8703") == []
    assert found("n.sh", RHT_ON + "export NVTE_NVFP4_4OVER6=none\n" + LAUNCH, "FP8703") == []
    assert found("v.sh", RHT_ON + 'export NVTE_NVFP4_4OVER6="$SCOPE"\n' + LAUNCH, "FP8703") == []


def test_without_nvfp4_the_variables_are_not_read() -> None:
    fp8 = "torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe blockwise --num-layers 32\n"
    assert found("f.sh", BOTH + fp8, "FP8703") == []


def test_nemo_rl_pertoken_recipe_is_quiet(tmp_path: Path) -> None:
    """NVIDIA's NeMo-RL per-token NVFP4 recipe: row-scaled activations with RHT disabled."""
    recipe = (
        "policy:\n  model_name: Qwen/Qwen3-30B-A3B-Base\n  megatron_cfg:\n    enabled: true\n"
        "    first_last_layers_bf16: true\n    num_layers_at_start_in_bf16: 2\n"
        "    num_layers_at_end_in_bf16: 4\n"
        "    fp4_cfg:\n      enabled: true\n      fp4: e2m1\n      fp4_recipe: nvfp4\n"
        "      fp4_param: false\n"
        '    env_vars:\n      NVTE_NVFP4_ROW_SCALED_ACTIVATION: "1"\n'
        '      NVTE_NVFP4_DISABLE_RHT: "1"\n      NVTE_NVFP4_DISABLE_2D_QUANTIZATION: "1"\n'
        '      NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING: "1"\n'
        "      NVTE_BACKWARD_OVERRIDE: dequantized\n"
    )
    path = str(tmp_path / "grpo-qwen3-30ba3b-base-8n4g-megatron-te-nvfp4-pertoken.yaml")
    settings = RunSettings(selection=Selection(select=("ALL",)))
    bad = [d for d in findings(path, recipe, settings) if d.severity is not Severity.INFO]
    assert bad == []
    # the same switches in a Megatron launch script: quiet too
    script = (
        "export NVTE_NVFP4_ROW_SCALED_ACTIVATION=1\nexport NVTE_NVFP4_DISABLE_RHT=1\n"
        "export NVTE_BACKWARD_OVERRIDE=dequantized\n" + LAUNCH
    )
    assert found("pertoken.sh", script, "FP8703") == []


def test_nemo_rl_fp8_env_vars_are_not_nvfp4(tmp_path: Path) -> None:
    cfg = (
        "policy:\n  megatron_cfg:\n    enabled: true\n    fp8_cfg:\n      enabled: true\n"
        '      fp8: "e4m3"\n      fp8_recipe: "blockwise"\n      fp8_param: false\n'
        '    env_vars:\n      NVTE_NVFP4_DISABLE_RHT: "0"\n      NVTE_NVFP4_4OVER6: all\n'
    )
    assert found(str(tmp_path / "grpo.yaml"), cfg, "FP8703") == []


# ------------------------------------------------------------------------------ FP8704

FP4 = "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n  --num-layers: 32\n"
EDGES = "  --first-last-layers-bf16: true\n"


def test_each_out_of_range_count_once() -> None:
    """A count over one stage's layers is not reported again as leaving no FP4 layer."""
    text = (
        FP4
        + "  --pipeline-model-parallel-size: 4\n"
        + EDGES
        + "  --num-layers-at-start-in-bf16: -1\n  --num-layers-at-end-in-bf16: 40\n"
    )
    assert found("a.yaml", text, "FP8704") == [
        (7, Severity.WARNING, "FP8704"),
        (8, Severity.WARNING, "FP8704"),
    ]


def test_counts_that_fit_pass_and_the_sum_is_checked() -> None:
    fits = EDGES + "  --num-layers-at-start-in-bf16: 2\n  --num-layers-at-end-in-bf16: 29\n"
    assert found("a.yaml", FP4 + fits, "FP8704") == []
    every = EDGES + "  --num-layers-at-start-in-bf16: 2\n  --num-layers-at-end-in-bf16: 30\n"
    assert found("b.yaml", FP4 + every, "FP8704") == [(7, Severity.WARNING, "FP8704")]


def test_unknown_layers_or_pipeline_keep_only_the_sign_check() -> None:
    no_layers = "MODEL_ARGS:\n  --fp4-format: e2m1\n" + EDGES
    big = "  --num-layers-at-start-in-bf16: 20\n  --num-layers-at-end-in-bf16: 40\n"
    assert found("a.yaml", no_layers + big, "FP8704") == []
    neg = "  --num-layers-at-start-in-bf16: -1\n  --num-layers-at-end-in-bf16: 4\n"
    assert found("b.yaml", no_layers + neg, "FP8704") == [(4, Severity.WARNING, "FP8704")]
    unknown_pp = FP4 + "  --pipeline-model-parallel-size: ${PP}\n" + EDGES
    # one stage's size unknown: 12 of 32 may be fine; 16 + 16 leaves no FP4 layer anyway
    stage = "  --num-layers-at-start-in-bf16: 0\n  --num-layers-at-end-in-bf16: 12\n"
    assert found("c.yaml", unknown_pp + stage, "FP8704") == []
    every = "  --num-layers-at-start-in-bf16: 16\n  --num-layers-at-end-in-bf16: 16\n"
    assert found("d.yaml", unknown_pp + every, "FP8704") == [(8, Severity.WARNING, "FP8704")]


def test_fp8_counts_are_fp8403s_not_fp8704s() -> None:
    fp8 = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n  --num-layers: 32\n"
    text = fp8 + EDGES + "  --num-layers-at-end-in-bf16: 40\n"
    assert found("a.yaml", text, "FP8704") == [(6, Severity.ERROR, "FP8403")]


def test_switch_off_or_unknown_is_silent() -> None:
    counts = "  --num-layers-at-start-in-bf16: -1\n  --num-layers-at-end-in-bf16: 40\n"
    assert found("a.yaml", FP4 + counts, "FP8704") == []
    assert found("b.yaml", FP4 + "  --first-last-layers-bf16: ${E}\n" + counts, "FP8704") == []
