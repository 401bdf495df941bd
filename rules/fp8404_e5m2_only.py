"""FP8404: pure E5M2, which Transformer Engine refuses."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Format, Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where


class E5m2Only(Rule):
    code = "FP8404"
    name = "e5m2-only"
    severity = Severity.ERROR
    summary = 'E5M2 in both passes: TE asserts "Pure E5M2 training is not supported"'
    valid = (
        Example(
            "hybrid.json",
            '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE",\n'
            '  "fp8_format": "HYBRID"}}\n',
        ),
    )
    invalid = (
        Example(
            "e2m1.py",
            "from transformer_engine.common.recipe import DelayedScaling, Format\n"
            "r = DelayedScaling(fp8_format=Format.E2M1)\n",
            lines=(2,),
        ),
        Example(
            "e5m2.json",
            '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE",\n'
            '  "fp8_format": "E5M2"}}\n',
            lines=(2,),
        ),
        Example(
            "te.py",
            "from transformer_engine.common.recipe import DelayedScaling, Format\n"
            "r = DelayedScaling(fp8_format=Format.E5M2)\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on or site.fmt.value is not Fp8Format.E5M2:
            return
        if site.fmt.raw is not None and "E2M1" in site.fmt.raw:
            yield Finding(
                span=where(site.fmt, site),
                message=f"`{site.fmt.key}` {site.fmt.raw} is FP4's format: FP8 stores E5M2 "
                "in both passes",
                note="TE builds the recipe (its E5M2 assert does not see E2M1) and then stores "
                "every tensor as E5M2, the pure-E5M2 training it does not support",
                severity=Severity.WARNING,
            )
            return
        yield Finding(
            span=where(site.fmt, site),
            message=f"E5M2 in both passes: {term(site.fmt)} (use HYBRID)",
            note='every TE recipe asserts "Pure E5M2 training is not supported" when it is built',
        )
