"""FP8305: parallel sizes that do not divide the model or the world."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, term, where


class TpTopologyMismatch(Rule):
    code = "FP8305"
    name = "tp-topology-mismatch"
    severity = Severity.ERROR
    severity_note = "info for SP at TP 1"
    summary = "Heads/experts not divisible by TP/EP, TPxPPxCP not dividing the world, SP at TP 1"
    valid = (
        Example(
            "ok.yaml",
            "MODEL_ARGS:\n  --num-attention-heads: 32\n"
            "  --tensor-model-parallel-size: 8\n  --sequence-parallel: true\n"
            "  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --first-last-layers-bf16: true\n",
        ),
    )
    invalid = (
        Example(
            "heads.yaml",
            "MODEL_ARGS:\n  --num-attention-heads: 12\n"
            "  --tensor-model-parallel-size: 8\n  --fp8-format: hybrid\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
            lines=(3,),
        ),
        Example(
            "sp.yaml",
            "MODEL_ARGS:\n  --sequence-parallel: true\n  --fp8-format: hybrid\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
            lines=(2,),
        ),
        Example(
            "world.yaml",
            "trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n"
            "  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
            "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            "  tensor_model_parallel_size: 4\n  pipeline_model_parallel_size: 4\n",
            lines=(10,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on:
            return
        tp_s = site.tensor_parallel
        tp = tp_s.value or 1
        for count, name in (
            (site.num_attention_heads, "attention heads"),
            (site.num_query_groups, "query groups"),
        ):
            if count.value and tp > 1 and count.value % tp:
                yield Finding(
                    span=where(tp_s, site),
                    message=f"{name} do not split over TP: {term(count)}, {term(tp_s)}",
                    note="Megatron refuses to start",
                )
        ep_s, experts = site.expert_parallel, site.num_experts.value
        if experts and ep_s.value and experts % ep_s.value:
            yield Finding(
                span=where(ep_s, site),
                message=f"experts do not split over EP: {term(site.num_experts)}, {term(ep_s)}",
                note="Megatron refuses to start",
            )
        world = site.world_size.value
        if world:
            pp = site.pipeline_parallel.value or 1
            cp = site.context_parallel.value or 1
            product = tp * pp * cp
            if world % product:
                yield Finding(
                    span=where(tp_s, site),
                    message=(
                        f"TP x PP x CP = {tp} x {pp} x {cp} = {product} does not divide "
                        f"the world size: {term(site.world_size)}"
                    ),
                    note="the job fails when it builds its process groups",
                )
        sp = site.sequence_parallel
        if sp.value is True and tp == 1 and tp_s.known:
            yield Finding(
                span=where(sp, site),
                message=f"sequence parallelism does nothing at TP 1: {term(sp)}, {term(tp_s)}",
                note="Megatron turns it off with a warning",
                severity=Severity.INFO,
            )
