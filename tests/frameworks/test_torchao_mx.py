"""torchao's MX and NVFP4 training configs (issue 22, item 1): `MXLinearConfig(...)` and
`MXLinearConfig.from_recipe_name(...)` (pytorch/ao@7bb7f061 `mx_formats/config.py`), the op
configs' `from_recipe(...)` and `NVFP4TrainingConfig` (pytorch/ao@36027d82)."""

from __future__ import annotations

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import mentions_fp8, parse_file
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe
from fp8lint.report.sites import render_sites

from ..conftest import lint

HEAD = (
    "import torch\n"
    "from torchao.prototype.mx_formats import MXLinearConfig, MXLinearRecipeName\n"
    "from torchao.quantization import quantize_\n"
)


def one(line: str, head: str = HEAD) -> Fp8Site:
    sites = parse_file(SourceFile("train.py", head + line), "python")
    assert len(sites) == 1, [s.kind for s in sites]
    assert sites[0].framework == Framework.TORCHAO
    return sites[0]


def precision(site: Fp8Site) -> str:
    out = render_sites("train.py", [site])
    (line,) = [x for x in out.splitlines() if x.strip().startswith("precision")]
    return line.split(None, 1)[1]


@pytest.mark.parametrize(
    ("call", "written"),
    [
        ("MXLinearConfig()", False),
        ("MXLinearConfig(elem_dtype=torch.float8_e4m3fn)", True),
        ('MXLinearConfig.from_recipe_name("mxfp8_cublas")', True),
        ('MXLinearConfig.from_recipe_name("mxfp8_emulated")', True),
        ("MXLinearConfig.from_recipe_name(recipe_name='mxfp8_cublas_rceil')", True),
        ("MXLinearConfig.from_recipe_name(MXLinearRecipeName.MXFP8_CUBLAS)", True),
    ],
)
def test_mxfp8_configs_are_live_mxfp8_sites(call: str, written: bool) -> None:
    site = one(f"quantize_(model, {call})\n")
    assert site.is_on and site.quantized
    assert site.recipe.value is Recipe.MXFP8 and site.active_recipe is Recipe.MXFP8
    assert site.recipe.written is written
    assert site.fmt.value is Fp8Format.E4M3
    assert site.fp4_on is None
    assert precision(site) == "FP8 mxfp8"
    assert site.invalid == []


@pytest.mark.parametrize(
    "call",
    [
        "MXLinearConfig(elem_dtype=torch.float4_e2m1fn_x2)",
        "MXLinearConfig(32, torch.float4_e2m1fn_x2)",
        'MXLinearConfig.from_recipe_name("mxfp4_cutlass")',
        'MXLinearConfig.from_recipe_name("mxfp4_emulated")',
        "MXLinearConfig.from_recipe_name(MXLinearRecipeName.MXFP4_CUTLASS)",
    ],
)
def test_mxfp4_configs_are_fp4_sites_with_fp8_off(call: str) -> None:
    site = one(f"quantize_(model, {call})\n")
    assert site.enabled.value is False and site.enabled.known
    assert site.fp4.value == "e2m1" and site.fp4.written
    assert site.fp4_recipe.value == "mxfp4"
    assert site.fp4_on is True and site.quantized
    assert site.active_recipe is None  # no model Recipe for MXFP4: NVFP4 rules stay silent
    assert precision(site) == "FP4 mxfp4 (FP8 off)"
    assert lint("train.py", HEAD + f"quantize_(model, {call})\n") == []


def test_the_mxfp4_site_points_at_what_chose_fp4() -> None:
    site = one('cfg = MXLinearConfig.from_recipe_name("mxfp4_cutlass")\n')
    assert site.kind == "torchao MXLinearConfig.from_recipe_name(...) (low-precision training)"
    assert site.fp4.key == "recipe_name" and site.fp4.raw == '"mxfp4_cutlass"'
    assert (site.fp4.span.line, site.fp4.span.column) == (4, 39)


