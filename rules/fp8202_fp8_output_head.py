"""FP8202: the output head (lm_head) converted to FP8 with per-tensor scaling."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule, converted_by, where

_AM = "fp8:\n  enabled: true\n  recipe_name: tensorwise\n"
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
        Example("automodel.yaml", _AM + '  filter_fqns: ["lm_head"]\n'),
        Example("automodel_rowwise.yaml", "fp8:\n  enabled: true\n  recipe_name: rowwise\n"),
        Example("automodel_off.yaml", "fp8:\n  enabled: false\n  recipe_name: tensorwise\n"),
        Example(
            "registry.py",
            _TT_PY + 'c = F.Config(recipe_name="tensorwise", filter_fqns=["lm_head"])\n',
        ),
    )
    invalid = (
        Example("unfiltered.toml", _TT + "filter_fqns = []\n", lines=(6,)),
        Example("default.toml", _TT + "enable_fsdp_float8_all_gather = true\n", lines=(3,)),
        Example("automodel_head.yaml", _AM + '  filter_fqns: ["self_attn.q_proj"]\n', lines=(4,)),
        Example("automodel_default.yaml", "fp8:\n  enabled: true\n  emulate: false\n", lines=(2,)),
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
                f"the output head runs in FP8 with {recipe.value} scaling ({converted_by(head)})"
            ),
            note=(
                "the logits GEMM carries the largest outliers under one scale; " + _how(head.key)
            ),
        )


def _how(key: str) -> str:
    """How to keep the head out of FP8 in the stack whose key decided it."""
    if key.endswith(".targets"):
        return f'leave "lm_head" out of `{key}`'
    if key.startswith("fp8.filter_fqns"):
        return f'add "lm_head" to `{key}`'
    return 'keep it out of FP8 ("output" in filter_fqns, module_filter_fn, or a plain nn.Linear)'
