"""FP8602: MXFP8 with the param all-gather overlapped with the optimizer step.

Megatron-Bridge #1255 and #1771 (Llama 3 70B/405B, DeepSeek-V3) reported NaN grad norms with
MXFP8 and the parameter all-gather overlap; Bridge PR #2014 (January 2026) keeps
`overlap_param_gather` for `fp8_mx` presets and turns `overlap_param_gather_with_optimizer_step`
off (the case with DP, PP and virtual pipeline all above 1).  Megatron-Core refuses the
optimizer-step overlap together with `reuse_grad_buf_for_mxfp8_param_ag` from core_v0.19.0
(`megatron/core/optimizer/optimizer_config.py` L424-428 at core_v0.19.0, L427-431 at d98e8a64;
absent at core_v0.18.0): that case is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, targets, where

CORE = "megatron-core"
RAISES = "0.19"
_BASE = (
    "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n"
    "  --use-distributed-optimizer: true\n"
    "  --pipeline-model-parallel-size: 4\n  --num-virtual-stages-per-pipeline-rank: 2\n"
    "  --overlap-grad-reduce: true\n  --overlap-param-gather: true\n  --ckpt-format: torch\n"
)


class Mxfp8GatherWithOptimizerStep(Rule):
    code = "FP8602"
    name = "mxfp8-gather-with-optimizer-step"
    severity = Severity.WARNING
    severity_note = (
        "error with `--reuse-grad-buf-for-mxfp8-param-ag`, which megatron-core 0.19 refuses"
    )
    summary = "MXFP8 with the param all-gather overlapped with the optimizer step"
    valid = (
        Example("overlap.yaml", _BASE),
        Example(
            "tensorwise.yaml",
            _BASE.replace("e4m3", "hybrid").replace("mxfp8", "tensorwise")
            + "  --overlap-param-gather-with-optimizer-step: true\n",
        ),
    )
    invalid = (
        Example(
            "step.yaml", _BASE + "  --overlap-param-gather-with-optimizer-step: true\n", lines=(10,)
        ),
        Example(
            "reuse.yaml",
            _BASE + "  --fp8-param-gather: true\n  --reuse-grad-buf-for-mxfp8-param-ag: true\n"
            "  --overlap-param-gather-with-optimizer-step: true\n",
            lines=(12,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        step = site.overlap_param_gather_with_optimizer_step
        if not (site.is_on and site.active_recipe is Recipe.MXFP8 and step.value is True):
            return
        target = targets(options)
        reuse = site.reuse_grad_buf_for_mxfp8_param_ag.value is True
        if reuse and target.at_least(CORE, RAISES):
            yield Finding(
                span=where(step, site),
                message=f"`{step.key}` with `--reuse-grad-buf-for-mxfp8-param-ag`",
                note=f"Megatron raises at launch ({target.label(CORE)}): OptimizerConfig",
                severity=Severity.ERROR,
            )
            return
        yield Finding(
            span=where(step, site),
            message=f"MXFP8 with `{step.key}`",
            note="NaN grad norms (Megatron-Bridge #1255, #1771); Bridge turns it off for MXFP8",
        )
