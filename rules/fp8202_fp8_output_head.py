"""FP8202: the output head (lm_head) converted to FP8 with per-tensor scaling."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, converted_by, where

_TT = '[model]\nname = "llama3"\nconverters = ["float8"]\n\n[quantize.linear.float8]\n'


class Fp8OutputHead(Rule):
    code = "FP8202"
    name = "fp8-output-head"
    severity = Severity.WARNING
    summary = "The output head / lm_head runs in per-tensor FP8"
    valid = (
        Example("filtered.toml", _TT + 'filter_fqns = ["output"]\n'),
        Example("rowwise.toml", _TT + 'recipe_name = "rowwise"\n'),
        Example("off.toml", '[model]\nname = "llama3"\n\n[quantize.linear.float8]\n'),
    )
    invalid = (
        Example("unfiltered.toml", _TT + "filter_fqns = []\n", lines=(6,)),
        Example("default.toml", _TT + "enable_fsdp_float8_all_gather = true\n", lines=(3,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        head = site.output_head_fp8
        recipe = site.recipe.value
        if not site.is_on or head.value is not True or recipe is None or not recipe.per_tensor:
            return
        yield Finding(
            span=where(head, site),
            message=(
                f"the output head runs in FP8 with {recipe.value} scaling ({converted_by(head)})"
            ),
            note=(
                "the logits GEMM carries the largest outliers under one scale; keep the head out "
                'of FP8 ("output" in filter_fqns, module_filter_fn, or a plain nn.Linear)'
            ),
        )
