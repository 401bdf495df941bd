"""FP8401: a value the framework will reject or misread."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule


class InvalidValue(Rule):
    code = "FP8401"
    name = "invalid-value"
    severity = Severity.ERROR
    summary = "Unknown format/recipe/algorithm, non-integer margin or history, history < 1"
    valid = (Example("ok.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n"),)
    invalid = (
        Example(
            "recipe.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: current\n",
            lines=(3,),
        ),
        Example(
            "algo.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-compute-algo: mean\n",
            lines=(3,),
        ),
        Example(
            "hist.json",
            '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE",\n'
            '  "amax_history_len": 0}}\n',
            lines=(2,),
        ),
        Example(
            "margin.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(margin=0.5)\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        # each value a framework's surface model rejected (`frameworks.surfaces`)
        for bad in site.invalid:
            yield Finding(
                span=bad.span,
                message=bad.message,
                note="the framework rejects this value at launch or reads it as something else",
            )
