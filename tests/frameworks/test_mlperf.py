"""NVIDIA MLPerf-style `config_*.sh` scripts: exported FP8 variables mapped through the
implementation's Hydra YAML (`${oc.decode:${oc.env:FP8_AMAX_HISTORY,128}}`)."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Framework

from ..conftest import run_cli

# shaped like mlcommons/training_results_v4.0 NVIDIA llama2_70b_lora
# config_DGXH100_1x8x4xtp4pp1cp1.sh
LORA_CONFIG = """\
#!/bin/bash

source $(dirname ${BASH_SOURCE[0]})/config_common.sh

# hyperparameters
export MAX_STEPS=896
export LR=0.0005
export MINIBS=4

export TP=4
export PP=1
export CP=1
export SP=1
export TP_COMM_OVERLAP=True
export VBOOST_VALUE=1

export FP8=True
export FP8_AMAX_ALGO=max
export FP8_REDUCE_AMAX=False
export FP8_AMAX_HISTORY=32

export SKIP_EVALS=3
export HYDRA_FULL_ERROR=1

# system parameters
export DGXNNODES=1
export WALLTIME_MINUTES=45
"""

# gpt3 (training_results_v3.1): the FP8 block lives in its own sourced file
GPT3_FP8 = """\
# Source this config for FP8 training
export FP8=True
export FP8_HYBRID=True
export FP8_AMAX_HISTORY=1024
export FP8_AMAX_ALGO="max"
export FP8_REDUCE_AMAX=True
"""

CONF_YAML = """\
trainer:
  devices: ${oc.decode:${oc.env:DGXNGPU,8}}
  num_nodes: ${oc.decode:${oc.env:DGXNNODES,1}}
model:
  mcore_gpt: True
  tensor_model_parallel_size: ${oc.decode:${oc.env:TP,1}}
  sequence_parallel: ${oc.decode:${oc.env:SP,False}}
  transformer_engine: True
  fp8: ${oc.decode:${oc.env:FP8,False}}
  fp8_hybrid: ${oc.decode:${oc.env:FP8_HYBRID,True}}
  fp8_amax_history_len: ${oc.decode:${oc.env:FP8_AMAX_HISTORY,4}}
  fp8_amax_compute_algo: ${oc.env:FP8_AMAX_ALGO,most_recent}
  reduce_amax: ${oc.decode:${oc.env:FP8_REDUCE_AMAX,False}}
