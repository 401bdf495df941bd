"""NeMo-RL `policy.megatron_cfg.env_vars` (exported to the Megatron workers) fill the site's
TE switch fields the way TE reads them (`nvte_env`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file

CFG = """\
policy:
  megatron_cfg:
    enabled: true
    fp8_cfg:
      enabled: true
      fp8: "e4m3"
      fp8_recipe: "blockwise"
      fp8_param: false
{env}"""


def _site(tmp_path: Path, env: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "grpo.yaml"
    (site,) = parse_file(SourceFile(str(path), CFG.format(env=env)), "yaml")
    return site


@pytest.mark.parametrize(("text", "value"), [('"1"', True), ("1", True), ('"0"', False)])
def test_fp32_scales_from_env_vars(tmp_path: Path, text: str, value: bool) -> None:
    env = f"    env_vars:\n      NVTE_FP8_BLOCK_SCALING_FP32_SCALES: {text}\n"
    setting = _site(tmp_path, env).block_scaling_fp32_scales
    assert setting.known and setting.value is value and setting.provenance == "written"


def test_yaml_boolean_is_unknown(tmp_path: Path) -> None:
    env = "    env_vars:\n      NVTE_FP8_BLOCK_SCALING_FP32_SCALES: true\n"
    setting = _site(tmp_path, env).block_scaling_fp32_scales
    assert setting.written and not setting.known


def test_no_env_vars_leaves_it_unset(tmp_path: Path) -> None:
    assert not _site(tmp_path, "").block_scaling_fp32_scales.known
