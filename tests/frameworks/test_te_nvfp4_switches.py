"""`NVFP4BlockScaling(...)`'s technique switches as the site's NVFP4 fields
(NVIDIA/TransformerEngine@d0067d0da `transformer_engine/common/recipe/__init__.py` L558-562,
L574, L595-609): a keyword in the call is written, one fp8lint cannot read is unknown, and
an absent one stays unset (TE's default is an `NVTE_*` variable of the job's environment)."""

from __future__ import annotations

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Framework, Recipe

IMPORT = "from transformer_engine.common.recipe import NVFP4BlockScaling\n"


def _site(call: str, before: str = "", after: str = ""):  # type: ignore[no-untyped-def]
    text = IMPORT + before + f"recipe = {call}\n" + after
    (site,) = parse_file(SourceFile("train.py", text), "python")
    assert site.framework == Framework.TE
    assert site.fp4_on is True and site.active_recipe is Recipe.NVFP4
    return site


@pytest.mark.parametrize(
    ("keyword", "field"),
    [
        ("disable_rht", "nvfp4_disable_rht"),
        ("disable_stochastic_rounding", "nvfp4_disable_sr"),
        ("disable_2d_quantization", "nvfp4_disable_2d"),
    ],
)
@pytest.mark.parametrize("value", [True, False])
def test_each_switch_is_written_where_its_value_is(keyword: str, field: str, value: bool) -> None:
    call = f"NVFP4BlockScaling({keyword}={value})"
    setting = getattr(_site(call), field)
    assert setting.known and setting.written
    assert setting.value is value
    assert setting.key == keyword
    assert setting.span.line == 2
    assert setting.span.column == len("recipe = NVFP4BlockScaling(") + len(keyword) + 2


def test_absent_switches_stay_unset() -> None:
    site = _site("NVFP4BlockScaling()")
    for field in ("nvfp4_disable_rht", "nvfp4_disable_sr", "nvfp4_disable_2d"):
        setting = getattr(site, field)
        assert not setting.known and not setting.written


def test_a_switch_bound_to_no_literal_is_unknown() -> None:
    site = _site("NVFP4BlockScaling(disable_rht=flag)", before="flag = get()\n")
    setting = site.nvfp4_disable_rht
    assert setting.written and not setting.known


def test_a_literal_through_a_name_is_read() -> None:
    site = _site("NVFP4BlockScaling(disable_stochastic_rounding=OFF)", before="OFF = True\n")
    assert site.nvfp4_disable_sr.value is True


def test_an_assignment_after_the_call_does_not_count() -> None:
    # TE builds the quantizers' parameters in __post_init__: a later assignment changes nothing
    site = _site("NVFP4BlockScaling()", after="recipe.disable_rht = True\n")
    assert not site.nvfp4_disable_rht.known


def test_backward_override_keyword_is_read() -> None:
    site = _site('NVFP4BlockScaling(disable_rht=True, backward_override="dequantized")')
    assert site.backward_override.value == "dequantized"
    assert site.nvfp4_disable_rht.value is True
