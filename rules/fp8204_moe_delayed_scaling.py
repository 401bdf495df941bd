"""FP8204: mixture-of-experts with delayed scaling."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where


class MoeDelayedScaling(Rule):
    code = "FP8204"
    name = "moe-delayed-scaling"
    severity = Severity.INFO  # derived: no report traces a failure to it (see the page)
    summary = "Experts > 1 with delayed scaling (NVIDIA recommends blockwise/MXFP8 for MoE)"
    valid = (
        Example(
            "block.yaml",
            "MODEL_ARGS:\n  --num-experts: 8\n  --fp8-format: e4m3\n  --fp8-recipe: blockwise\n",
        ),
        Example(
            "dense.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
        ),
    )
    invalid = (
        Example(
            "moe.yaml",
            "MODEL_ARGS:\n  --num-experts: 64\n  --fp8-format: hybrid\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        experts = site.num_experts
        if not (site.is_on and site.is_delayed) or experts.value is None or experts.value <= 1:
            return
        yield Finding(
            span=where(experts, site),
            message=f"MoE with delayed scaling: {term(experts)}, {term(site.recipe)}",
            note=(
                "an expert that gets few tokens keeps a stale amax history; Megatron's MoE guide "
                "recommends blockwise (Hopper) or mxfp8 (Blackwell)"
            ),
        )
