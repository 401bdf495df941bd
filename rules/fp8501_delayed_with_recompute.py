"""FP8501: delayed scaling with full activation recompute."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where


class DelayedWithRecompute(Rule):
    code = "FP8501"
    name = "delayed-with-recompute"
    severity = Severity.WARNING
    severity_note = "error with Megatron's EP all-to-all overlap"
    summary = (
        "Delayed scaling with full activation recompute (error with Megatron's EP A2A overlap)"
    )
    valid = (
        Example(
            "cs.yaml",
            "MODEL_ARGS:\n  --recompute-granularity: full\n  --fp8-format: hybrid\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
        ),
        Example(
            "selective.yaml",
            "MODEL_ARGS:\n  --recompute-granularity: selective\n"
            "  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
        ),
    )
    invalid = (
        Example(
            "full.yaml",
            "MODEL_ARGS:\n  --recompute-granularity: full\n"
            "  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
            lines=(2,),
        ),
        Example(
            "nemo.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
            "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            "  activations_checkpoint_granularity: full\n",
            lines=(7,),
        ),
        Example(
            "a2a.yaml",
            "MODEL_ARGS:\n  --recompute-granularity: full\n"
            "  --overlap-moe-expert-parallel-comm: true\n  --num-experts: 8\n"
            "  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        rec = site.recompute_granularity
        if not (site.is_on and site.is_delayed) or rec.value != "full":
            return
        overlap = site.moe_a2a_overlap.value is True
        yield Finding(
            span=where(rec, site),
            message=(
                f"full activation recompute with delayed scaling: {term(rec)}"
                + (" and the EP all-to-all overlap" if overlap else "")
            ),
            note=(
                "Megatron rejects this with --overlap-moe-expert-parallel-comm at launch"
                if overlap
                else "the recomputed forward updates the amax history twice (Megatron "
                "7ba8c84dfd); current scaling or selective recompute avoids it"
            ),
            severity=Severity.ERROR if overlap else None,
        )
