"""FP8642: delayed-scaling FP8 primary weights with the precision-aware optimizer holding
BF16 moments.

Reported as modelscope/ms-swift #8001 (2026-02-06; ms-swift 3.12.2, TE 2.10, Qwen3-14B,
TP 8, packing): `--fp8_recipe delayed --fp8_param_gather true` with
`--use_precision_aware_optimizer true --exp_avg_dtype bf16 --exp_avg_sq_dtype bf16` stopped
with an error (the report shows it as screenshots); the same launch without the three
optimizer flags ran.  The issue was closed as stale with no fix; ms-swift@3602360a
`swift/megatron/arguments/megatron_args.py` still accepts the combination (L504-508,
L637-638), so the rule has no release gate.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, term, where

LAUNCH = (
    "megatron sft --model Qwen/Qwen3-14B --tensor_model_parallel_size 8 \\\n"
    "    --fp8_format e4m3 --fp8_recipe delayed --fp8_param_gather true \\\n"
)
LOW = frozenset({"bf16", "fp16"})


class DelayedParamGatherBf16Moments(Rule):
    code = "FP8642"
    name = "delayed-param-gather-low-precision-moments"
    severity = Severity.WARNING
    summary = "Delayed FP8 parameter gather with the precision-aware optimizer's BF16 moments"
    valid = (
        Example("fp32.sh", LAUNCH + "    --use_precision_aware_optimizer true\n"),
        Example("nopao.sh", LAUNCH + "    --exp_avg_dtype bf16 --exp_avg_sq_dtype bf16\n"),
        Example(
            "cs.sh",
            LAUNCH.replace("delayed", "tensorwise")
            + "    --use_precision_aware_optimizer true --exp_avg_dtype bf16\n",
        ),
    )
    invalid = (
        Example(
            "pao.sh",
            LAUNCH + "    --use_precision_aware_optimizer true \\\n"
            "    --exp_avg_dtype bf16 --exp_avg_sq_dtype bf16\n",
            lines=(3,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on or site.recipe.value is not Recipe.DELAYED:
            return
        gather, pao = site.fp8_param_gather, site.precision_aware_optimizer
        if gather.value is not True or pao.value is not True:
            return
        low = [m for m in (site.exp_avg_dtype, site.exp_avg_sq_dtype) if m.value in LOW]
        if not low:
            return
        yield Finding(
            span=where(pao, site),
            message=(
                f"delayed FP8 parameter gather with {term(pao)} and "
                + ", ".join(term(m) for m in low)
            ),
            note=(
                "this launch stopped with an error on TE 2.10 and ran once the optimizer "
                "kept FP32 moments (ms-swift #8001)"
            ),
            related=((where(gather, site), f"FP8 parameter gather {term(gather)}"),),
        )
