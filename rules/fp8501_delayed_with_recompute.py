"""FP8501: delayed scaling with full activation recompute."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, explain, where


class DelayedWithRecompute(Rule):
    code = "FP8501"
    name = "delayed-with-recompute"
    severity = Severity.WARNING
    severity_note = (
        "error with Megatron's EP all-to-all overlap; info when nothing in the file can reach "
        "the recompute"
    )
    summary = (
        "Delayed scaling with full activation recompute (error with Megatron's EP A2A overlap)"
    )
    valid = (
        Example(
            "llamafactory_no_gc.yaml",
            "stage: sft\nfinetuning_type: full\nfp8: true\nfp8_backend: te\n"
            "disable_gradient_checkpointing: true\n",
        ),
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
            "llamafactory_te.yaml",
            "stage: sft\nfinetuning_type: full\nfp8: true\nfp8_backend: te\n",
            lines=(3,),
        ),
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
        when = site.recompute_condition.value
        if site.recompute_reachable.value is False:
            yield Finding(
                span=where(rec, site),
                message=(
                    f"full activation recompute ({explain(rec)}) with delayed scaling runs "
                    f"{when}: not reached as written. Whoever switches it on gets the "
                    "recomputed forward appending to the amax history a second time"
                ),
                severity=Severity.INFO,
            )
            return
        condition = f", {when}" if when else ""
        yield Finding(
            span=where(rec, site),
            message=(
                f"full activation recompute ({explain(rec)}{condition}) with delayed scaling: the "
                "recomputed forward runs the FP8 casts again and appends to the persistent amax "
                'history (Megatron commit 7ba8c84dfd: "double-updates it and silently '
                "diverges\"; TE #1190 / PR #1254 for recompute outside TE's checkpoint)"
                + (
                    ". Megatron rejects this together with the EP all-to-all overlap "
                    "(--overlap-moe-expert-parallel-comm) at launch"
                    if overlap
                    else ""
                )
                + ". Current-scaling recipes (tensorwise, blockwise, mxfp8) re-derive identical "
                "scales and are immune; or use selective recompute"
            ),
            severity=Severity.ERROR if overlap else None,
        )
