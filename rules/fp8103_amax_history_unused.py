"""FP8103: `most_recent` reads one entry of a longer history."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import AmaxAlgo, Fp8Site
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, amax_over, term, where


class AmaxHistoryUnused(Rule):
    code = "FP8103"
    name = "amax-history-unused"
    severity = Severity.INFO
    fix = Applicability.UNSAFE
    summary = "`most_recent` with an amax history longer than 1: the window does nothing"
    valid = (
        Example(
            "max.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
        ),
        Example(
            "accelerate.yaml",
            "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_len: 1024\n",
        ),
    )
    invalid = (
        Example(
            "mr.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "te.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(amax_history_len=64, amax_compute_algo='most_recent')\n",
            lines=(2,),
            fixed=(
                "from transformer_engine.common.recipe import DelayedScaling\n"
                "r = DelayedScaling(amax_history_len=64, amax_compute_algo='max')\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        algo, hist = site.amax_compute_algo, site.amax_history_len
        if not (site.is_on and site.is_delayed and algo.value is AmaxAlgo.MOST_RECENT):
            return
        if hist.value is None or hist.value <= 1:
            return
        target = hist if hist.written else algo
        m = site.margin.value
        headroom = (
            f"headroom {m} binade{'s' if m != 1 else ''}, as with a history of 1: "
            f"{amax_over(m)} the previous one clips"
            if m is not None
            else "headroom: the margin (not readable here), as with a history of 1"
        )
        yield Finding(
            span=where(target, site),
            message=f"{term(algo)} reads only the newest entry of {term(hist)}",
            note=f"the window costs memory for nothing; {headroom}",
            headroom_binades=float(m) if m is not None else None,
            fix=FixPlan(
                Applicability.UNSAFE,
                "set amax_compute_algo max",
                (SetValue("amax_compute_algo", AmaxAlgo.MAX),),
            ),
        )
