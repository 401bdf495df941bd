"""OLMo-core's `Float8Config(...)`: torchao underneath, the head always left in BF16."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, parse_file
from fp8lint.model import Fp8Format, Framework, Recipe
from fp8lint.settings import RunSettings
from tests.frameworks.python_case import at, bind

IMPORT = "from olmo_core.float8 import AOFloat8LinearConfig, AOFloat8LinearRecipe, Float8Config\n"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "real" / "allenai__OLMo-core"


parse, one, codes = bind("train.py")


def test_recommended_config_is_tensorwise_with_the_head_left_out() -> None:
    src = IMPORT + "fp8 = Float8Config(enabled=True, ao=AOFloat8LinearConfig.recommended())\n"
    site = one(src)
    assert site.framework == Framework.TORCHAO
    assert site.kind == "OLMo-core Float8Config(...)"
    assert at(site.span) == (2, 7, 2, 72)
    assert site.enabled.value is True and site.enabled.provenance == "written"
    assert at(site.enabled.span) == (2, 28, 2, 32)
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.key == "ao"
    assert at(site.recipe.span) == (2, 37, 2, 71)
    assert "recommended()" in (site.recipe.note or "")
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.output_head_fp8.value is False and site.output_head_fp8.default_of == "OLMo-core"
    assert codes(src) == []


def test_no_ao_config_is_the_default_tensorwise_and_enabled_by_default() -> None:
    site = one(IMPORT + "cfg = Float8Config()\n")
    assert site.enabled.value is True and site.enabled.provenance == "default"
    assert site.enabled.default_of == "OLMo-core"
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.provenance == "default"
    assert at(site.recipe.span) == (2, 7, 2, 21)


@pytest.mark.parametrize(
    ("written", "recipe", "fmt"),
    [
        ('"rowwise"', Recipe.ROWWISE, Fp8Format.E4M3),
        ("AOFloat8LinearRecipe.rowwise_with_gw_hp", Recipe.ROWWISE, Fp8Format.E4M3),
        ('"tensorwise"', Recipe.TENSORWISE, Fp8Format.HYBRID),
    ],
)
def test_ao_recipe_names_a_torchao_recipe(written: str, recipe: Recipe, fmt: Fp8Format) -> None:
    site = one(IMPORT + f"cfg = Float8Config(ao_recipe={written})\n")
    assert site.recipe.value is recipe and site.recipe.provenance == "written"
    assert at(site.recipe.span) == (2, 30, 2, 30 + len(written))
    assert site.fmt.value is fmt


def test_mx_config_is_mxfp8() -> None:
    site = one(
        "from olmo_core.float8 import AOMXLinearConfig, Float8Config\n"
        "cfg = Float8Config(ao_mx=AOMXLinearConfig(block_size=32))\n"
    )
    assert site.recipe.value is Recipe.MXFP8
    assert site.fmt.value is Fp8Format.E4M3


def test_disabled_config_is_off_and_quiet() -> None:
    src = IMPORT + "cfg = Float8Config(enabled=False, ao_recipe='rowwise')\n"
    site = one(src)
    assert site.enabled.value is False and site.enabled.written
    assert codes(src) == []


def test_cast_configs_make_the_recipe_unknown() -> None:
    site = one(IMPORT + "cfg = Float8Config(ao=AOFloat8LinearConfig(cast_config_input=c))\n")
    assert site.recipe.known is False and "cast configs" in (site.recipe.note or "")


def test_two_configs_at_once_are_invalid() -> None:
    src = IMPORT + "cfg = Float8Config(ao=AOFloat8LinearConfig(), ao_recipe='rowwise')\n"
    site = one(src)
    assert [n.key for n in site.invalid] == ["ao_recipe"]
    assert ("FP8401", 2) in codes(src)


def test_unknown_recipe_name_is_invalid() -> None:
    src = IMPORT + "cfg = Float8Config(ao_recipe='delayed')\n"
    assert ("FP8401", 2) in codes(src)


def test_module_import_and_alias() -> None:
    site = one("import olmo_core.float8 as f8\ncfg = f8.Float8Config(ao_recipe='rowwise')\n")
    assert site.recipe.value is Recipe.ROWWISE
    site = one("from olmo_core.float8 import Float8Config as F8\ncfg = F8()\n")
    assert site.kind == "OLMo-core Float8Config(...)"


def test_someone_elses_float8_config_is_not_olmo_cores() -> None:
    assert parse("from mylib import Float8Config\ncfg = Float8Config(enabled=True)\n") == []
    assert parse("class Float8Config: ...\ncfg = Float8Config(enabled=True)\n") == []


def test_published_olmo3_script_has_one_quiet_site() -> None:
    files = sorted(CORPUS.glob("*.py")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip("corpus not present")
    for path in files:
        text = path.read_text()
        sites = parse_file(SourceFile(str(path), text), "python")
        assert [s.kind for s in sites] == ["OLMo-core Float8Config(...)"]
        assert sites[0].enabled.value is True
        assert sites[0].recipe.value is Recipe.TENSORWISE
        diags, _ = lint_text(str(path), text, "python", RunSettings())
        assert [d for d in diags if d.severity.value in ("warning", "error")] == []


COOKBOOK = """\
from olmo_core.internal import cookbook


def build():
    return cookbook.configure_train_module(
        max_sequence_length=65536, rank_microbatch_size=65536, float8_enabled=True
    )


def build_bf16():
    return cookbook.configure_train_module(max_sequence_length=8192, rank_microbatch_size=8192)
"""


def test_the_cookbooks_float8_enabled_is_a_tensorwise_site() -> None:
    """Issue 19, class 10: OLMo 3's scripts switch FP8 on through
    `cookbook.configure_train_module(float8_enabled=True)` (OLMo-core fa6c5014), which builds
    `Float8Config(ao=AOFloat8LinearConfig.recommended())`."""
    from fp8lint.documents.text import SourceFile
    from fp8lint.engine import parse_file
    from fp8lint.model import Recipe

    (site,) = parse_file(SourceFile("OLMo3-7B.py", COOKBOOK), "python")  # the default is off
    assert site.enabled.value is True and site.recipe.value is Recipe.TENSORWISE
    assert site.output_head_fp8.value is False
    other = COOKBOOK.replace("from olmo_core.internal import cookbook", "import cookbook")
    assert parse_file(SourceFile("x.py", other), "python") == []
