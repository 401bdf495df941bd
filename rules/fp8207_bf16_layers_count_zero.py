"""FP8207: first/last BF16 layers switched on with zero layers to keep."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site, Setting
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, term, where


def counts(start: Setting[Any], end: Setting[Any]) -> str:
    """Both zero counts in a few words: one `(defaults)` when neither is written."""
    if not start.written and not end.written and start.key and end.key:
        return f"`{start.key}` and `{end.key}` are 0 (defaults)"
    return f"{term(start)}, {term(end)}"


class Bf16LayersCountZero(Rule):
    code = "FP8207"
    name = "bf16-layers-count-zero"
    severity = Severity.WARNING
    fix = Applicability.UNSAFE
    summary = "first_last_layers_bf16 on, but both layer counts are 0 (NeMo 2 / Bridge defaults)"
    valid = (
        Example(
            "ok.py",
            "from nemo.lightning.pytorch.plugins.mixed_precision import "
            "MegatronMixedPrecision\np = MegatronMixedPrecision(precision='bf16-mixed', "
            "fp8='hybrid', fp8_recipe='tensorwise',\n    first_last_layers_bf16=True, "
            "num_layers_at_start_in_bf16=1, num_layers_at_end_in_bf16=1)\n",
        ),
        Example(
            "megatron.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --first-last-layers-bf16: true\n",
        ),
    )
    invalid = (
        Example(
            "zero.py",
            "from nemo.lightning.pytorch.plugins.mixed_precision import "
            "MegatronMixedPrecision\np = MegatronMixedPrecision(precision='bf16-mixed', "
            "fp8='hybrid', fp8_recipe='tensorwise', first_last_layers_bf16=True)\n",
            lines=(2,),
            fixed=(
                "from nemo.lightning.pytorch.plugins.mixed_precision import "
                "MegatronMixedPrecision\n"
                "p = MegatronMixedPrecision(precision='bf16-mixed', fp8='hybrid', "
                "fp8_recipe='tensorwise', first_last_layers_bf16=True, "
                "num_layers_at_start_in_bf16=1, num_layers_at_end_in_bf16=1)\n"
            ),
            unsafe=True,
        ),
        Example(
            "zero.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --first-last-layers-bf16: true\n  --num-layers-at-start-in-bf16: 0\n"
            "  --num-layers-at-end-in-bf16: 0\n",
            lines=(4,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
                "  --first-last-layers-bf16: true\n  --num-layers-at-start-in-bf16: 1\n"
                "  --num-layers-at-end-in-bf16: 1\n"
            ),
            unsafe=True,
        ),
        Example(
            "fp4.yaml",
            "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n"
            "  --first-last-layers-bf16: true\n  --num-layers-at-start-in-bf16: 0\n"
            "  --num-layers-at-end-in-bf16: 0\n",
            lines=(4,),
            fixed=(
                "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n"
                "  --first-last-layers-bf16: true\n  --num-layers-at-start-in-bf16: 1\n"
                "  --num-layers-at-end-in-bf16: 1\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.quantized or site.first_last_layers_bf16.value is not True:
            return
        start, end = site.num_layers_at_start_in_bf16, site.num_layers_at_end_in_bf16
        if start.value != 0 or end.value != 0:
            return
        yield Finding(
            span=where(site.first_last_layers_bf16, site),
            message=f"first/last layers in BF16 keeps no layer: {counts(start, end)}",
            note=(
                "NeMo 2 and Megatron-Bridge default both counts to 0 (Megatron: 1); NVIDIA's "
                "current-scaling recipe keeps 1 layer at each end in BF16"
            ),
            fix=FixPlan(
                Applicability.UNSAFE,
                "keep 1 layer at the start and 1 at the end in BF16",
                (
                    SetValue("num_layers_at_start_in_bf16", 1),
                    SetValue("num_layers_at_end_in_bf16", 1),
                ),
            ),
        )
