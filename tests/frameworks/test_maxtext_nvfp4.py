"""MaxText `quantization: te_nvfp4` / `te_nvfp4_no_rht` are live FP4 sites
(AI-Hypercomputer/maxtext e591f30c `src/maxtext/layers/quantizations.py` L1026-1027)."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Framework, Recipe

BODY = "ici_tensor_parallelism: 2\nbase_emb_dim: 4096\nmodel_name: llama3-8b\n"


def _site(quant: str):  # type: ignore[no-untyped-def]
    (site,) = parse_file(SourceFile("cfg.yml", f"quantization: {quant}\n{BODY}"), "yaml")
    assert site.framework == Framework.MAXTEXT
    return site


def test_te_nvfp4_is_fp4_with_rht_left_to_the_environment() -> None:
    site = _site("te_nvfp4")
    assert site.fp4_on is True
    assert site.active_recipe == Recipe.NVFP4
    assert site.fp4.value == "e2m1"
    assert site.fp4_recipe.value == "nvfp4"
    # NVTE_NVFP4_DISABLE_RHT in the job's environment decides: not known here
    assert not site.nvfp4_disable_rht.known


def test_te_nvfp4_no_rht_turns_rht_off() -> None:
    site = _site("te_nvfp4_no_rht")
    assert site.fp4_on is True
    assert site.nvfp4_disable_rht.known
    assert site.nvfp4_disable_rht.value is True


def test_te_mxfp8_is_not_fp4() -> None:
    site = _site("te_mxfp8")
    assert site.fp4_on is not True
    assert not site.fp4_recipe.known or site.fp4_recipe.value is None
