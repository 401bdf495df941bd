"""ModelScope Swift's `megatron sft|pt|rlhf` command line: underscore flags, `true`/`false`
booleans, Swift's own defaults (history 1024, max, selective recompute)."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Fp8Site, Framework, Recipe

from ..conftest import run_cli

# shaped like ms-swift's examples/megatron/fp8.sh: only the format and param gather written
SWIFT_EXAMPLE = """\
#!/bin/bash
# 8 * 65GiB
PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' \\
NPROC_PER_NODE=8 \\
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \\
megatron sft \\
    --load Qwen2.5-7B-mcore \\
    --dataset 'swift/self-cognition#1000' \\
              'AI-ModelScope/alpaca-gpt4-data-en#500' \\
    --tensor_model_parallel_size 2 \\
    --micro_batch_size 1 \\
    --global_batch_size 16 \\
    --packing true \\
    --save megatron_output/Qwen2.5-7B \\
    --fp8_format hybrid \\
    --fp8_param_gather true \\
    --sequence_parallel true \\
    --attention_backend flash
"""

RISKY = """\
NPROC_PER_NODE=4 megatron pt \\
    --load Qwen3-8B-mcore \\
    --tensor_model_parallel_size=4 \\
    --fp8_format hybrid \\
    --fp8_amax_history_len 16 \\
    --fp8_amax_compute_algo most_recent \\
    --megatron_extra_kwargs '{"fp8_margin": 0, "tp_only_amax_red": true}'
"""


def test_swift_command_reads_flags_with_swift_defaults() -> None:
    file = SourceFile("train.sh", SWIFT_EXAMPLE)
    (site,) = parse_file(file, "shell")
    assert site.framework == Framework.MEGATRON
    assert site.kind == "ms-swift `megatron sft` command"
    assert (site.span.line, site.span.column) == (6, 1)
    assert site.enabled.value is True and site.fmt.value is not None
    assert site.fmt.value.value == "hybrid"
    assert (site.fmt.span.line, site.fmt.span.column) == (15, 18)  # type: ignore[union-attr]
    # Swift's dataclass defaults, not Megatron's (history 1, most_recent)
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "default"
    assert site.amax_history_len.value == 1024 and site.amax_history_len.default_of == "ms-swift"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.recompute_granularity.value == "selective"
    assert site.recompute_granularity.provenance == "default"
    # `true` is a boolean written after the flag
    assert site.fp8_param_gather.value is True and site.fp8_param_gather.written
    assert (site.fp8_param_gather.span.line, site.fp8_param_gather.span.column) == (16, 24)  # type: ignore[union-attr]
    assert site.sequence_parallel.value is True
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.span.line == 10  # type: ignore[union-attr]
    assert site.gated_mlp.known is False  # the shape comes from the checkpoint


def test_swift_example_is_quiet(tmp_path: Path) -> None:
    (tmp_path / "fp8.sh").write_text(SWIFT_EXAMPLE)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    assert "warning" not in r.stdout and "error" not in r.stdout, r.stdout


def test_swift_risky_history_is_flagged_and_fixed_with_swift_spelling(tmp_path: Path) -> None:
    (site,) = parse_file(SourceFile("pt.sh", RISKY), "shell")
    assert site.kind == "ms-swift `megatron pt` command"
    assert site.tensor_parallel.value == 4  # --flag=value
    assert site.amax_history_len.value == 16 and site.amax_history_len.span.line == 5  # type: ignore[union-attr]
    # keys of the extra-kwargs JSON are Megatron arguments
    assert site.tp_only_amax_red.value is True and site.tp_only_amax_red.span.line == 7  # type: ignore[union-attr]
    assert site.margin.value == 0 and site.margin.written
    (tmp_path / "pt.sh").write_text(RISKY)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "pt.sh:6:29: FP8101" in r.stdout, r.stdout
    run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    fixed = (tmp_path / "pt.sh").read_text()
    assert "--fp8_amax_history_len 1024 \\\n" in fixed
    assert "--fp8_amax_compute_algo max \\\n" in fixed
    assert fixed.replace("1024", "16").replace("algo max", "algo most_recent") == RISKY


def test_other_megatron_words_are_not_swift() -> None:
    text = (
        "megatron export --load x --fp8_format hybrid\npython pretrain_gpt.py --fp8-format e4m3\n"
    )
    sites = parse_file(SourceFile("x.sh", text), "shell")
    assert [s.kind for s in sites] == ["Megatron launch command (`pretrain_gpt.py`)"]


WORKFLOW = """\
name: sft-fp8
on: [push]
jobs:
  train:
    runs-on: [self-hosted, gpu]
    steps:
      - run: |
          NPROC_PER_NODE=8 megatron sft --load Qwen3-8B-mcore \\
            --fp8_format hybrid --fp8_amax_compute_algo most_recent
      - run: python3 -m MaxText.train MaxText/configs/base.yml quantization=fp8