"""


def test_lora_config_script_is_a_site_with_the_yaml_fallbacks() -> None:
    (site,) = parse_file(SourceFile("config_DGXH100_1x8x4xtp4pp1cp1.sh", LORA_CONFIG), "shell")
    assert site.framework == Framework.NEMO1
    assert site.kind == "NVIDIA MLPerf config script (llama2_70b_lora)"
    assert site.enabled.value is True
    assert (site.enabled.span.line, site.enabled.span.column) == (17, 12)  # type: ignore[union-attr]
    # FP8_HYBRID is not set: the YAML's fallback (True) gives the hybrid format
    assert site.fmt.value is not None and site.fmt.value.value == "hybrid"
    assert site.fmt.provenance == "default" and site.fmt.key == "FP8_HYBRID"
    assert site.amax_history_len.value == 32 and site.amax_history_len.span.line == 20  # type: ignore[union-attr]
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert (site.amax_compute_algo.span.line, site.amax_compute_algo.span.column) == (18, 22)  # type: ignore[union-attr]
    assert site.tensor_parallel.value == 4 and site.tensor_parallel.span.line == 10  # type: ignore[union-attr]
    assert site.sequence_parallel.value is True  # SP=1
    assert site.world_size.value == 8  # 1 node x DGXNGPU's fallback 8
    assert site.edit is None  # environment variables consumed elsewhere: no fix
    # reduce_amax is not read on the Megatron-Core path: an `ignored` note, not a setting
    assert [n.kind for n in site.notes] == ["ignored"]
    assert site.notes[0].span.line == 19


def test_published_config_scripts_get_no_warning(tmp_path: Path) -> None:
    (tmp_path / "config_DGXH100_1x8x4xtp4pp1cp1.sh").write_text(LORA_CONFIG)
    (tmp_path / "config_fp8.sh").write_text(GPT3_FP8)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    assert "warning" not in r.stdout and "error" not in r.stdout, r.stdout
    r = run_cli("show", "config_fp8.sh", cwd=tmp_path)
    assert "amax_history_len             1024           written at 4:25 `FP8_AMAX_HISTORY`" in (
        r.stdout
    ), r.stdout


def test_the_implementations_own_yaml_supplies_the_fallbacks(tmp_path: Path) -> None:
    impl = tmp_path / "nemo"
    (impl / "conf").mkdir(parents=True)
    (impl / "conf" / "megatron_gpt_peft_tuning_config.yaml").write_text(CONF_YAML)
    script = "export FP8=True\nexport FP8_AMAX_ALGO=max\nexport TP=2\nexport SP=1\n"
    (impl / "config_short.sh").write_text(script + "export FP8_REDUCE_AMAX=False\n")
    r = run_cli("show", "nemo/config_short.sh", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    # history 4 is the YAML's fallback, not the built-in table's 128
    assert "amax_history_len             4              default of nemo/conf/" in r.stdout, r.stdout
    r = run_cli(
        "check", "--no-cache", "--output-format", "concise", "nemo/config_short.sh", cwd=tmp_path
    )
    # a short window with max is information (the evidence's FP8-DS-SHORT-WINDOW), at the
    # line that turns FP8 on, since the history is not written in the script
    assert "nemo/config_short.sh:1:12: FP8102 [info]" in r.stdout, r.stdout
    assert "warning" not in r.stdout and "error" not in r.stdout


def test_plain_fp8_variable_is_not_the_family() -> None:
    text = "export FP8=1\nexport TP=8\necho $FP8\n"
    assert parse_file(SourceFile("env.sh", text), "shell") == []
    empty = "export FP8=\nexport FP8_AMAX_HISTORY=4\n"
    assert parse_file(SourceFile("env.sh", empty), "shell") == []


def test_most_recent_fallback_is_flagged_at_the_enabling_variable(tmp_path: Path) -> None:
    # the llama2_70b_lora YAML falls back to most_recent with margin 0 when FP8_AMAX_ALGO is
    # not exported
    text = "export FP8=True\nexport FP8_AMAX_HISTORY=4\nexport FP8_REDUCE_AMAX=True\n"
    (tmp_path / "config_x.sh").write_text(text)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "config_x.sh:1:12: FP8101 [warning]" in r.stdout, r.stdout
    assert "FP8_AMAX_ALGO" in r.stdout


FP8_PART = """\
export FP8=True
export FP8_HYBRID=True
export FP8_AMAX_ALGO=max
export FP8_AMAX_HISTORY=1024
export FP8_REDUCE_AMAX=True
"""
SOURCING = """\
source $(dirname ${BASH_SOURCE[0]})/config_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/config_fp8.sh"
export DGXNNODES=8
export TENSOR_MODEL_PARALLEL=4
export PIPELINE_MODEL_PARALLEL=8
export FP8_AMAX_HISTORY=4
"""


def test_a_config_that_sources_the_fp8_script_is_a_site(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "config_fp8.sh").write_text(FP8_PART)
    (tmp_path / "config_common.sh").write_text("export SEQ_PARALLEL=True\n")
    (tmp_path / "config_DGXH100_8x8x4.sh").write_text(SOURCING)
    r = run_cli("show", "config_DGXH100_8x8x4.sh", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    out = r.stdout
    assert "config_common.sh > config_fp8.sh > config_DGXH100_8x8x4.sh (overrides)" in out, out
    assert "enabled                      True           written at config_fp8.sh:1:12" in out
    # the script's own assignment after the `source` line wins over the sourced one
    assert "amax_history_len             4              written at 6:25" in out, out
    assert "tensor_parallel              4              written at 4:30" in out, out
    # a finding about the sourced settings is reported at the `source` line, without a fix
    r = run_cli("check", "--no-cache", "--output-format", "json", ".", cwd=tmp_path)
    import json

    found = {
        d["code"]: (d["location"]["row"], d["fix"])
        for d in json.loads(r.stdout)
        if d["filename"].endswith("8x8x4.sh")
    }
    assert found["FP8201"] == (2, None), r.stdout  # the recipe the sourced FP8=True runs
    assert found["FP8102"][0] == 6  # the script's own short history, at its own line


def test_a_sourced_script_that_cannot_be_placed_or_read_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "inner").mkdir()
    (tmp_path.parent / "outside_fp8.sh").write_text(FP8_PART)
    for i, line in enumerate(
        ["source $CONFIG_DIR/config_fp8.sh", "source ../outside_fp8.sh", ". ./missing.sh"]
    ):
        (tmp_path / "inner" / f"config_{i}.sh").write_text(line + "\nexport TP=2\n")
    for i in range(3):
        text = (tmp_path / "inner" / f"config_{i}.sh").read_text()
        file = SourceFile(str(tmp_path / "inner" / f"config_{i}.sh"), text)
        assert parse_file(file, "shell") == [], text