@pytest.mark.parametrize(
    "call",
    [
        "MXLinearConfig.from_recipe_name(name)",  # not a literal: never guessed
        "MXLinearConfig(elem_dtype=cfg.dtype)",
        "MXLinearConfig(**kwargs)",
        "MXLinearConfig(elem_dtype_weight_override=torch.float4_e2m1fn_x2)",
        'MXLinearConfig(elem_dtype="fp6_e2m3")',  # FP6: neither FP8 nor FP4
        "MXLinearConfig.from_recipe_name()",
    ],
)
def test_what_is_not_known_stays_unknown(call: str) -> None:
    site = one(f"quantize_(model, {call})\n")
    assert not site.enabled.known and not site.recipe.known
    assert site.fp4_on is None and not site.quantized
    assert precision(site) == "unknown"
    assert site.invalid == []


def test_an_override_of_none_is_no_override() -> None:
    site = one("quantize_(model, MXLinearConfig(elem_dtype_weight_override=None))\n")
    assert site.recipe.value is Recipe.MXFP8


def test_a_misspelled_recipe_name_is_rejected_as_torchao_does() -> None:
    src = 'quantize_(model, MXLinearConfig.from_recipe_name("mxfp8_cublass"))\n'
    site = one(src)
    assert not site.recipe.known and not site.enabled.known
    (note,) = site.invalid
    assert "mxfp8_cublas" in note.message and "mxfp4_cutlass" in note.message
    assert [d.code for d in lint("train.py", HEAD + src)] == ["FP8401"]


def test_a_non_torch_dtype_is_not_an_invalid_value() -> None:
    src = "quantize_(model, MXLinearConfig(elem_dtype=torch.bfloat16))\n"
    site = one(src)  # torch's, but not an MX element type: torchao asserts
    assert len(site.invalid) == 1 and not site.recipe.known


def test_e5m2_elements_are_mxfp8_with_no_te_format() -> None:
    src = "quantize_(model, MXLinearConfig(elem_dtype=torch.float8_e5m2))\n"
    site = one(src)
    assert site.recipe.value is Recipe.MXFP8 and not site.fmt.known
    assert lint("train.py", HEAD + src) == []  # TE's pure-E5M2 refusal is not torchao's


def test_a_local_class_of_the_same_name_is_not_torchao() -> None:
    src = "class MXLinearConfig:\n    pass\ncfg = MXLinearConfig.from_recipe_name('mxfp8_cublas')\n"
    assert parse_file(SourceFile("x.py", src), "python") == []


def test_the_op_configs_recipe_factories() -> None:
    head = (
        "from torchao.prototype.moe_training.config import (\n"
        "    Float8TrainingOpConfig, Float8TrainingRecipe, MXFP8TrainingOpConfig,\n"
        "    MXFP8TrainingRecipe,\n)\n"
    )
    src = (
        "a = MXFP8TrainingOpConfig.from_recipe(MXFP8TrainingRecipe.MXFP8_RCEIL_WGRAD_WITH_HP)\n"
        "b = Float8TrainingOpConfig.from_recipe(Float8TrainingRecipe.FP8_ROWWISE)\n"
        "c = MXFP8TrainingOpConfig.from_recipe(recipe)\n"
    )
    mx, f8, unknown = parse_file(SourceFile("moe.py", head + src), "python")
    assert mx.recipe.value is Recipe.MXFP8 and mx.recipe.written and mx.is_on
    assert precision(mx) == "FP8 mxfp8"
    assert f8.recipe.value is Recipe.ROWWISE and f8.fmt.value is Fp8Format.E4M3
    assert not unknown.recipe.known and precision(unknown) == "unknown"


def test_nvfp4_training_config_is_fp4_with_no_fp8_format() -> None:
    head = (
        "from torchao.prototype.moe_training.nvfp4_training.nvfp4_training import "
        "NVFP4TrainingConfig\nfrom torchao.quantization import quantize_\n"
    )
    site = one("quantize_(model, NVFP4TrainingConfig())\n", head)
    assert site.kind == "torchao NVFP4TrainingConfig(...) (low-precision training)"
    assert site.recipe.value is Recipe.NVFP4 and site.fp4_on is True
    assert site.active_recipe is Recipe.NVFP4
    assert not site.fmt.known  # NVFP4 is E2M1: no FP8 format is implied
    assert precision(site) == "FP4 nvfp4"


def test_the_prefilter_passes_an_mx_file_that_names_no_fp8() -> None:
    text = HEAD + "quantize_(model, MXLinearConfig())\n"
    assert "fp8" not in text.lower() and "fp4" not in text.lower()
    assert mentions_fp8(text.encode())
