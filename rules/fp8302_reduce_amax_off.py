"""FP8302: amax reduction switched off where shards must share one scale."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, term, where


class ReduceAmaxOff(Rule):
    code = "FP8302"
    name = "reduce-amax-off"
    severity = Severity.WARNING
    severity_note = "error with SP/CP"
    fix = Applicability.UNSAFE
    summary = "reduce_amax false with delayed scaling under TP, SP or CP"
    valid = (
        Example(
            "on.yaml",
            "model:\n  mcore_gpt: false\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            "  reduce_amax: true\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n",
        ),
        Example(
            "mcore.yaml",
            "model:\n  mcore_gpt: true\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            "  reduce_amax: false\n  tensor_model_parallel_size: 4\n",
        ),
    )
    invalid = (
        Example(
            "sp.yaml",
            "model:\n  mcore_gpt: false\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            "  reduce_amax: false\n  tensor_model_parallel_size: 4\n  sequence_parallel: true\n",
            lines=(8,),
            fixed=(
                "model:\n  mcore_gpt: false\n  transformer_engine: true\n  fp8: true\n"
                "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n"
                "  fp8_amax_compute_algo: max\n  reduce_amax: true\n"
                "  tensor_model_parallel_size: 4\n  sequence_parallel: true\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not (site.is_on and site.is_delayed) or site.reduce_amax.value is not False:
            return
        sp = site.sequence_parallel.value is True
        cp = (site.context_parallel.value or 1) > 1
        tp = site.tensor_parallel.value or 1
        if sp or cp:
            under = "sequence parallelism" if sp else "context parallelism"
            why = (
                'FP8 shards gathered must share one scale; TE asserts "Amax reduction across '
                'tensor parallel group is necessary" at the first step'
            )
            severity = Severity.ERROR
        elif tp > 1:
            under = f"tensor-parallel size {tp}"
            why = (
                "each shard of a row-parallel input keeps its own scale; TE's maintainers "
                "recommend reducing over TP and DP (TE #656)"
            )
            severity = Severity.WARNING
        else:
            return
        yield Finding(
            span=where(site.reduce_amax, site),
            message=f"amax reduction is off under {under}: {term(site.reduce_amax)}",
            note=why,
            severity=severity,
            fix=FixPlan(
                Applicability.UNSAFE, "set reduce_amax true", (SetValue("reduce_amax", True),)
            ),
        )
