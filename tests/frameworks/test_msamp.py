"""MS-AMP from Python: `msamp.initialize(model, optimizer, opt_level=...)`."""

from __future__ import annotations

import pytest

from fp8lint.model import Framework, Recipe
from tests.frameworks.python_case import at, bind

parse, one, codes = bind("train.py")


def test_msamp_initialize_as_in_ms_amps_mnist_example() -> None:
    src = (
        "import msamp\n"
        "if args.enable_msamp:\n"
        "    model, optimizer = msamp.initialize(model, optimizer, opt_level=args.opt_level)\n"
    )
    site = one(src)
    assert site.framework == Framework.DEEPSPEED_MSAMP
    assert site.kind == "MS-AMP msamp.initialize(...)"
    assert at(site.span) == (3, 24, 3, 84)
    assert site.enabled.value is True and site.recipe.value is Recipe.MSAMP
    assert codes(src) == []


@pytest.mark.parametrize(
    ("call", "bad"),
    [
        ("msamp.initialize(model, optimizer)", False),
        ("msamp.initialize(model, optimizer, 'O2')", False),
        ("msamp.initialize(model, optimizer, opt_level='O3')", True),
        ("msamp.initialize(model, optimizer, opt_level='o2')", True),
    ],
)
def test_msamp_opt_levels(call: str, bad: bool) -> None:
    src = f"import msamp\nm, o = {call}\n"
    site = one(src)
    assert [n.key for n in site.invalid] == (["opt_level"] if bad else [])
    assert codes(src) == ([("FP8401", 2)] if bad else [])
    assert "O1" in (site.recipe.note or "") or call.endswith("'O2')") or bad


def test_other_initialize_calls_are_not_msamp() -> None:
    assert parse("import msamp\nimport deepspeed\nengine = deepspeed.initialize(model=m)\n") == []
    assert parse("from msamp import initialize as init\nm, o = init(model)\n")[0].kind == (
        "MS-AMP msamp.initialize(...)"
    )
