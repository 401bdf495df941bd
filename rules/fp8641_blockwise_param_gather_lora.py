"""FP8641: blockwise FP8 primary weights (`fp8_param_gather`) under LoRA.

Reported as modelscope/ms-swift #7290 (2026-01-05, DeepSeek-V3.1 LoRA after ms-swift's
`examples/megatron/fp8` script): with `--fp8_recipe blockwise --fp8_param_gather true` the
first forward of a LoRA-wrapped TE Linear stops in TE's `general_gemm` with "GEMM with
Float8BlockwiseQTensor requires GEMM_READY format"; without parameter gather it trains.  The
issue was closed with no change to ms-swift's arguments: at ms-swift@3602360a
`swift/megatron/arguments/megatron_args.py` still accepts the combination (L637-638, L449),
so the rule has no release gate.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, term, where

LAUNCH = (
    "megatron sft --model deepseek-ai/DeepSeek-V3.1 --tuner_type lora \\\n"
    "    --fp8_format e4m3 --fp8_recipe blockwise \\\n"
)


class BlockwiseParamGatherLora(Rule):
    code = "FP8641"
    name = "blockwise-param-gather-lora"
    severity = Severity.WARNING
    summary = "Blockwise FP8 primary weights (fp8_param_gather) under LoRA"
    valid = (
        Example("lora.sh", LAUNCH + "    --fp8_param_gather false\n"),
        Example(
            "full.sh",
            LAUNCH.replace("lora", "full") + "    --fp8_param_gather true\n",
        ),
        Example(
            "mx.sh",
            LAUNCH.replace("blockwise", "mxfp8") + "    --fp8_param_gather true\n",
        ),
    )
    invalid = (Example("gather.sh", LAUNCH + "    --fp8_param_gather true\n", lines=(3,)),)

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on or site.recipe.value is not Recipe.BLOCKWISE:
            return
        gather, peft = site.fp8_param_gather, site.peft
        if gather.value is not True or peft.value != "lora":
            return
        yield Finding(
            span=where(gather, site),
            message=f"blockwise FP8 parameter gather under LoRA: {term(gather)}",
            note=(
                "LoRA's wrapped TE Linear gets blockwise FP8 weights TE's GEMM refuses "
                "(not GEMM_READY); train LoRA without FP8 parameter gather (ms-swift #7290)"
            ),
            related=((where(peft, site), f"LoRA {term(peft)}"),),
        )
