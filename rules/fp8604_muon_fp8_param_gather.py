"""FP8604: a Muon (layer-wise distributed) optimizer with FP8 weights all-gathered.

Megatron-LM PR #5707 (July 2026): `--fp8-param-gather` relies on the distributed optimizer's
param buffer, which Muon's `LayerWiseDistributedOptimizer` lacks, so the update never reached
the forward and the loss stayed flat.  PR #6754 (merged on main in late August 2026, after
d98e8a64) fixed the GTP + Muon + MXFP8 param-gather case and the overlap-off corner.  No
release has the fix, and Megatron does not refuse the combination (`--optimizer` choices at
d98e8a64 `megatron/training/arguments.py` L2913-2914; the emerging-optimizer setup,
`megatron/core/optimizer/__init__.py` L743-770, checks only the optimizer-step overlap).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, targets, term, where

CORE = "megatron-core"
MUON = frozenset({"muon", "dist_muon", "adaptive_muon"})
_MX = (
    "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n"
    "  --use-distributed-optimizer: true\n"
)


class MuonFp8ParamGather(Rule):
    code = "FP8604"
    name = "muon-fp8-param-gather"
    severity = Severity.WARNING
    severity_note = "info when the target is megatron-core `main`, which has the fix"
    summary = "A Muon optimizer with FP8 weights all-gathered (`--fp8-param-gather`)"
    valid = (
        Example("muon_bf16_gather.yaml", _MX + "  --optimizer: muon\n"),
        Example("adam.yaml", _MX + "  --fp8-param-gather: true\n"),
    )
    invalid = (
        Example(
            "muon.yaml",
            _MX + "  --optimizer: muon\n  --fp8-param-gather: true\n"
            "  --reuse-grad-buf-for-mxfp8-param-ag: true\n",
            lines=(5,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        opt = site.optimizer
        if not (
            site.is_on
            and site.fp8_param_gather.value is True
            and opt.known
            and str(opt.value).lower() in MUON
        ):
            return
        target = targets(options)
        fixed = target.at_least(CORE, "main")
        yield Finding(
            span=where(opt, site),
            message=f"{term(opt)} with `--fp8-param-gather`",
            note=(
                "fixed on main by Megatron-LM PR #6754; no release has it"
                if fixed
                else f"the update may never reach the forward ({target.label(CORE)}): "
                "Megatron-LM PR #5707, #6754"
            ),
            severity=Severity.INFO if fixed else None,
        )
