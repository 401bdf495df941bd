"""NeMo-RL: `policy.megatron_cfg.fp8_cfg`, the Megatron keys beside it, `defaults:` parents."""

from __future__ import annotations

import json
from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Fp8Format, Framework, Recipe

from ..conftest import lint, run_cli

BASE = """\
policy:
  generation:
    vllm_cfg:
      precision: bfloat16
  megatron_cfg:
    enabled: true
    activation_checkpointing: true
    tensor_model_parallel_size: 2
    sequence_parallel: true
    fp8_cfg:
      enabled: false
      fp8: "hybrid"
      fp8_recipe: "delayed"
      fp8_param: false
"""

CHILD = """\
defaults: "base.yaml"
policy:
  generation:
    vllm_cfg:
      precision: "fp8"
  megatron_cfg:
    fp8_cfg:
      enabled: true
      fp8: "e4m3"
      fp8_recipe: "blockwise"
      fp8_param: false
    env_vars:
      NVTE_FP8_BLOCK_SCALING_FP32_SCALES: "1"
"""


def sites(path: Path, text: str):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile(str(path), text), "yaml")


def test_fp8_cfg_and_megatron_keys_with_spans(tmp_path: Path) -> None:
    text = BASE.replace("enabled: false", "enabled: true")
    (site,) = sites(tmp_path / "base.yaml", text)
    assert site.framework == Framework.BRIDGE and "NeMo-RL" in site.kind
    assert site.enabled.value is True and site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (11, 16)
    assert site.fmt.value is Fp8Format.HYBRID and site.fmt.span is not None
    assert site.fmt.span.line == 12
    assert site.recipe.value is Recipe.DELAYED and site.recipe.written
    # NeMo-RL copies only fp8/fp8_recipe/fp8_param: TransformerConfig's delayed defaults apply
    assert site.amax_history_len.value == 1 and site.amax_history_len.provenance == "default"
    assert site.amax_compute_algo.value is AmaxAlgo.MOST_RECENT
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.span is not None
    assert site.tensor_parallel.span.line == 8
    assert site.sequence_parallel.value is True
    assert site.recompute_granularity.value == "full"
    assert site.fp8_param_gather.value is False and site.fp8_param_gather.written
    codes = {d.code for d in lint("base.yaml", text)}
    assert "FP8101" in codes  # delayed, history 1, most_recent: really zero headroom


def test_enabled_false_is_the_sites_switch(tmp_path: Path) -> None:
    (site,) = sites(tmp_path / "base.yaml", BASE)
    assert site.enabled.value is False and site.enabled.written
    assert site.enabled.span is not None and site.enabled.span.line == 11
    off_backend = BASE.replace("    enabled: true\n", "    enabled: false\n").replace(
        "enabled: false\n      fp8:", "enabled: true\n      fp8:"
    )
    (backend,) = sites(tmp_path / "b.yaml", off_backend)
    assert backend.enabled.value is False and backend.enabled.span is not None
    assert backend.enabled.span.line == 6  # megatron_cfg.enabled: false


def test_activation_checkpointing_false_means_no_recompute(tmp_path: Path) -> None:
    text = BASE.replace("activation_checkpointing: true", "activation_checkpointing: false")
    (site,) = sites(tmp_path / "base.yaml", text)
    assert site.recompute_granularity.value is None and site.recompute_granularity.written


def test_defaults_parent_is_merged_and_notes_are_recorded(tmp_path: Path) -> None:
    (tmp_path / "base.yaml").write_text(BASE)
    child = tmp_path / "fp8.yaml"
    child.write_text(CHILD)
    (site,) = sites(child, CHILD)
    assert site.layers and site.layers[-1].endswith("fp8.yaml")
    assert site.enabled.value is True and site.recipe.value is Recipe.BLOCKWISE
    assert site.fmt.value is Fp8Format.E4M3
    # from the parent file, with its own path and line
    tp = site.tensor_parallel
    assert tp.value == 2 and tp.span is not None and tp.span.path.endswith("base.yaml")
    assert tp.span.line == 8
    kinds = {n.kind: n for n in site.notes}
    assert kinds["env"].key == "NVTE_FP8_BLOCK_SCALING_FP32_SCALES" and kinds["env"].span.line == 13
    assert kinds["inference"].span.line == 5
    # blockwise E4M3 with the rollout in FP8: no warning or error (vLLM FP8 is inference)
    from ..conftest import run_cli

    r = run_cli("check", str(child), "--output-format", "json", "--exit-zero")
    assert '"severity": "warning"' not in r.stdout and '"severity": "error"' not in r.stdout


