"""`[tool.fp8lint] target-versions`: checks that appear with a release are gated on it, the
default is the newest release, and a finding names the version it assumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.cli import main
from fp8lint.engine.config_model import Invalid, validate
from fp8lint.settings import TARGETS, Targets, version_tuple

GTP = (
    "torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe mxfp8 "
    "--tensor-model-parallel-size 2 --tensor-parallel-num-weight-shards 4\n"
)
INVARIANT = "torchrun pretrain_gpt.py --fp8-format e4m3 --num-experts 8 --batch-invariant-mode\n"


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, table: str) -> str:
    (tmp_path / "pyproject.toml").write_text(f"[tool.fp8lint]\n{table}\n")
    (tmp_path / "run.sh").write_text(script)
    main(["check", "--output-format", "text", "--no-cache", str(tmp_path / "run.sh")])
    return capsys.readouterr().out


def test_versions_parse_and_order() -> None:
    assert version_tuple("0.19") < version_tuple("0.19.2") < version_tuple("0.20")
    assert version_tuple("main") > version_tuple("99.99.99")
    for bad in ("", "0.x", "1.2.3.4", "v2.20", "latest"):
        with pytest.raises(ValueError):
            version_tuple(bad)
    defaults = Targets()
    assert defaults.version("megatron-core") == TARGETS["megatron-core"]
    assert Targets({"megatron-core": "0.18"}).at_least("megatron-core", "0.19") is False


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"megatron": "0.19"}, "unknown framework `megatron`"),
        ({"megatron-core": "0.19-rc1"}, "is not a version"),
        ({"megatron-core": 0.19}, "target-versions"),
    ],
)
def test_bad_targets_are_configuration_errors(given: dict[str, object], problem: str) -> None:
    with pytest.raises(Invalid) as info:
        validate({"target-versions": given})
    assert problem in "\n".join(info.value.problems)


def test_a_check_added_in_a_release_is_off_for_older_targets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """GTP + mxfp8 without FP8 parameter gather: Megatron added the check in core 0.19."""
    out = run(tmp_path, capsys, GTP, "")
    assert "FP8403" in out and "megatron-core 0.19" in out  # the finding names its version
    assert "FP8403" not in run(tmp_path, capsys, GTP, 'target-versions = {megatron-core = "0.18"}')


def test_a_check_only_on_main_is_off_unless_the_target_says_main(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "FP8403" not in run(tmp_path, capsys, INVARIANT, "")
    out = run(tmp_path, capsys, INVARIANT, 'target-versions = {megatron-core = "main"}')
    assert "FP8403" in out and "megatron-core main" in out


def test_show_settings_names_every_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fp8lint]\ntarget-versions = {transformer-engine = "2.18"}\n'
    )
    (tmp_path / "run.sh").write_text(GTP)
    main(["check", "--show-settings", str(tmp_path / "run.sh")])
    out = capsys.readouterr().out
    assert "2.18" in out and TARGETS["megatron-core"] in out


def test_an_older_transformer_engine_target_has_no_fp4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """megatron/training/arguments.py L1108: `--fp4-format` needs TE 2.7 (never true of the
    default target, 2.20)."""
    fp4 = (
        "torchrun pretrain_gpt.py --fp4-format e2m1 --fp4-param-gather "
        "--use-distributed-optimizer\n"
    )
    assert "FP8403" not in run(tmp_path, capsys, fp4, "")
    out = run(tmp_path, capsys, fp4, 'target-versions = {transformer-engine = "2.6"}')
    assert "FP8403" in out and "transformer-engine 2.6" in out


def test_mxfp8_moe_payloads_are_checked_on_main(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """transformer_config.py L1776-1790 at d98e8a64 (not in core 0.19): MXFP8 all-to-all
    payloads need the NCCL-EP flex dispatcher, TE's op fuser and grouped GEMM."""
    base = (
        "torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe mxfp8 --num-experts 8 "
        "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend ncclep "
        "--moe-dispatch-fwd-dtype mxfp8"
    )
    main_target = 'target-versions = {megatron-core = "main"}'
    assert "FP8403" not in run(tmp_path, capsys, base + "\n", "")
    assert "FP8403" in run(tmp_path, capsys, base + "\n", main_target)
    fused = base + " --use-transformer-engine-op-fuser --moe-grouped-gemm\n"
    assert "FP8403" not in run(tmp_path, capsys, fused, main_target)
    alltoall = fused.replace("flex", "alltoall")
    assert "FP8403" in run(tmp_path, capsys, alltoall, main_target)


def test_transformer_engine_checks_are_gated_on_their_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`backward_override` came with TE 2.15; an older TE drops the unknown keyword."""
    text = (
        "from transformer_engine.common.recipe import Float8CurrentScaling\n"
        'r = Float8CurrentScaling(backward_override="fp32")\n'
    )
    (tmp_path / "pyproject.toml").write_text("[tool.fp8lint]\n")
    (tmp_path / "recipe.py").write_text(text)
    main(["check", "--no-cache", str(tmp_path / "recipe.py")])
    out = capsys.readouterr().out
    assert "FP8401" in out and "transformer-engine 2.20" in out
    (tmp_path / "pyproject.toml").write_text(
        '[tool.fp8lint]\ntarget-versions = {transformer-engine = "2.14"}\n'
    )
    main(["check", "--no-cache", str(tmp_path / "recipe.py")])
    assert "FP8401" not in capsys.readouterr().out
