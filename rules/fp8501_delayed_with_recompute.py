"""FP8501: delayed scaling with full activation recompute."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Framework
from fp8lint.rule import Example, Finding, Rule, term, where

# stacks whose full recompute is Megatron's own: with FP8 on it runs through TE's checkpoint
# (`te_checkpoint` in megatron/core/transformer/transformer_block.py), not torch's
MEGATRON_PATH = frozenset({Framework.MEGATRON, Framework.NEMO1, Framework.NEMO2, Framework.BRIDGE})


class DelayedWithRecompute(Rule):
    code = "FP8501"
    name = "delayed-with-recompute"
    severity = Severity.WARNING
    severity_note = (
        "error with Megatron's EP all-to-all overlap; info for Megatron's own recompute (TE's "
        "checkpoint) and when nothing in the file can reach the recompute"
    )
    summary = "Delayed scaling with full activation recompute outside TE's checkpoint"
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
        # FP8 on, or switched on by a command-line flag (`enabled=args.use_fp8`)
        switched = site.enabled.value is None and site.enabled_condition.known
        if not (site.is_on or switched) or not site.is_delayed or rec.value != "full":
            return
        whens = [site.recompute_condition.value, site.enabled_condition.value if switched else None]
        found = [w for w in whens if w]
        if len(found) == 2 and found[1].startswith("when "):
            found[1] = found[1][len("when ") :]  # "when A is given and B is given"
        when = " and ".join(found)
        condition = f" {when}" if when else ""
        message = f"full activation recompute with delayed scaling: {term(rec)}{condition}"
        if site.moe_a2a_overlap.value is True:
            yield Finding(
                span=where(rec, site),
                message=message + " and the EP all-to-all overlap",
                note="Megatron rejects this with --overlap-moe-expert-parallel-comm at launch",
                severity=Severity.ERROR,
            )
        elif site.recompute_reachable.value is False:
            yield Finding(
                span=where(rec, site),
                message=message + ": not reached as written",
                note="whoever switches it on gets the recomputed forward updating the amax "
                "history a second time",
                severity=Severity.INFO,
            )
        elif site.framework in MEGATRON_PATH:
            yield Finding(
                span=where(rec, site),
                message=message,
                note="Megatron recomputes FP8 layers through TE's checkpoint, which keeps the "
                "amax history (fixed in TE PR #1254, TE #1190); check TE is that recent",
                severity=Severity.INFO,
            )
        else:
            yield Finding(
                span=where(rec, site),
                message=message,
                note="recompute outside TE's checkpoint updates the amax history twice (TE "
                "#1190); use te.checkpoint, current scaling or selective recompute",
            )