def test_fp8_cfg_without_policy_megatron_is_not_nemo_rl(tmp_path: Path) -> None:
    found = sites(tmp_path / "x.yaml", "fp8_cfg:\n  enabled: true\n  fp8: e4m3\n")
    assert all("NeMo-RL" not in s.kind for s in found)


def test_a_parent_that_is_not_read_leaves_its_settings_unknown(tmp_path: Path) -> None:
    """Issue 19, class 1: a value an unread `defaults:` layer could set is unknown, not the
    framework's default, so no rule guesses from it; FP8407 says once what was not read, and
    a value the file writes itself still counts."""
    recipe = tmp_path / "recipes" / "grpo_fp8.yaml"
    recipe.parent.mkdir()
    recipe.write_text(
        "defaults: grpo_base.yaml\n"
        "policy:\n  megatron_cfg:\n    enabled: true\n"
        "    fp8_cfg:\n      enabled: true\n      fp8: hybrid\n"
    )
    r = run_cli("check", ".", "--output-format", "json", "--exit-zero", cwd=tmp_path)
    codes = [d["code"] for d in json.loads(r.stdout)]
    assert codes == ["FP8407"]  # no FP8101 from a margin or algorithm the parent may set
    (site,) = parse_file(SourceFile(str(recipe), recipe.read_text()), "yaml")
    assert site.fmt.value is not None and site.fmt.known  # written here
    assert not site.margin.known and "grpo_base.yaml" in (site.margin.note or "")
    # once the parent is there and says nothing, the defaults apply again
    (recipe.parent / "grpo_base.yaml").write_text("policy:\n  megatron_cfg:\n    enabled: true\n")
    r = run_cli("check", ".", "--output-format", "json", "--exit-zero", cwd=tmp_path)
    assert "FP8101" in [d["code"] for d in json.loads(r.stdout)]


def test_a_grandparent_that_is_not_read_leaves_its_settings_unknown(tmp_path: Path) -> None:
    """The parent is read but its own parent (which might set blockwise) is not: the child's
    recipe is unknown, not Megatron's delayed default, so FP8101 does not fire."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "grpo_fp8.yaml").write_text(
        "defaults: grpo_mid.yaml\npolicy:\n  megatron_cfg:\n    fp8_cfg:\n"
        "      enabled: true\n      fp8: hybrid\n"
    )
    (folder / "grpo_mid.yaml").write_text(
        "defaults: grpo_base_missing.yaml\npolicy:\n  megatron_cfg:\n    enabled: true\n"
    )
    child = folder / "grpo_fp8.yaml"
    (site,) = parse_file(SourceFile(str(child), child.read_text()), "yaml")
    assert site.fmt.known and not site.recipe.known
    assert "grpo_base_missing.yaml" in (site.recipe.note or "")
    assert "FP8101" not in [d.code for d in lint(str(child), child.read_text())]


def test_a_nemo_rl_recipe_is_a_fine_tune() -> None:
    """Issue 19, class 2: NeMo-RL post-trains the checkpoint `policy.model_name` names, so the
    severity policy's fine-tune rule applies to every one of its sites."""
    text = (
        "policy:\n  model_name: m\n  megatron_cfg:\n    enabled: true\n    fp8_cfg:\n"
        "      enabled: true\n      fp8: hybrid\n      fp8_recipe: delayed\n"
    )
    (site,) = parse_file(SourceFile("grpo.yaml", text), "yaml")
    assert site.fine_tune.value is True


def test_modelopt_quant_cfg_is_a_fake_quantization_site() -> None:
    """Issue 19, class 10: `policy.quant_cfg` (a ModelOpt preset or recipe path) trains with
    FP4/FP8 fake quantization: a site that says so, which no scaling rule reads; null is
    off."""
    text = (
        'policy:\n  model_name: m\n  quant_cfg: "NVFP4_DEFAULT_CFG"\n'
        "  megatron_cfg:\n    enabled: true\n"
    )
    (site,) = parse_file(SourceFile("qad.yaml", text), "yaml")
    assert site.enabled.value is True and not site.recipe.known
    assert "ModelOpt quantization-aware training" in site.kind
    assert [d.code for d in lint("qad.yaml", text)] == []
    off = text.replace('"NVFP4_DEFAULT_CFG"', "null")
    assert parse_file(SourceFile("qad.yaml", off), "yaml") == []
