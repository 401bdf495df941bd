"""FP8205: BF16 first/last layers requested together with delayed scaling."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, term, where
from fp8lint.rules.fp8201_per_tensor_outlier_layers import MEGATRON_STACKS


class Bf16LayersWithDelayed(Rule):
    code = "FP8205"
    name = "bf16-layers-with-delayed"
    severity = Severity.ERROR
    fix = Applicability.UNSAFE
    summary = "First/last BF16 layers with delayed scaling: Megatron raises at launch"
    valid = (
        Example(
            "cs.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --first-last-layers-bf16: true\n",
        ),
    )
    invalid = (
        Example(
            "ds.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --first-last-layers-bf16: true\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --first-last-layers-bf16: true\n"
                "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
                "  --fp8-recipe: tensorwise\n"
            ),
            unsafe=True,
        ),
        Example(
            "nemo2.py",
            "from nemo.lightning.pytorch.plugins.mixed_precision import "
            "MegatronMixedPrecision\nplugin = MegatronMixedPrecision(precision='bf16-mixed', "
            "fp8='hybrid',\n    fp8_recipe='delayed', first_last_layers_bf16=True,\n"
            "    num_layers_at_start_in_bf16=1, num_layers_at_end_in_bf16=1)\n",
            lines=(3,),
            fixed=(
                "from nemo.lightning.pytorch.plugins.mixed_precision import "
                "MegatronMixedPrecision\n"
                "plugin = MegatronMixedPrecision(precision='bf16-mixed', fp8='hybrid',\n"
                "    fp8_recipe='tensorwise', first_last_layers_bf16=True,\n"
                "    num_layers_at_start_in_bf16=1, num_layers_at_end_in_bf16=1)\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not (site.is_on and site.is_delayed) or site.framework not in MEGATRON_STACKS:
            return
        if site.first_last_layers_bf16.value is not True:
            return
        yield Finding(
            span=where(site.first_last_layers_bf16, site),
            message=(
                f"{term(site.first_last_layers_bf16)} with delayed scaling: {term(site.recipe)}"
            ),
            note=(
                'Megatron raises "Delayed scaling does not support first / last layer in '
                'BF16" at launch'
            ),
            fix=FixPlan(
                Applicability.UNSAFE,
                "switch the recipe to tensorwise (current scaling; needs TE >= 2.2)",
                (SetValue("recipe", Recipe.TENSORWISE),),
            ),
        )
