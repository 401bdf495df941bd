"""NVIDIA's performance launchers (NeMo 2 `scripts/performance/llm/*.py`, Megatron-Bridge
`scripts/performance/setup_experiment.py`): precision from `--compute_dtype` /
`--fp8_recipe`, never read as Megatron flags."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Framework, Recipe

from ..conftest import run_cli

NEMO = """\
#!/bin/bash
python scripts/performance/llm/pretrain_llama31_405b.py --account $ACCOUNT \\
    --partition $PARTITION --gpu h100 --compute_dtype fp8 --fp8_recipe cs \\
    -tp 8 -cp 2 --num_gpus 1024
python -m scripts.performance.llm.pretrain_llama3_8b --gpu h100 -c fp8 -tp 1
python scripts/performance/llm/pretrain_nemotron4_15b.py -g h100 -c bf16
"""

BRIDGE = (
    "python scripts/performance/setup_experiment.py -m llama -mr llama3_70b --gpu b200 \\\n"
    "    -c fp8_mx -ng 64 -tp 2\n"
)


def test_nemo_perf_launcher_is_not_megatron(tmp_path: Path) -> None:
    cs, ds = parse_file(SourceFile("run.sh", NEMO), "shell")
    assert cs.framework == Framework.NEMO2
    assert cs.kind == "NVIDIA performance launcher (`pretrain_llama31_405b.py`)"
    assert cs.recipe.value is Recipe.TENSORWISE
    assert cs.first_last_layers_bf16.value is False  # turned off for benchmarking
    assert cs.recipe.span is not None
    assert (cs.recipe.span.line, cs.recipe.span.column) == (3, 72)  # `cs`
    assert cs.tensor_parallel.value == 8 and cs.world_size.value == 1024
    assert cs.tensor_parallel.span is not None and cs.tensor_parallel.span.line == 4
    # `-c fp8` alone: NeMo's default recipe `ds`, the delayed preset (1024, max)
    assert ds.recipe.value is Recipe.DELAYED
    assert ds.amax_history_len.value == 1024 and ds.amax_compute_algo.value is AmaxAlgo.MAX
    assert ds.enabled.span is not None
    assert (ds.enabled.span.line, ds.enabled.span.column) == (5, 68)
    (tmp_path / "run.sh").write_text(NEMO)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    # Megatron would have read `--fp8_recipe cs` as an invalid recipe (FP8401 error)
    assert "warning" not in r.stdout and "error" not in r.stdout, r.stdout


def test_bridge_perf_launcher() -> None:
    (site,) = parse_file(SourceFile("b.sh", BRIDGE), "shell")
    assert site.framework == Framework.BRIDGE
    assert site.recipe.value is Recipe.MXFP8
    assert site.fmt.value is not None and site.fmt.value.value == "e4m3"  # Bridge's MXFP8
    assert site.world_size.value == 64 and site.tensor_parallel.value == 2
    assert site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (2, 8)


def test_unknown_dtype_is_unknown_not_guessed() -> None:
    text = "python scripts/performance/setup_experiment.py -c $DTYPE -tp 2\n"
    (site,) = parse_file(SourceFile("u.sh", text), "shell")
    assert site.enabled.known is False


def test_perf_run_recipe_is_read_by_its_recipe_name() -> None:
    text = (
        "python scripts/performance/run_recipe.py "
        "--recipe llama3_8b_pretrain_8gpu_h100_fp8cs_config -tp 1\n"
    )
    (site,) = parse_file(SourceFile("r.sh", text), "shell")
    assert site.kind == "Megatron-Bridge launch (`run_recipe.py`)"
    assert site.recipe.value is Recipe.TENSORWISE


def test_gpu_is_read_as_written_and_only_from_the_flag() -> None:
    bridge, nemo = parse_file(
        SourceFile(
            "g.sh",
            "python scripts/performance/setup_experiment.py -g gb300 -c fp8_sc"
            " --num_moe_experts 64\n"
            "python scripts/performance/llm/pretrain_mixtral_8x7b.py --gpu b200 -c fp8 -fr ss\n",
        ),
        "shell",
    )
    assert bridge.gpu.value == "gb300" and bridge.gpu.key == "-g"
    assert bridge.gpu.span is not None and (bridge.gpu.span.line, bridge.gpu.span.column) == (1, 51)
    assert bridge.recipe.value is Recipe.BLOCKWISE and bridge.num_experts.value == 64
    assert nemo.gpu.value == "b200" and nemo.recipe.value is Recipe.BLOCKWISE
    # the recipe's name says h100, but no `--gpu` is written: unset, not guessed
    (recipe,) = parse_file(
        SourceFile("r.sh", "python scripts/performance/run_recipe.py --recipe x_8gpu_h100_fp8cs\n"),
        "shell",
    )
    assert recipe.gpu.known is False and recipe.gpu.provenance != "written"
    (unset,) = parse_file(SourceFile("u.sh", BRIDGE.replace("--gpu b200 ", "")), "shell")
    assert unset.gpu.known is False and unset.gpu.provenance != "written"


def test_gpu_the_launcher_refuses_or_cannot_read_is_unknown() -> None:
    nemo_b300 = "python scripts/performance/llm/pretrain_llama3_8b.py -g b300 -c fp8\n"
    (site,) = parse_file(SourceFile("n.sh", nemo_b300), "shell")
    assert site.gpu.known is False and "not one of the launcher's GPUs" in (site.gpu.note or "")
    bridge_b300 = "python scripts/performance/setup_experiment.py -g b300 -c fp8_mx\n"
    assert parse_file(SourceFile("b.sh", bridge_b300), "shell")[0].gpu.value == "b300"
    (var,) = parse_file(SourceFile("v.sh", BRIDGE.replace("b200", "$GPU")), "shell")
    assert var.gpu.known is False and var.gpu.written
