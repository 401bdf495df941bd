"""FP8606: Megatron-FSDP with FP4 weights (`fp4_param_gather`).

Megatron-Bridge 0.6.2 `scripts/performance/perf_recipes/nemotronh/common.py` turns FP4
param gather off under Megatron-FSDP: its `ParamAndGradBuffer` has no storage for NVFP4's
packed data, so FP4 primary weights fault when the buffer is built.  Megatron-LM refuses FP8
and FP4 only for Megatron-FSDP version 2 (`megatron/core/distributed/fsdp/mcore_fsdp_adapter.py`
L676-677 at d98e8a64); version 1, the default, starts and then fails.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, where

_FP4 = "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n  --fp4-param-gather: true\n"


class MegatronFsdpFp4Weights(Rule):
    code = "FP8606"
    name = "megatron-fsdp-fp4-weights"
    severity = Severity.WARNING
    summary = "Megatron-FSDP with FP4 primary weights (`fp4_param_gather`)"
    valid = (
        Example("dist_opt.yaml", _FP4 + "  --use-distributed-optimizer: true\n"),
        Example(
            "fsdp_bf16_weights.yaml",
            "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n"
            "  --use-megatron-fsdp: true\n",
        ),
    )
    invalid = (Example("fsdp.yaml", _FP4 + "  --use-megatron-fsdp: true\n", lines=(5,)),)

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        fsdp = site.fsdp
        if not (
            site.fp4_on is True
            and site.fp4_param_gather.value is True
            and fsdp.value is True
            and "megatron_fsdp" in fsdp.key.replace("-", "_")
        ):
            return
        yield Finding(
            span=where(fsdp, site),
            message=f"`{fsdp.key}` with FP4 weights (`fp4_param_gather`)",
            note="Megatron-FSDP's buffer has no NVFP4 storage (Megatron-Bridge 0.6.2 turns it off)",
        )
