"""FP8601: MXFP8 weights all-gathered through the gradient buffer with no param-gather overlap.

Megatron-LM #2272: with `--fp8-recipe mxfp8 --fp8-param-gather
--reuse-grad-buf-for-mxfp8-param-ag` and the data-parallel overlap off, the weights gathered
into the reused gradient buffer were overwritten, and the loss went NaN.  Fixed by #4800
(commit 5f791187ee, "Fix mxfp8 param gather numerical issue when DP overlap is off"), first
released in core_v0.18.0; at d98e8a64 the optimizer stages the master shards into the param
buffer itself when the overlap is off (`megatron/core/optimizer/distrib_optimizer.py` L2893-
2901, `optimizer.py` L1622-1630).  Megatron never refused the combination.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, targets, term, where

CORE = "megatron-core"
FIXED = "0.18"
_MX = (
    "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n  --fp8-param-gather: true\n"
    "  --use-distributed-optimizer: true\n  --reuse-grad-buf-for-mxfp8-param-ag: true\n"
)


class Mxfp8GatherWithoutOverlap(Rule):
    code = "FP8601"
    name = "mxfp8-gather-without-overlap"
    severity = Severity.WARNING
    severity_note = "info for megatron-core 0.18 and later, which fixed it"
    summary = "MXFP8 param all-gather through the grad buffer without param-gather overlap"
    valid = (
        Example(
            "overlap.yaml", _MX + "  --overlap-grad-reduce: true\n  --overlap-param-gather: true\n"
        ),
        Example(
            "no_reuse.yaml",
            "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n"
            "  --fp8-param-gather: true\n  --use-distributed-optimizer: true\n",
        ),
    )
    invalid = (Example("no_overlap.yaml", _MX, lines=(6,)),)

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        reuse, overlap = site.reuse_grad_buf_for_mxfp8_param_ag, site.overlap_param_gather
        if not (
            site.is_on
            and site.active_recipe is Recipe.MXFP8
            and site.fp8_param_gather.value is True
            and reuse.value is True
            and overlap.known
            and overlap.value is False
        ):
            return
        target = targets(options)
        fixed = target.at_least(CORE, FIXED)
        yield Finding(
            span=where(reuse, site),
            message=f"MXFP8 weights gathered into the grad buffer with {term(overlap)}",
            note=(
                f"fixed in megatron-core {FIXED} ({target.label(CORE)}); Megatron-LM #2272"
                if fixed
                else f"NaN loss before megatron-core {FIXED} ({target.label(CORE)}): "
                "Megatron-LM #2272; turn on the overlap or upgrade"
            ),
            severity=Severity.INFO if fixed else None,
        )
