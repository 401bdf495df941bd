"""FP8106: margin below a team's headroom policy (opt-in)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import (
    Example,
    Finding,
    FixPlan,
    Option,
    Rule,
    SetValue,
    amax_over,
    enabled_related,
    pow2,
    term,
    where,
)


class MarginBelowPolicy(Rule):
    code = "FP8106"
    name = "margin-below-policy"
    severity = Severity.WARNING
    fix = Applicability.UNSAFE
    summary = "Delayed-scaling margin below the configured `min-margin`"
    default_enabled = False
    options = (Option("min-margin", int, 2, "smallest margin the team accepts"),)
    valid = (
        Example(
            "m2.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 2\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
        ),
        Example("cs.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"),
    )
    invalid = (
        Example(
            "m0.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
            lines=(2,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n  --fp8-margin: 2\n"
            ),
            unsafe=True,
        ),
        Example(
            "m1.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(margin=1)\n",
            lines=(2,),
            fixed=(
                "from transformer_engine.common.recipe import DelayedScaling\n"
                "r = DelayedScaling(margin=2)\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        m = site.margin.value
        minimum = int(options["min-margin"])
        if not (site.is_on and site.is_delayed) or m is None or m < 0 or m >= minimum:
            return
        yield Finding(
            span=where(site.margin, site),
            message=f"{term(site.margin)} is below the policy minimum of {minimum}",
            note=(
                f"headroom {m} binade{'s' if m != 1 else ''}: {amax_over(m)} the reference amax "
                "clips; the policy asks for "
                f"{minimum} binade{'s' if minimum != 1 else ''} ({pow2(minimum)}x)"
            ),
            related=enabled_related(site, site.margin),
            headroom_binades=float(m),
            fix=FixPlan(
                Applicability.UNSAFE,
                f"set margin {minimum} (changes the numerics: every value moves down "
                f"{minimum - m} binade{'s' if minimum - m != 1 else ''})",
                (SetValue("margin", minimum),),
            ),
        )
