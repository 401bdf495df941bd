"""FP8104: a negative margin saturates the top of every tensor by design."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, term, where

# the recipes whose scale a margin sets: TE's DelayedScaling (Megatron passes `fp8_margin`
# to it alone: megatron/core/fp8_utils.py L771-795 @d98e8a64) and MS-AMP's
MARGIN_RECIPES = (Recipe.DELAYED, Recipe.MSAMP)


class NegativeMargin(Rule):
    code = "FP8104"
    name = "negative-margin"
    severity = Severity.ERROR
    fix = Applicability.UNSAFE
    summary = "Negative margin: the scale overshoots FP8_MAX on every step"
    valid = (
        Example(
            "tensorwise.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --fp8-margin: -1\n  --first-last-layers-bf16: true\n",
        ),
        Example(
            "zero.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 0\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
        ),
    )
    invalid = (
        Example(
            "neg.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: -1\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 0\n"
                "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "te.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(margin=-2)\n",
            lines=(2,),
            fixed=(
                "from transformer_engine.common.recipe import DelayedScaling\n"
                "r = DelayedScaling(margin=0)\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        m = site.margin.value
        if not site.is_on or m is None or m >= 0 or site.recipe.value not in MARGIN_RECIPES:
            return  # another recipe never reads the margin (FP8402 says it is ignored)
        yield Finding(
            span=where(site.margin, site),
            message=f"negative margin: {term(site.margin)}",
            note=(
                f"headroom {m} binades: the reference amax maps to 2^{-m} x FP8_MAX, so values "
                f"above 1/2^{-m} of it saturate on every step"
            ),
            headroom_binades=float(m),
            fix=FixPlan(Applicability.UNSAFE, "set margin 0", (SetValue("margin", 0),)),
        )
