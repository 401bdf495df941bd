"""NeMo-RL `policy.megatron_cfg.fp4_cfg` (issue 22): a live FP4 site with the format, recipe,
`fp4_param`, the BF16 layer keys, the precision file and the `env_vars` NVFP4 switches; the
per-token GRPO recipe's shape is warning-free, and `fp8_cfg` with `fp4_cfg` is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.diagnostics import Severity
from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Site, Recipe
from fp8lint.report.sites import render_sites

from ..conftest import lint, run_cli

PARENT = """\
policy:
  model_name: some/base-model
  megatron_cfg:
    enabled: false
    fp8_cfg: null
    env_vars: null
"""

# the shape of NVIDIA-NeMo/RL@291c6f11 `examples/configs/recipes/llm/
# grpo-qwen3-30ba3b-base-8n4g-megatron-te-nvfp4-pertoken.yaml`, written anew: FP4 switched on
# by `enabled` alone (the per-token rollout fixes the rest), 2 + 4 BF16 layers of 48, the
# attention kept BF16 by a precision file, the NVFP4 switches in env_vars
PERTOKEN = """\
defaults: parent.yaml
grpo:
  max_num_steps: 1500
policy:
  model_name: Qwen/Qwen3-30B-A3B-Base
  megatron_cfg:
    enabled: true
    tensor_model_parallel_size: 2
    expert_model_parallel_size: 8
    sequence_parallel: true
    fp4_cfg:
      enabled: true
    first_last_layers_bf16: true
    num_layers_at_start_in_bf16: 2
    num_layers_at_end_in_bf16: 4
    te_precision_config_file: examples/te_precision/attn_bf16_mlp_nvfp4.yaml
    env_vars:
      NVTE_NVFP4_ROW_SCALED_ACTIVATION: '1'
      NVTE_NVFP4_DISABLE_RHT: '1'
      NVTE_NVFP4_DISABLE_2D_QUANTIZATION: '1'
      NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING: '1'
      NVTE_BACKWARD_OVERRIDE: dequantized
  generation:
    nvfp4_pertoken_rollout:
      enabled: true
"""

EXPLICIT = """\
policy:
  megatron_cfg:
    enabled: true
    fp4_cfg:
      enabled: {enabled}
      fp4: e2m1
      fp4_recipe: {recipe}
      fp4_param: false
{extra}"""

FP8 = """\
    fp8_cfg:
      enabled: true
      fp8: e4m3
      fp8_recipe: blockwise
      fp8_param: false
