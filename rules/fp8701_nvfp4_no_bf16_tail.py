"""FP8701: NVFP4 training with no BF16 layers at the end of the network.

The NVFP4 pre-training recipe (NVIDIA, "Pretraining Large Language Models with NVFP4",
arXiv 2509.25149v1, §4.1 and App. E.2) keeps about the last 15% of the blocks in BF16:
with every linear layer in FP4 the 12B run diverged, and BF16 blocks at the start alone did
not help.  Megatron's FP4 path keeps layers in BF16 only through `first_last_layers_bf16`
and its two counts (`megatron/core/fp4_utils.py` at NVIDIA/Megatron-LM@d98e8a64), and checks
the counts only for FP8 (`transformer_config.py` L1400-1429 at core_v0.19.0).  Nothing
upstream warns, so the rule is the only catch.  NVIDIA ships a preset with no BF16 layer
(Bridge `bf16_with_nvfp4_mixed`) for 50-step performance runs: short or unknown-length
runs, fine-tunes and a high-precision backward are info.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import (
    Example,
    Finding,
    Rule,
    long_fp4_pretraining,
    min_tokens_option,
    term,
    where,
)

_NVFP4 = "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n  --num-layers: 32\n"
_LONG = "  --train-iters: 500000\n  --global-batch-size: 1024\n  --seq-length: 8192\n"


class Nvfp4NoBf16Tail(Rule):
    code = "FP8701"
    name = "nvfp4-no-bf16-tail"
    severity = Severity.WARNING
    severity_note = (
        "info for a run under `min-tokens` or of unknown length, a fine-tune, or a backward "
        "override"
    )
    summary = "NVFP4 pre-training with no BF16 layers at the end (none, or at the start only)"
    options = (min_tokens_option(),)
    valid = (
        Example(
            "tail.yaml",
            _NVFP4 + _LONG + "  --first-last-layers-bf16: true\n"
            "  --num-layers-at-start-in-bf16: 0\n  --num-layers-at-end-in-bf16: 4\n",
        ),
        Example("fp8.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n" + _LONG),
    )
    invalid = (
        Example("none.yaml", _NVFP4 + _LONG, lines=(2,)),
        Example(
            "start_only.yaml",
            _NVFP4 + _LONG + "  --first-last-layers-bf16: true\n"
            "  --num-layers-at-start-in-bf16: 2\n  --num-layers-at-end-in-bf16: 0\n",
            lines=(10,),
        ),
        Example("short.yaml", _NVFP4 + "  --train-iters: 50\n", lines=(2,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.fp4_on is not True or site.active_recipe is not Recipe.NVFP4:
            return
        if site.precision_overrides:
            return  # a precision file may keep layers in BF16: not known
        edges = site.first_last_layers_bf16
        start, end = site.num_layers_at_start_in_bf16, site.num_layers_at_end_in_bf16
        if edges.value is False and edges.known:
            span, message = where(site.fp4, site), f"NVFP4 with no BF16 layers: {term(edges)}"
        elif edges.value is True and end.known and end.value == 0:
            if not (start.known and isinstance(start.value, int) and start.value > 0):
                return  # both 0 is FP8207's; an unknown start stays silent
            span = where(end, site)
            message = f"NVFP4 with BF16 layers at the start only: {term(start)}, {term(end)}"
        else:
            return
        yield Finding(
            span=span,
            severity=Severity.WARNING if long_fp4_pretraining(site, options) else Severity.INFO,
            message=message,
            note=(
                "the NVFP4 recipe keeps about the last 15% of blocks in BF16; with none, or "
                "only the first, pre-training diverged (arXiv 2509.25149, §4.1, App. E.2)"
            ),
        )
