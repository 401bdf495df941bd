"""FP8105: a margin so large it spends many binades of precision."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, pow2, term, where

# log2(FP8_MAX / smallest normal): E4M3 448/2^-6, E5M2 57344/2^-14
NORMAL_BINADES = {"e4m3": 14.8, "e5m2": 29.8}


class LargeMargin(Rule):
    code = "FP8105"
    name = "large-margin"
    severity = Severity.INFO
    summary = "Margin of 4 or more: each unit costs one binade at the bottom of the range"
    valid = (
        Example(
            "m2.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 2\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
        ),
    )
    invalid = (
        Example(
            "m4.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 4\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            lines=(3,),
        ),
        Example(
            "te.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(margin=6)\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        m = site.margin.value
        if not (site.is_on and site.is_delayed) or m is None or m < 4:
            return
        fwd = site.fmt.value.forward if site.fmt.value is not None else "e4m3"
        left = NORMAL_BINADES[fwd] - m
        yield Finding(
            span=where(site.margin, site),
            message=f"large margin: {term(site.margin)} shifts every value {m} binades down",
            note=(
                f"headroom {m} binades ({pow2(m)}x), but {fwd.upper()} keeps about {left:.1f} of "
                f"its {NORMAL_BINADES[fwd]} normal binades and small values underflow; NVIDIA "
                "uses 0"
            ),
            headroom_binades=float(m),
        )