"""

NVFP4_RULES = ("FP8701", "FP8702", "FP8703", "FP8704")


def one(path: Path, text: str) -> Fp8Site:
    path.write_text(text)
    (site,) = parse_file(SourceFile(str(path), text), "yaml")
    return site


def explicit(enabled: str = "true", recipe: str = "nvfp4", extra: str = "") -> str:
    return EXPLICIT.format(enabled=enabled, recipe=recipe, extra=extra)


def test_the_pertoken_recipe_is_a_live_fp4_site(tmp_path: Path) -> None:
    (tmp_path / "parent.yaml").write_text(PARENT)
    site = one(tmp_path / "grpo-nvfp4-pertoken.yaml", PERTOKEN)
    assert site.kind == "NeMo-RL policy.megatron_cfg.fp4_cfg"
    assert site.fp4_on is True and site.quantized and not site.is_on
    assert site.active_recipe is Recipe.NVFP4
    # unwritten, but fixed by the per-token rollout's requirement
    assert (site.fp4.value, site.fp4.provenance) == ("e2m1", "derived")
    assert site.fp4_recipe.value == "nvfp4" and site.fp4_param_gather.value is False
    assert site.enable_span is not None and site.enable_span.line == 12
    assert site.first_last_layers_bf16.value is True and site.first_last_layers_bf16.written
    assert (site.num_layers_at_start_in_bf16.value, site.num_layers_at_end_in_bf16.value) == (2, 4)
    assert site.nvfp4_row_scaled.value is True and site.nvfp4_disable_rht.value is True
    assert site.nvfp4_disable_2d.value is True and site.nvfp4_disable_sr.value is True
    assert site.backward_override.value == "dequantized"
    assert site.nvfp4_disable_rht.key == "policy.megatron_cfg.env_vars.NVTE_NVFP4_DISABLE_RHT"
    (override,) = site.precision_overrides
    assert override.feature == "te_precision_config_file" and override.span.line == 16
    assert site.fine_tune.value is True  # post-training: never a long pre-training run
    out = render_sites(site.path, [site])
    assert "precision                    FP4 nvfp4 (FP8 off)\n" in out
    assert "attn_bf16_mlp_nvfp4.yaml" in out


def test_the_pertoken_recipe_gets_no_warning(tmp_path: Path) -> None:
    (tmp_path / "parent.yaml").write_text(PARENT)
    path = tmp_path / "grpo-nvfp4-pertoken.yaml"
    path.write_text(PERTOKEN)
    diags = lint(str(path), PERTOKEN, select=("ALL",))
    assert [d for d in diags if d.severity is not Severity.INFO] == []
    nvfp4 = {d.code: d.severity for d in diags if d.code in NVFP4_RULES}
    # RHT/SR/2D off is info (backward dequantized, post-training); row-scaled activations
    # with RHT off are fine; 2 + 4 BF16 layers (and a precision file) are no finding
    assert nvfp4 == {"FP8702": Severity.INFO}
    shown = run_cli("check", "--select", "ALL", "--no-cache", str(path), cwd=tmp_path)
    assert "FP8702 [info] NVFP4 with RHT, stochastic rounding and 2D weight scaling off" in (
        shown.stdout
    )
    assert "[warning]" not in shown.stdout and "[error]" not in shown.stdout


def test_written_fp4_keys_keep_their_spans(tmp_path: Path) -> None:
    site = one(tmp_path / "grpo.yaml", explicit())
    assert site.fp4_on is True and site.active_recipe is Recipe.NVFP4
    assert site.fp4.written and site.fp4.span is not None and site.fp4.span.line == 6
    assert site.fp4.key == "policy.megatron_cfg.fp4_cfg.fp4"
    assert site.fp4_recipe.written and site.fp4_recipe.key.endswith("fp4_cfg.fp4_recipe")
    assert site.fp4_param_gather.written and site.fp4_param_gather.value is False
    assert site.fp4_param_gather.key == "policy.megatron_cfg.fp4_cfg.fp4_param"


def test_enabled_alone_leaves_the_format_unknown(tmp_path: Path) -> None:
    """Without the per-token rollout nothing fixes the format: FP4 is not known to be on."""
    text = "policy:\n  megatron_cfg:\n    enabled: true\n    fp4_cfg:\n      enabled: true\n"
    site = one(tmp_path / "grpo.yaml", text)
    assert not site.fp4.known and site.fp4_on is None
    assert [d for d in lint("grpo.yaml", text, select=("ALL",)) if d.code in NVFP4_RULES] == []


@pytest.mark.parametrize(
    "text",
    [
        explicit(enabled="false"),
        explicit().replace("enabled: true\n    fp4_cfg", "enabled: false\n    fp4_cfg"),
    ],
    ids=["fp4_cfg-off", "backend-off"],
)
def test_fp4_off_is_a_dormant_site(tmp_path: Path, text: str) -> None:
    site = one(tmp_path / "grpo.yaml", text)
    assert site.fp4_on is False and not site.quantized


def test_an_fp4_recipe_megatron_lacks_is_fp8401() -> None:
    diags = lint("grpo.yaml", explicit(recipe="mxfp4"))
    assert [(d.code, d.line) for d in diags] == [("FP8401", 7)]


@pytest.mark.parametrize("fmt", ["      fp4: e2m1\n", ""], ids=["format", "switches-only"])
def test_fp8_cfg_and_fp4_cfg_both_on_is_an_error(tmp_path: Path, fmt: str) -> None:
    text = explicit(extra=FP8).replace("      fp4: e2m1\n", fmt)
    site = one(tmp_path / "grpo.yaml", text)
    assert site.is_on
    errors = [d for d in lint("grpo.yaml", text) if d.severity is Severity.ERROR]
    assert [d.code for d in errors] == ["FP8403"]
    assert errors[0].message.startswith("FP8 and FP4 are both on")


def test_fp8_cfg_with_fp4_cfg_off_is_plain_fp8() -> None:
    text = explicit(enabled="false", extra=FP8)
    assert [d for d in lint("grpo.yaml", text) if d.code == "FP8403"] == []


def test_row_scaled_with_rht_on_is_fp8703(tmp_path: Path) -> None:
    env = "    env_vars:\n      NVTE_NVFP4_ROW_SCALED_ACTIVATION: '1'\n"
    env += "      NVTE_NVFP4_DISABLE_RHT: '0'\n"
    diags = [d for d in lint("grpo.yaml", explicit(extra=env)) if d.code == "FP8703"]
    assert [(d.severity, d.line) for d in diags] == [(Severity.ERROR, 10)]


def test_no_bf16_layers_is_info_for_post_training() -> None:
    text = explicit(extra="    first_last_layers_bf16: false\n")
    diags = [d for d in lint("grpo.yaml", text) if d.code == "FP8701"]
    assert [d.severity for d in diags] == [Severity.INFO]
