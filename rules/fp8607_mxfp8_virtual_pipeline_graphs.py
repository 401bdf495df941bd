"""FP8607: MXFP8 with virtual pipeline stages and CUDA graphs.

Megatron-Bridge #2096 (January 2026): Qwen3-235B with MXFP8 at PP8, VP3, EP32 and CUDA graphs
gave NaN grad norms; Bridge PR #2209 dropped the virtual pipeline from that recipe.  The cause
was not isolated (the same recipe also had expert parallelism and the optimizer-step overlap
question of FP8602), so this is info: a combination with one report, not a known bug.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, term, where

_MX = (
    "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n"
    "  --pipeline-model-parallel-size: 8\n  --cuda-graph-impl: transformer_engine\n"
)


class Mxfp8VirtualPipelineGraphs(Rule):
    code = "FP8607"
    name = "mxfp8-virtual-pipeline-graphs"
    severity = Severity.INFO
    summary = "MXFP8 with virtual pipeline stages and CUDA graphs"
    valid = (
        Example("no_vp.yaml", _MX),
        Example(
            "no_graphs.yaml",
            _MX.replace("transformer_engine", "none")
            + "  --num-virtual-stages-per-pipeline-rank: 3\n",
        ),
    )
    invalid = (
        Example("vp.yaml", _MX + "  --num-virtual-stages-per-pipeline-rank: 3\n", lines=(6,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        vp = site.virtual_pipeline
        if not (
            site.is_on
            and site.active_recipe is Recipe.MXFP8
            and site.cuda_graph.value is True
            and vp.known
            and isinstance(vp.value, int)
            and vp.value > 1
        ):
            return
        yield Finding(
            span=where(vp, site),
            message=f"MXFP8 with CUDA graphs and {term(vp)} virtual stages",
            note="NaN grad norms at PP8 VP3 (Megatron-Bridge #2096); Bridge dropped VP there",
        )