"""


def test_commands_in_ci_run_snippets() -> None:
    swift, maxtext = parse_file(SourceFile("sft.yaml", WORKFLOW), "yaml")
    assert swift.kind == "ms-swift `megatron sft` command"
    assert swift.amax_compute_algo.span is not None
    assert (swift.amax_compute_algo.span.line, swift.amax_compute_algo.span.column) == (9, 57)
    assert maxtext.kind == "MaxText command line (`MaxText.train`)"
    assert maxtext.span.line == 10


def test_sft_and_rlhf_are_fine_tunes_and_pt_is_not() -> None:
    """Issue 19, class 2: `megatron sft|rlhf` post-train a trained model (the severity
    policy's fine-tune), `megatron pt` pretrains; `--train_iters` is the run length."""
    for sub, tune in (("sft", True), ("rlhf", True), ("pt", False)):
        text = f"megatron {sub} --model Qwen/Qwen3-8B --fp8_format hybrid --train_iters 300\n"
        (site,) = parse_file(SourceFile("run.sh", text), "shell")
        assert (site.fine_tune.value is True) is tune, sub
        assert site.train_steps.value == 300


def _swift_site(text: str) -> Fp8Site:
    sites = parse_file(SourceFile("run.sh", text), "shell")
    assert len(sites) == 1
    return sites[0]


def test_swift_fp4_launch_is_a_live_nvfp4_site() -> None:
    site = _swift_site(
        "megatron sft --model Qwen/Qwen3-8B --fp4_format e2m1 --fp4_param_gather true\n"
    )
    assert site.fp4_on is True and site.quantized and site.is_on is False
    assert site.active_recipe is Recipe.NVFP4
    assert site.fp4_recipe.value == "nvfp4" and site.fp4_recipe.provenance == "default"
    assert site.fp4_param_gather.value is True and site.fp4_param_gather.written
    off = _swift_site("megatron sft --model Qwen/Qwen3-8B --fp8_format e4m3\n")
    assert off.fp4_on is False and off.active_recipe is Recipe.DELAYED


def test_swift_packing_peft_and_optimizer_settings_with_swift_defaults() -> None:
    base = _swift_site("megatron sft --model m --fp8_format e4m3\n")
    assert base.packing.value is True and base.packing.provenance == "default"  # padding_free
    assert not base.peft.known  # full training: no PEFT
    assert base.precision_aware_optimizer.value is False
    assert (base.exp_avg_dtype.value, base.exp_avg_sq_dtype.value) == ("fp32", "fp32")
    assert base.distributed_optimizer.value is True and base.optimizer.value == "adam"
    site = _swift_site(
        "megatron sft --model m --fp8_format e4m3 --padding_free false --tuner_type lora "
        "--use_precision_aware_optimizer true --exp_avg_dtype bf16 --exp_avg_sq_dtype BF16\n"
    )
    assert site.packing.value is False and site.packing.written
    assert site.peft.value == "lora"
    assert site.precision_aware_optimizer.value is True
    assert (site.exp_avg_dtype.value, site.exp_avg_sq_dtype.value) == ("bf16", "bf16")
    old = _swift_site(
        "megatron sft --model m --train_type lora --packing true --padding_free false\n"
    )
    assert old.peft.value == "lora" and old.packing.value is True  # packing forces padding-free
    full = _swift_site("megatron sft --model m --train_type full\n")
    assert not full.peft.known
