"""FP8202: the output head (lm_head) converted to FP8 with per-tensor scaling."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, explain, where

_TT_PY = "from torchtitan.components.quantization import Float8LinearConverter as F\n"
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
        Example(
            "registry.py",
            _TT_PY + 'c = F.Config(recipe_name="tensorwise", filter_fqns=["lm_head"])\n',
        ),
    )
    invalid = (
        Example("unfiltered.toml", _TT + "filter_fqns = []\n", lines=(6,)),
        Example("default.toml", _TT + "enable_fsdp_float8_all_gather = true\n", lines=(3,)),
        Example("registry.py", _TT_PY + 'c = F.Config(recipe_name="tensorwise")\n', lines=(2,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        head = site.output_head_fp8
        recipe = site.recipe.value
        if not site.is_on or head.value is not True or recipe is None or not recipe.per_tensor:
            return
        yield Finding(
            span=where(head, site),
            message=(
                f"the output head is converted to FP8 ({explain(head)}) with {recipe.value} "
                "scaling: one scale for the whole logits GEMM, whose inputs carry the "
                "model's largest outliers. Accelerate skips the first and last linear layers "
                '"for stability reasons", torchao\'s example filters the last module, and '
                'Megatron keeps the head in BF16 unless MXFP8. Exclude it: add "output" to '
                "torchtitan's filter_fqns, or return False for it in torchao's module_filter_fn"
            ),
        )
