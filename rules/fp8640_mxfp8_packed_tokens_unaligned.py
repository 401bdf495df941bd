"""FP8640: MXFP8 with packed (padding-free) batches and sequence parallelism in ms-swift,
whose padding before 4.4.1 left each rank's token count a multiple of 16, not 32.

Source: modelscope/ms-swift `swift/megatron/utils/utils.py` `get_padding_to`.  At v4.4.0
(and every release before) the packed length is padded to TP x CP x 16 for any FP8/FP4
format, with its own x128 branch only for `blockwise`; with sequence parallelism each TP
rank then holds total / TP tokens, a multiple of 16.  TE's MXFP8 quantizer needs both dims
divisible by its 32-element block.  Reported as ms-swift #9723 (2026-07-10, TP 4: "MXFP8
requires tensor dims that are divisible by 32 (got shape=(7984, 3072))"); fixed by PR #9722
(23e06ccd9 on main, in v4.4.1), which pads MXFP8 to TP x CP x 32.  `--attention_backend
fused` pads to a multiple of 64 and is unaffected, but the model does not carry it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, targets, term, where

FIXED_IN = "4.4.1"  # ms-swift PR #9722
LAUNCH = (
    "megatron sft --model Qwen/Qwen3-8B --fp8_format e4m3 --fp8_recipe mxfp8 \\\n"
    "    --tensor_model_parallel_size 4 --sequence_parallel true \\\n"
)


class Mxfp8PackedTokensUnaligned(Rule):
    code = "FP8640"
    name = "mxfp8-packed-tokens-unaligned"
    severity = Severity.INFO
    severity_note = f"warning for ms-swift targets before {FIXED_IN}"
    summary = "ms-swift MXFP8 with packing and sequence parallelism: token shards padded to 16"
    valid = (
        Example("nosp.sh", LAUNCH.replace("true", "false") + "    --packing true\n"),
        Example("free.sh", LAUNCH + "    --padding_free false\n"),
        Example(
            "bw.sh",
            "megatron sft --model m --fp8_format e4m3 --fp8_recipe blockwise \\\n"
            "    --tensor_model_parallel_size 4 --sequence_parallel true --packing true\n",
        ),
    )
    invalid = (
        Example("pack.sh", LAUNCH + "    --packing true\n", lines=(1,)),
        Example("default.sh", LAUNCH + "    --lr 1e-5\n", lines=(1,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.family != "swift" or not site.is_on or site.recipe.value is not Recipe.MXFP8:
            return
        tp, sp, packing = site.tensor_parallel, site.sequence_parallel, site.packing
        if packing.value is not True or sp.value is not True:
            return
        if not isinstance(tp.value, int) or tp.value <= 1:
            return
        target = targets(options)
        old = not target.at_least("ms-swift", FIXED_IN)
        yield Finding(
            span=where(site.recipe, site),
            severity=Severity.WARNING if old else Severity.INFO,
            message=(
                f"MXFP8 with packed batches and sequence parallelism over TP {tp.value}: "
                f"{term(packing)}"
            ),
            note=(
                f"ms-swift before {FIXED_IN} pads packed batches to TP x 16, so a rank's "
                "token count can miss MXFP8's 32-element block and TE stops "
                f"(ms-swift #9723; {target.label('ms-swift')})"
            ),
            related=((where(sp, site), f"sequence parallelism {term(sp)}"),),
        )
