"""FP8303: amax reduced over TP (x CP) only, leaving data-parallel replicas apart."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where


class TpOnlyAmaxReduction(Rule):
    code = "FP8303"
    name = "tp-only-amax-reduction"
    severity = Severity.INFO
    summary = "tp_only_amax_red: data-parallel replicas keep different delayed scales"
    valid = (
        Example(
            "default.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
        ),
    )
    invalid = (
        Example(
            "tponly.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            "  tp_only_amax_red: true\n",
            lines=(7,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        flag = site.tp_only_amax_red
        if not (site.is_on and site.is_delayed) or flag.value is not True:
            return
        yield Finding(
            span=where(flag, site),
            message=f"amax is reduced over TP (x CP) only: {term(flag)}",
            note=(
                "data-parallel replicas keep different delayed scales, which TE's maintainers "
                'call "less stable" (TE #656); remove it if you see instability'
            ),
        )
