"""FP8206: E4M3 for gradients under per-tensor scaling."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Format, Fp8Site
from fp8lint.rule import Example, Finding, FixPlan, Rule, SetValue, term, where


class E4m3Gradients(Rule):
    code = "FP8206"
    name = "e4m3-gradients"
    severity = Severity.INFO
    fix = Applicability.UNSAFE
    summary = "E4M3 gradients with a per-tensor recipe"
    valid = (
        Example(
            "hybrid.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --first-last-layers-bf16: true\n",
        ),
        Example("mx.yaml", "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-recipe: mxfp8\n"),
        Example(
            "block.py",
            "from transformer_engine.common.recipe import Float8BlockScaling\n"
            "r = Float8BlockScaling()\n",
        ),
    )
    invalid = (
        Example(
            "ds.yaml",
            "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
            lines=(2,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "acc.json",
            '{"mixed_precision": "fp8",\n "fp8_config": {"backend": "TE",\n'
            '  "fp8_format": "E4M3"}}\n',
            lines=(3,),
            fixed=(
                '{"mixed_precision": "fp8",\n "fp8_config": {"backend": "TE",\n'
                '  "fp8_format": "HYBRID"}}\n'
            ),
            unsafe=True,
        ),
        Example(
            "cs.py",
            "from transformer_engine.common.recipe import Float8CurrentScaling, "
            "Format\nr = Float8CurrentScaling(fp8_format=Format.E4M3)\n",
            lines=(2,),
            fixed=(
                "from transformer_engine.common.recipe import Float8CurrentScaling, Format\n"
                "r = Float8CurrentScaling(fp8_format=Format.HYBRID)\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        recipe = site.recipe.value
        if not site.is_on or site.fmt.value is not Fp8Format.E4M3 or recipe is None:
            return
        if not recipe.per_tensor:
            return
        yield Finding(
            span=where(site.fmt, site),
            message=f"E4M3 gradients under {recipe.value} scaling: {term(site.fmt)}",
            note=(
                "E4M3 spans about 17.8 binades (max 448), E5M2 31.8 (max 57344); gradients "
                "need the range, and TE's docs prefer E5M2 for them"
                + (" (one stale scale per tensor: delayed scaling)" if site.is_delayed else "")
            ),
            fix=FixPlan(
                Applicability.UNSAFE, "use the hybrid format", (SetValue("fmt", Fp8Format.HYBRID),)
            ),
        )
