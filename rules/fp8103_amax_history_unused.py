"""FP8103: `most_recent` reads one entry of a longer history."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import AmaxAlgo, Fp8Site
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, explain, pow2, where


class AmaxHistoryUnused(Rule):
    code = "FP8103"
    name = "amax-history-unused"
    severity = Severity.INFO
    fix = Applicability.SAFE
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
            f"{m} binade{'s' if m != 1 else ''}, as with a history of 1: a micro-batch whose "
            f"amax is g > {pow2(m)} times the previous one clips and its outlier loses "
            f"1 - {pow2(m)}/g of its magnitude"
            if m is not None
            else "the margin (not readable here), in binades, as with a history of 1"
        )
        yield Finding(
            span=where(target, site),
            message=(
                f"amax_compute_algo {explain(algo)} reads only the newest of the "
                f"{hist.value} history entries ({explain(hist)}): the window costs memory and "
                f"protects against nothing. Guaranteed headroom: {headroom}. Use "
                "amax_compute_algo max to make the window count, or amax_history_len 1 to say "
                "what is meant"
            ),
            headroom_binades=float(m) if m is not None else None,
            fix=FixPlan(
                Applicability.SAFE,
                "set amax_compute_algo max",
                (SetValue("amax_compute_algo", AmaxAlgo.MAX),),
            ),
        )
