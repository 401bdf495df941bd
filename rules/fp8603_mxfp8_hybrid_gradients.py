"""FP8603: MXFP8 with the HYBRID format (E5M2 gradients).

Megatron-Bridge PR #638 (September 2025, with NeMo PR #14793): Nemotron5-8B pre-training with
MXFP8 in the hybrid format diverged, and Bridge's MXFP8 presets moved to E4M3 for every tensor
(`bf16_with_mxfp8_mixed` sets `fp8="e4m3"`, `src/megatron/bridge/training/mixed_precision.py`
at Megatron-Bridge@067f987d).  MXFP8's per-32-element E8M0 scales give E4M3 the range the
gradients need; E5M2 only loses mantissa.  Nothing refuses the combination.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Format, Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, short_run, term, where


class Mxfp8HybridGradients(Rule):
    code = "FP8603"
    name = "mxfp8-hybrid-gradients"
    severity = Severity.WARNING
    severity_note = "info for a fine-tune or a short run"
    summary = "MXFP8 with the hybrid format (E5M2 gradients)"
    valid = (
        Example("e4m3.yaml", "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n"),
        Example(
            "tensorwise.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
        ),
    )
    invalid = (
        Example(
            "hybrid.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.is_on and site.active_recipe is Recipe.MXFP8 and site.fmt.value is Fp8Format.HYBRID:
            short = short_run(site)
            yield Finding(
                span=where(site.fmt, site),
                message=f"MXFP8 with E5M2 gradients: {term(site.fmt)}",
                note=(
                    f"{short}: the divergence was in pre-training (Megatron-Bridge PR #638)"
                    if short
                    else "diverged on Nemotron5-8B (Megatron-Bridge PR #638); presets use e4m3"
                ),
                severity=Severity.INFO if short else None,
            )
