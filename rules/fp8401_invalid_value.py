"""FP8401: a value the framework will reject or misread."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Setting
from fp8lint.rule import Example, Finding, Rule, targets, where


class InvalidValue(Rule):
    code = "FP8401"
    name = "invalid-value"
    severity = Severity.ERROR
    summary = "Unknown format/recipe/algorithm, non-integer margin or history, history < 1"
    valid = (
        Example("ok.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n"),
        # FP8 is off: the history is never read (FP8405 says so when asked)
        Example("off.yaml", "MODEL_ARGS:\n  --bf16: true\n  --fp8-amax-history-len: 0\n"),
    )
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
            "case.yaml",
            "MODEL_ARGS:\n  --fp8-format: HYBRID\n  --fp8-recipe: delayed\n",
            lines=(2,),
        ),
        Example(
            "float.sh",
            "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 16.0\n",
            lines=(1,),
        ),
        Example(
            "margin.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(margin=0.5)\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        # each value a framework's surface model rejected (`frameworks.surfaces`), when the
        # target release has the check
        target = targets(options)
        for bad in site.invalid:
            if not target.has(bad.since):
                continue
            note = "the framework rejects this value at launch or reads it as something else"
            yield Finding(
                span=bad.span,
                message=bad.message,
                note=f"{note} ({target.assumed(bad.since)})" if bad.since else note,
            )
        history = empty_history(site)
        if history is not None and site.is_on and site.is_delayed:
            yield Finding(
                span=where(history, site),
                message=f"amax history length {history.value}: delayed scaling needs at least 1",
                note="TE's DelayedScaling accepts it, but the first FP8 step reads row 0 of the "
                "amax history, which then does not exist",
            )


def empty_history(site: Fp8Site) -> Setting[int] | None:
    """A written amax history length below 1 (a value the surfaces accept as an integer: the
    range matters only where delayed scaling reads it)."""
    history = site.amax_history_len
    value = history.value
    if not history.written or not isinstance(value, int) or value >= 1:
        return None
    return history
