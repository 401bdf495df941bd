"""The documented Megatron-LM / Megatron-Bridge failures (FP8601-FP8608, upstream-2026 §3) and
the flags they read.  Each configuration is written here in the shape of the report's
command line; none is copied from a repository."""

from __future__ import annotations

import pytest

from fp8lint.diagnostics import Severity
from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.settings import RunSettings, Selection, Targets

from .fixing import findings

MX = "torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe mxfp8 --use-distributed-optimizer"
REUSE = " --fp8-param-gather --reuse-grad-buf-for-mxfp8-param-ag"
FP4 = "torchrun pretrain_gpt.py --fp4-format e2m1 --fp4-recipe nvfp4 --fp4-param-gather"


def found(script: str, code: str, **versions: str) -> list[tuple[int, Severity]]:
    settings = RunSettings(
        selection=Selection(select=(code,)),
        targets=Targets({k.replace("_", "-"): v for k, v in versions.items()}),
    )
    return [(d.line, d.severity) for d in findings("run.sh", script + "\n", settings)]


# ------------------------------------------------------------------------------ readers


def show(text: str, name: str = "run.sh") -> dict[str, object]:
    kind = "yaml" if name.endswith(".yaml") else "shell"
    sites = parse_file(SourceFile(name, text + "\n"), kind)
    return {field: getattr(sites[0], field).value for field in _FIELDS}


_FIELDS = (
    "overlap_grad_reduce",
    "overlap_param_gather",
    "overlap_param_gather_with_optimizer_step",
    "virtual_pipeline",
    "cuda_graph",
    "optimizer",
    "precision_aware_optimizer",
    "exp_avg_dtype",
    "exp_avg_sq_dtype",
    "ckpt_format",
)


def test_megatron_defaults_for_the_new_flags() -> None:
    assert show(MX) == {
        "overlap_grad_reduce": False,
        "overlap_param_gather": False,
        "overlap_param_gather_with_optimizer_step": False,
        "virtual_pipeline": 1,
        "cuda_graph": False,
        "optimizer": "adam",
        "precision_aware_optimizer": False,
        "exp_avg_dtype": "fp32",
        "exp_avg_sq_dtype": "fp32",
        "ckpt_format": "torch_dist",
    }


def test_megatron_flags_written() -> None:
    script = (
        MX + " --overlap-grad-reduce --overlap-param-gather"
        " --overlap-param-gather-with-optimizer-step --num-virtual-stages-per-pipeline-rank 3"
        " --enable-cuda-graph --optimizer muon --use-precision-aware-optimizer"
        " --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --ckpt-format torch"
    )
    assert show(script) == {
        "overlap_grad_reduce": True,
        "overlap_param_gather": True,
        "overlap_param_gather_with_optimizer_step": True,
        "virtual_pipeline": 3,
        "cuda_graph": True,
        "optimizer": "muon",
        "precision_aware_optimizer": True,
        "exp_avg_dtype": "bf16",
        "exp_avg_sq_dtype": "bf16",
        "ckpt_format": "torch",
    }


@pytest.mark.parametrize(
    ("extra", "vp"),
    [
        (
            " --num-layers 32 --pipeline-model-parallel-size 4"
            " --num-layers-per-virtual-pipeline-stage 2",
            4,
        ),
        (
            " --num-layers 8 --pipeline-model-parallel-size 4"
            " --num-layers-per-virtual-pipeline-stage 2",
            1,
        ),
        (" --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 2", None),
    ],
)
def test_virtual_stages_from_layers_per_stage(extra: str, vp: int | None) -> None:
    assert show(MX + extra)["virtual_pipeline"] == vp


def test_cuda_graph_impl_none_is_off_and_local_is_on() -> None:
    assert show(MX + " --cuda-graph-impl none")["cuda_graph"] is False
    assert show(MX + " --cuda-graph-impl local")["cuda_graph"] is True


def test_unread_words_leave_the_training_flags_unknown() -> None:
    kind = "shell"
    script = MX.replace("pretrain_gpt.py", "pretrain_gpt.py $EXTRA_ARGS")
    site = parse_file(SourceFile("run.sh", script + "\n"), kind)[0]
    assert not site.overlap_param_gather.known
    assert not site.ckpt_format.known


# ------------------------------------------------------------------------ FP8601 (#2272)


def test_fp8601_warns_before_core_018_and_is_info_after() -> None:
    assert found(MX + REUSE, "FP8601", megatron_core="0.17") == [(1, Severity.WARNING)]
    assert found(MX + REUSE, "FP8601") == [(1, Severity.INFO)]
    overlap = MX + REUSE + " --overlap-grad-reduce --overlap-param-gather"
    assert found(overlap, "FP8601", megatron_core="0.17") == []


def test_fp8601_needs_the_reuse() -> None:
    assert found(MX + " --fp8-param-gather", "FP8601", megatron_core="0.17") == []


# ------------------------------------------------------------------- FP8602 (Bridge #1771)

