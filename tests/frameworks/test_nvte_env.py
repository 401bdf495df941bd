"""`NVTE_*` recipe switches written in a launch script become fields of its Megatron/Bridge
site (TE d0067d0d `transformer_engine/common/recipe/__init__.py` L261, L429, L558-564: a
switch is True only for the text `1`)."""

from __future__ import annotations

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.shared.nvte_env import env_value

LAUNCH = "torchrun --nproc-per-node 8 pretrain_gpt.py --fp4-format e2m1 --num-layers 32\n"


def _site(prefix: str, launch: str = LAUNCH):  # type: ignore[no-untyped-def]
    (site,) = parse_file(SourceFile("run.sh", "#!/bin/bash\n" + prefix + launch), "shell")
    return site


@pytest.mark.parametrize(
    ("var", "field"),
    [
        ("NVTE_NVFP4_DISABLE_RHT", "nvfp4_disable_rht"),
        ("NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING", "nvfp4_disable_sr"),
        ("NVTE_NVFP4_DISABLE_2D_QUANTIZATION", "nvfp4_disable_2d"),
        ("NVTE_NVFP4_ROW_SCALED_ACTIVATION", "nvfp4_row_scaled"),
        ("NVTE_FP8_BLOCK_SCALING_FP32_SCALES", "block_scaling_fp32_scales"),
    ],
)
def test_exported_switch(var: str, field: str) -> None:
    on = getattr(_site(f"export {var}=1\n"), field)
    assert on.known and on.value is True and on.provenance == "written"
    off = getattr(_site(f"export {var}=0\n"), field)
    assert off.known and off.value is False


def test_prefix_assignment_counts() -> None:
    site = _site("NVTE_NVFP4_DISABLE_RHT=1 ")
    assert site.fp4_on is True
    assert site.nvfp4_disable_rht.value is True


def test_only_the_text_1_is_true() -> None:
    assert env_value("1", True) is True
    assert env_value("true", True) is False
    assert env_value("yes", True) is False
    assert _site("export NVTE_NVFP4_DISABLE_RHT=true\n").nvfp4_disable_rht.value is False


def test_unread_value_is_unknown() -> None:
    setting = _site('export NVTE_NVFP4_DISABLE_RHT="$RHT"\n').nvfp4_disable_rht
    assert setting.written and not setting.known


def test_not_written_stays_unset() -> None:
    """The job's environment may set it: not TE's default False."""
    site = _site("")
    assert not site.nvfp4_disable_rht.known
    assert not site.nvfp4_disable_rht.written
    assert not site.block_scaling_fp32_scales.known


def test_string_switches_keep_their_text() -> None:
    site = _site("export NVTE_NVFP4_4OVER6=all\nexport NVTE_BACKWARD_OVERRIDE=dequantized\n")
    assert site.nvfp4_4over6.value == "all"
    assert site.backward_override.value == "dequantized"


def test_bridge_launch_takes_the_script_env() -> None:
    launch = (
        "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
        "mixed_precision=bf16_with_nvfp4_mixed\n"
    )
    site = _site("export NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1\n", launch)
    assert site.fp4_on is True
    assert site.nvfp4_disable_sr.value is True
