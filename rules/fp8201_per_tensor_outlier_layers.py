"""FP8201: per-tensor scaling everywhere, including the first and last blocks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Framework, Recipe
from fp8lint.rule import LONG_RUN_TOKENS, Example, Finding, Rule, planned_tokens, term, where

# stacks that have Megatron's first/last-layers-in-BF16 switch
MEGATRON_STACKS = (Framework.MEGATRON, Framework.NEMO1, Framework.NEMO2, Framework.BRIDGE)


class PerTensorOutlierLayers(Rule):
    code = "FP8201"
    name = "per-tensor-outlier-layers"
    severity = Severity.INFO
    summary = "Per-tensor FP8 recipe on a gated (SwiGLU) MLP with no BF16 first/last layers"
    valid = (
        Example(
            "cs_bf16.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --first-last-layers-bf16: true\n",
        ),
        Example(
            "mx.yaml",
            "MODEL_ARGS:\n  --swiglu: true\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n",
        ),
        Example("gelu.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"),
    )
    invalid = (
        Example(
            "cs.yaml",
            "MODEL_ARGS:\n  --swiglu: true\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n",
            lines=(4,),
        ),
        Example(
            "ds.yaml",
            "model:\n  transformer_engine: true\n  activation: swiglu\n"
            "  fp8: true\n  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n"
            "  fp8_amax_compute_algo: max\n",
            lines=(4,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        recipe = site.recipe.value
        if not site.is_on or site.framework not in MEGATRON_STACKS or recipe is None:
            return
        if not recipe.per_tensor or site.first_last_layers_bf16.value is not False:
            return
        if site.gated_mlp.value is False:
            return  # the measured outliers (Fishman et al.) come from SwiGLU
        tokens = planned_tokens(site)
        if site.fine_tune.value is True or (tokens is not None and tokens < LONG_RUN_TOKENS):
            return  # the divergence came after ~2x10^11 tokens of pre-training
        advice = (
            "switch to tensorwise with first/last layers in BF16, or to blockwise / mxfp8"
            if recipe is Recipe.DELAYED
            else "keep the first and last layers in BF16, or use blockwise / mxfp8"
        )
        yield Finding(
            span=where(site.recipe, site),
            message=(
                f"per-tensor scaling on every layer of a gated-MLP model: {term(site.recipe)}"
            ),
            note=(
                "SwiGLU outliers in the first/last blocks made long FP8 runs diverge "
                f"(Fishman et al. 2024); {advice}"
            ),
        )
