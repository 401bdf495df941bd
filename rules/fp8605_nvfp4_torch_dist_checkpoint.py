"""FP8605: NVFP4 weights with the distributed optimizer saved as `torch_dist` checkpoints.

Megatron-LM #5174 (June 2026): saving a `torch_dist` checkpoint fails for NVFP4 parameters
kept in FP4 (`--fp4-param-gather`) under the distributed optimizer, because the packed FP4
shard's stride does not match the unpacked one the checkpoint expects.  The fix, PR #5334, was
still open at d98e8a64, so every release is affected.  `--ckpt-format` defaults to
`torch_dist` (`megatron/training/config/training_config.py` L486 at d98e8a64).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where

_FP4 = (
    "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n  --fp4-param-gather: true\n"
    "  --use-distributed-optimizer: true\n"
)


class Nvfp4TorchDistCheckpoint(Rule):
    code = "FP8605"
    name = "nvfp4-torch-dist-checkpoint"
    severity = Severity.WARNING
    summary = "NVFP4 weights + distributed optimizer saved as `torch_dist` checkpoints"
    valid = (
        Example("fsdp_dtensor.yaml", _FP4 + "  --ckpt-format: fsdp_dtensor\n"),
        Example("bf16_weights.yaml", _FP4.replace("  --fp4-param-gather: true\n", "")),
    )
    invalid = (
        Example("default.yaml", _FP4, lines=(4,)),
        Example("written.yaml", _FP4 + "  --ckpt-format: torch_dist\n", lines=(6,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        ckpt = site.ckpt_format
        if not (
            site.fp4_on is True
            and site.fp4_recipe.value == "nvfp4"
            and site.fp4_param_gather.value is True
            and site.distributed_optimizer.value is True
            and ckpt.known
            and ckpt.value == "torch_dist"
        ):
            return
        yield Finding(
            span=where(ckpt if ckpt.written else site.fp4_param_gather, site),
            message=f"NVFP4 weights with the distributed optimizer and {term(ckpt)}",
            note="the checkpoint save fails (Megatron-LM #5174; fix PR #5334 not released)",
        )
