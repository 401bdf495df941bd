"""FP8620: torchtitan's MXFP8 linear converter with tensor parallelism."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, term, where

_MX_TP = (
    '[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["quantize.linear.mx"]\n\n'
    "[parallelism]\ntensor_parallel_degree = {tp}\n"
)


class TorchtitanMxfp8TensorParallel(Rule):
    code = "FP8620"
    name = "torchtitan-mxfp8-tensor-parallel"
    severity = Severity.WARNING  # documented failure: pytorch/torchtitan#3817 (open)
    summary = "torchtitan MXFP8 linears with tensor parallelism >= 2 (crash, torchtitan #3817)"
    valid = (
        Example("llama3_8b_mx.toml", _MX_TP.format(tp=1)),
        Example(
            "llama3_8b_fp8.toml",
            '[model]\nconverters = ["quantize.linear.float8"]\n\n'
            "[parallelism]\ntensor_parallel_degree = 2\n",
        ),
    )
    invalid = (Example("llama3_8b_mx_tp.toml", _MX_TP.format(tp=2), lines=(7,)),)

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.kind.startswith("torchtitan") or not site.is_on:
            return
        if not site.recipe.known or site.recipe.value is not Recipe.MXFP8:
            return
        tp = site.tensor_parallel
        if not tp.known or not isinstance(tp.value, int) or tp.value < 2:
            return
        yield Finding(
            span=where(tp, site),
            message=f"torchtitan MXFP8 with tensor parallelism: {term(tp)}",
            note=(
                "torchtitan #3817: MXFP8 linears under TP crash in the first forward "
                "('mat2 must be col_major'); keep tensor_parallel_degree 1 with MXFP8"
            ),
        )
