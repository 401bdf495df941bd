"""FP8203: the MoE router/gate converted to FP8."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, converted_by, where

_TT = '[model]\nname = "llama4"\nconverters = ["float8"]\n\n[quantize.linear.float8]\n'


class Fp8MoeRouter(Rule):
    code = "FP8203"
    name = "fp8-moe-router"
    severity = Severity.WARNING
    summary = "The MoE router (gate) runs in FP8"
    valid = (
        Example("filtered.toml", _TT + 'filter_fqns = ["output", "router.gate"]\n'),
        Example(
            "dense.toml",
            '[model]\nname = "llama3"\nconverters = ["float8"]\n\n'
            '[quantize.linear.float8]\nfilter_fqns = ["output"]\n',
        ),
    )
    invalid = (Example("router.toml", _TT + 'filter_fqns = ["output"]\n', lines=(6,)),)

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        router = site.router_fp8
        if not site.is_on or router.value is not True:
            return
        yield Finding(
            span=where(router, site),
            message=f"the MoE router gate runs in FP8 ({converted_by(router)})",
            note=(
                "FP8 rounding flips routing decisions made on small logit differences; "
                'exclude it (add "router.gate" to filter_fqns)'
            ),
        )