STEP = " --overlap-grad-reduce --overlap-param-gather --overlap-param-gather-with-optimizer-step"


def test_fp8602_warns_on_mxfp8_optimizer_step_overlap() -> None:
    assert found(MX + STEP, "FP8602") == [(1, Severity.WARNING)]
    assert found(MX + " --overlap-grad-reduce --overlap-param-gather", "FP8602") == []


def test_fp8602_is_an_error_with_the_reuse_from_core_019() -> None:
    assert found(MX + REUSE + STEP, "FP8602") == [(1, Severity.ERROR)]
    assert found(MX + REUSE + STEP, "FP8602", megatron_core="0.18") == [(1, Severity.WARNING)]


def test_fp8602_leaves_other_recipes_alone() -> None:
    script = MX.replace("mxfp8", "blockwise") + STEP
    assert found(script, "FP8602") == []


# --------------------------------------------------------------------- FP8603 (Bridge #638)


def test_fp8603_hybrid_mxfp8_warns_and_is_info_on_short_runs() -> None:
    hybrid = MX.replace("e4m3", "hybrid")
    assert found(hybrid, "FP8603") == [(1, Severity.WARNING)]
    assert found(hybrid + " --train-iters 2000", "FP8603") == [(1, Severity.INFO)]
    assert found(MX, "FP8603") == []


# ------------------------------------------------------------------ FP8604 (MLM PR #5707)


@pytest.mark.parametrize("optimizer", ["muon", "dist_muon", "adaptive_muon"])
def test_fp8604_muon_with_fp8_param_gather(optimizer: str) -> None:
    script = MX + REUSE + f" --optimizer {optimizer}"
    assert found(script, "FP8604") == [(1, Severity.WARNING)]
    assert found(script, "FP8604", megatron_core="main") == [(1, Severity.INFO)]


def test_fp8604_adam_or_bf16_gather_is_quiet() -> None:
    assert found(MX + REUSE + " --optimizer adam", "FP8604") == []
    assert found(MX + " --optimizer muon", "FP8604") == []


# ------------------------------------------------------------------------ FP8605 (#5174)

DIST = " --use-distributed-optimizer"


def test_fp8605_nvfp4_dist_opt_torch_dist_default() -> None:
    assert found(FP4 + DIST, "FP8605") == [(1, Severity.WARNING)]
    assert found(FP4 + DIST + " --ckpt-format torch", "FP8605") == []
    assert found(FP4, "FP8605") == []  # no distributed optimizer


def test_fp8605_an_unread_word_keeps_it_silent() -> None:
    script = (FP4 + DIST).replace("pretrain_gpt.py", "pretrain_gpt.py $EXTRA")
    assert found(script, "FP8605") == []


# ---------------------------------------------------------------- FP8606 (Bridge 0.6.2)


def test_fp8606_megatron_fsdp_with_fp4_weights() -> None:
    assert found(FP4 + " --use-megatron-fsdp", "FP8606") == [(1, Severity.WARNING)]
    assert found(FP4 + " --use-torch-fsdp2", "FP8606") == []
    no_gather = FP4.replace(" --fp4-param-gather", "") + " --use-megatron-fsdp"
    assert found(no_gather, "FP8606") == []


# ----------------------------------------------------------------- FP8607 (Bridge #2096)

PP = " --pipeline-model-parallel-size 8 --cuda-graph-impl transformer_engine"


def test_fp8607_vp_with_cuda_graphs_is_info() -> None:
    vp = MX + PP + " --num-virtual-stages-per-pipeline-rank 3"
    assert found(vp, "FP8607") == [(1, Severity.INFO)]
    assert found(MX + PP + " --num-virtual-stages-per-pipeline-rank 1", "FP8607") == []
    assert found(vp.replace("transformer_engine", "none"), "FP8607") == []


# ----------------------------------------------------------------- FP8608 (#2284)


def test_fp8608_gated_on_core_and_te() -> None:
    script = FP4 + DIST
    assert found(script, "FP8608", megatron_core="0.17") == [(1, Severity.WARNING)]
    assert found(script, "FP8608", transformer_engine="2.13") == [(1, Severity.WARNING)]
    assert found(script, "FP8608") == [(1, Severity.INFO)]
    assert found(FP4.replace(" --fp4-param-gather", "") + DIST, "FP8608") == []


def test_a_yaml_cfg_mapping_reads_vp_and_graphs_and_leaves_training_flags_unset() -> None:
    text = (
        "language_model:\n  num_layers: 4\n  fp8: e4m3\n  fp8_recipe: mxfp8\n"
        "  virtual_pipeline_model_parallel_size: 2\n  cuda_graph_impl: local\n"
    )
    (site,) = parse_file(SourceFile("gpt_config.yaml", text), "yaml")
    assert (site.virtual_pipeline.value, site.cuda_graph.value) == (2, True)
    assert not site.ckpt_format.known and not site.overlap_param_gather.known
