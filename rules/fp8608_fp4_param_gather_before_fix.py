"""FP8608: FP4 weights all-gathered (`--fp4-param-gather`) on releases before the fix.

Megatron-LM #2284 / TE #2352 (November 2025): `--fp4-param-gather` only wrapped the model's
initialisation in FP4 and the optimizer was not adapted, so it did not work.  Fixed by TE #2691
(TE 2.14) with Megatron-LM #4005 and #4358 (megatron-core 0.18); the maintainers' advice is TE
2.14+ and core 0.18+ with the distributed optimizer.  Megatron never refused it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, targets, where

CORE, TE = "megatron-core", "transformer-engine"
_FP4 = "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n"


class Fp4ParamGatherBeforeFix(Rule):
    code = "FP8608"
    name = "fp4-param-gather-before-fix"
    severity = Severity.WARNING
    severity_note = "info for megatron-core 0.18 and TE 2.14 or later, which fixed it"
    summary = "`--fp4-param-gather` before megatron-core 0.18 / TE 2.14"
    valid = (Example("bf16_weights.yaml", _FP4 + "  --use-distributed-optimizer: true\n"),)
    invalid = (
        Example(
            "gather.yaml",
            _FP4 + "  --fp4-param-gather: true\n  --use-distributed-optimizer: true\n",
            lines=(4,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        gather = site.fp4_param_gather
        if not (site.fp4_on is True and gather.value is True and gather.written):
            return
        target = targets(options)
        fixed = target.at_least(CORE, "0.18") and target.at_least(TE, "2.14")
        versions = f"{target.label(CORE)}, {target.label(TE)}"
        yield Finding(
            span=where(gather, site),
            message=f"`{gather.key}` needs megatron-core 0.18 and TE 2.14",
            note=(
                f"fixed in those releases ({versions}); Megatron-LM #2284"
                if fixed
                else f"FP4 weights are not updated correctly ({versions}): Megatron-LM #2284"
            ),
            severity=Severity.INFO if fixed else None,
        )
