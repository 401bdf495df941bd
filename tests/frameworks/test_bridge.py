"""Megatron-Bridge launches in shell scripts: `run_recipe.py --recipe NAME KEY=VALUE`,
example `pretrain_*.py` scripts with `ConfigContainer` overrides, and commands kept in a shell
string."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Framework, Recipe

from ..conftest import run_cli

RUNNER = """\
#!/bin/bash
torchrun --nproc-per-node=8 scripts/training/run_recipe.py \\
    --recipe qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config -tp 4 \\
    train.train_iters=100
"""

STRING = """\
#!/bin/bash
CMD="python /opt/bridge/scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config \\
  mixed_precision.fp8=hybrid mixed_precision.fp8_recipe=delayed \\
  model.tensor_model_parallel_size=2 model.sequence_parallel=true"
srun --container-image=nvcr.io/nvidia/nemo:25.09 bash -c "${CMD}"
"""

EXAMPLE = """\
python examples/recipes/llama/pretrain_llama3_8b.py \\
    mixed_precision=bf16-with-mxfp8-mixed model.tensor_model_parallel_size=2
python examples/recipes/llama/pretrain_llama3_8b.py model.fp8=e4m3 model.fp8_recipe=delayed
"""


def test_recipe_name_carries_the_precision() -> None:
    (site,) = parse_file(SourceFile("run.sh", RUNNER), "shell")
    assert site.framework == Framework.BRIDGE
    assert site.kind == "Megatron-Bridge launch (`run_recipe.py`)"
    assert (site.span.line, site.span.column) == (2, 1)
    assert site.enabled.value is True and site.recipe.value is Recipe.TENSORWISE
    assert site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (3, 14)  # the recipe name
    # benchmark recipes' `_perf_precision("fp8_cs")` turns the BF16 first/last layers off
    assert site.first_last_layers_bf16.value is False
    assert site.tensor_parallel.value == 4
    assert site.tensor_parallel.span is not None
    assert (site.tensor_parallel.span.line, site.tensor_parallel.span.column) == (3, 65)


def test_command_in_a_shell_string_uses_bridge_defaults(tmp_path: Path) -> None:
    (site,) = parse_file(SourceFile("launch.sh", STRING), "shell")
    assert site.kind == "Megatron-Bridge launch (`run_recipe.py`)"
    assert site.recipe.value is Recipe.DELAYED
    assert site.recipe.span is not None
    assert (site.recipe.span.line, site.recipe.span.column) == (3, 57)
    # not written: MixedPrecisionConfig's defaults (history 1, most_recent)
    assert site.amax_history_len.value == 1 and site.amax_history_len.provenance == "default"
    assert site.amax_compute_algo.value is AmaxAlgo.MOST_RECENT
    assert site.tensor_parallel.value == 2 and site.sequence_parallel.value is True
    (tmp_path / "launch.sh").write_text(STRING)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    # both the history and the algorithm are defaults: reported where FP8 is turned on
    assert "launch.sh:3:23: FP8101 [warning]" in r.stdout, r.stdout
    assert "mixed_precision.fp8_amax_compute_algo" in r.stdout


def test_presets_and_overwritten_model_overrides(tmp_path: Path) -> None:
    mx, plain = parse_file(SourceFile("ex.sh", EXAMPLE), "shell")
    assert mx.kind == "Megatron-Bridge launch (`pretrain_llama3_8b.py`)"
    assert mx.recipe.value is Recipe.MXFP8
    assert mx.fmt.value is not None and mx.fmt.value.value == "e4m3"  # Bridge's MXFP8 preset
    # `model.fp8*` is replaced by the recipe's mixed_precision config at setup
    assert plain.enabled.known is False
    assert [(n.kind, n.span.line, n.span.column) for n in plain.notes] == [
        ("ignored", 3, 53),
        ("ignored", 3, 68),
    ]
    (tmp_path / "ex.sh").write_text(EXAMPLE)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "warning" not in r.stdout and "error" not in r.stdout, r.stdout
    assert "ex.sh:3:53: FP8402 [info] `model.fp8` is overwritten" in r.stdout


def test_megatron_pretrain_scripts_stay_megatron() -> None:
    text = "python pretrain_gpt.py --fp8-format hybrid --tensor-model-parallel-size 2\n"
    (site,) = parse_file(SourceFile("m.sh", text), "shell")
    assert site.framework == Framework.MEGATRON
    bf16 = (
        "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_8gpu_h100_bf16_config\n"
    )
    assert parse_file(SourceFile("b.sh", bf16), "shell") == []


PERF_RECIPES = """\
from megatron.bridge.perf_recipes._common import _perf_precision
from megatron.bridge.recipes.llama.llama3 import llama3_8b_pretrain_config


def llama3_8b_pretrain_8gpu_h100_fp8cs_config():
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("fp8_cs")
    return cfg


def llama3_8b_pretrain_8gpu_h100_fp8ds_config():
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("fp8_ds")
    return cfg


def llama3_8b_pretrain_8gpu_h100_bf16_config():
    cfg = llama3_8b_pretrain_config()
    cfg.mixed_precision = _perf_precision("bf16")
    return cfg
"""


def test_perf_recipes_precision_helper_is_the_preset_it_returns() -> None:
    """Issue 19, class 10: `_perf_precision("fp8_cs")` is the current-scaling preset with
    BF16 first/last layers off; `fp8_ds` the delayed one; `bf16` no FP8."""
    cs, ds = parse_file(SourceFile("llama3.py", PERF_RECIPES), "python")
    assert cs.recipe.value == Recipe.TENSORWISE and cs.first_last_layers_bf16.value is False
    assert ds.recipe.value == Recipe.DELAYED and ds.amax_history_len.value == 1024
    assert cs.recipe.key == '_perf_precision("fp8_cs")'


def test_run_recipe_with_a_recipe_whose_name_hides_fp8() -> None:
    """Issue 19, class 10: Bridge library recipes named `..._bf16_config` or without a
    precision that set an FP8 preset are read from the recipe name, also given as
    `--model STEM --mode MODE`."""
    text = (
        "python scripts/training/run_recipe.py --recipe nemotronh_47b_pretrain_config\n"
        "python scripts/training/run_recipe.py --model nemotron_nano_12b_v2 --mode pretrain\n"
        "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config\n"
    )
    h47, nano = parse_file(SourceFile("run.sh", text), "shell")  # llama3_8b: BF16
    assert h47.recipe.value == Recipe.TENSORWISE
    assert h47.num_layers_at_start_in_bf16.value == 2
    assert nano.recipe.value == Recipe.BLOCKWISE  # nanov2's "current scaling" preset
