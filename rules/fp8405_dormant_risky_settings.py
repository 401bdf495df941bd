"""FP8405: a template with FP8 off whose knobs would have zero headroom once enabled."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where
from fp8lint.rules.fp8101_zero_headroom import zero_headroom_cause
from fp8lint.rules.fp8401_invalid_value import empty_history


class DormantRiskySettings(Rule):
    code = "FP8405"
    name = "dormant-risky-settings"
    severity = Severity.INFO
    summary = "FP8 is off, but enabling it would trip FP8101 or FP8401"
    default_enabled = False
    valid = (
        Example(
            "good_template.yaml",
            "model:\n  transformer_engine: true\n  fp8: false\n"
            "  fp8_hybrid: true\n  fp8_margin: 0\n  fp8_amax_history_len: 1024\n"
            "  fp8_amax_compute_algo: max\n",
        ),
    )
    invalid = (
        Example(
            "risky_template.yaml",
            "model:\n  transformer_engine: true\n  fp8: false\n"
            "  fp8_hybrid: true\n  fp8_margin: 0\n  fp8_amax_history_len: 1\n"
            "  fp8_amax_compute_algo: most_recent\n",
            lines=(3,),
        ),
        Example(
            "history.yaml",
            "MODEL_ARGS:\n  --bf16: true\n  --fp8-amax-history-len: 0\n",
            lines=(3,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        history = empty_history(site)
        if site.enabled.value is False and history is not None and site.is_delayed:
            yield Finding(
                span=where(history, site),
                message=f"amax history length {history.value} is invalid once FP8 is on",
                note="FP8 is off, so nothing reads it now; delayed scaling needs at least 1",
            )
        if site.enabled.value is not False or not site.enabled.written:
            return
        cause = zero_headroom_cause(site)
        if cause is None:
            return
        yield Finding(
            span=where(site.enabled, site),
            message=(f"zero headroom once FP8 is switched on: {term(site.margin)} with {cause}"),
            note=(
                "whoever switches FP8 on trips FP8101; set amax_history_len 1024 and "
                "amax_compute_algo max in the template"
            ),
            headroom_binades=0.0,
        )
