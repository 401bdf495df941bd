"""FP8403: settings that contradict each other."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, term, where
from fp8lint.rules.fp8201_per_tensor_outlier_layers import MEGATRON_STACKS


class ConflictingSettings(Rule):
    code = "FP8403"
    name = "conflicting-settings"
    severity = Severity.ERROR
    summary = "Settings that contradict each other (format flags, fp8+fp4, output proj, custom)"
    valid = (
        Example(
            "ok.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_e4m3: false\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
        ),
        Example(
            "mx_proj.yaml",
            "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n  --fp8-output-proj: true\n",
        ),
    )
    invalid = (
        Example(
            "both.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_e4m3: true\n"
            "  fp8_hybrid: true\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
            lines=(5,),
        ),
        Example(
            "neither.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n"
            "  fp8_e4m3: false\n  fp8_hybrid: false\n",
            lines=(3,),
        ),
        Example(
            "fp4.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp4-format: e2m1\n"
            "  --fp8-recipe: tensorwise\n  --first-last-layers-bf16: true\n",
            lines=(3,),
        ),
        Example(
            "proj.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --fp8-output-proj: true\n  --first-last-layers-bf16: true\n",
            lines=(4,),
        ),
        Example(
            "custom.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: custom\n",
            lines=(3,),
        ),
        Example(
            "gather.yaml", "MODEL_ARGS:\n  --bf16: true\n  --fp8-param-gather: true\n", lines=(3,)
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        for n in site.notes:
            if n.kind == "conflict":
                yield Finding(span=n.span, message=n.message, note=n.why)
        gather = site.fp8_param_gather
        if site.enabled.value is False and gather.written and gather.value is True and gather.span:
            yield Finding(
                span=gather.span,
                message=f"`{gather.key}` keeps parameters in FP8, but FP8 is off",
                note=f"Megatron raises at launch (FP8 is off: {site.enabled.describe()})",
            )
        if not site.is_on:
            return
        if site.fp4.value:
            yield Finding(
                span=where(site.fp4, site),
                message=f"FP8 and FP4 are both on: {term(site.fmt)}, {term(site.fp4)}",
                note="Megatron accepts only one of them",
            )
        proj = site.fp8_output_proj
        if proj.value is True and site.recipe.known and site.recipe.value is not Recipe.MXFP8:
            yield Finding(
                span=where(proj, site),
                message=f"`{proj.key}` needs the mxfp8 recipe, not {term(site.recipe)}",
                note=(
                    "Megatron allows an FP8 output projection only with mxfp8; per-tensor "
                    "FP8 on the LM head is why it stays in BF16 by default"
                ),
            )
        if (
            site.recipe.value is Recipe.CUSTOM
            and site.framework in MEGATRON_STACKS
            and not site.quantizer_factory.written
        ):
            yield Finding(
                span=where(site.recipe, site),
                message=f"the custom recipe needs `--fp8-quantizer-factory`: {term(site.recipe)}",
                note="Megatron raises at launch without a quantizer factory's import path",
            )
