"""FP8301: an explicit amax reduction group that leaves out tensor-parallel peers."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import AmaxScope, Fp8Site
from fp8lint.rule import Example, Finding, FixPlan, Rule, term, where

_TE = (
    "from transformer_engine.common.recipe import DelayedScaling\n"
    "import transformer_engine.pytorch as te\n"
)


class AmaxGroupExcludesTp(Rule):
    code = "FP8301"
    name = "amax-group-excludes-tp"
    severity = Severity.WARNING
    severity_note = "error with SP/CP"
    fix = Applicability.DISPLAY_ONLY
    summary = "Delayed scaling with a data-parallel-only amax reduction group"
    valid = (
        Example(
            "amax_group.py",
            _TE + "r = DelayedScaling()\n"
            "with te.fp8_autocast(fp8_recipe=r, fp8_group=mpu.get_amax_reduction_group()):\n"
            "    pass\n",
        ),
        Example(
            "world.py",
            _TE + "r = DelayedScaling()\n"
            "with te.autocast(recipe=r, amax_reduction_group=None):\n    pass\n",
        ),
    )
    invalid = (
        Example(
            "dp.py",
            _TE + "r = DelayedScaling()\n"
            "with te.fp8_autocast(fp8_recipe=r, fp8_group=mpu.get_data_parallel_group()):\n"
            "    pass\n",
            lines=(4,),
        ),
        Example(
            "pretrain_mds.sh",
            "deepspeed pretrain_gpt.py --tensor-model-parallel-size 4 --fp8-hybrid "
            "--transformer-impl transformer_engine --deepspeed --deepspeed_config ds.json\n",
            lines=(1,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        scope = site.amax_scope
        if not (site.is_on and site.is_delayed) or scope.value is None:
            return
        if scope.value.includes_tp is not False:
            return
        # a group written in the file, or one a framework's own code fixes (Megatron-DeepSpeed)
        if not scope.written and scope.value is not AmaxScope.DP_ONLY:
            return
        tp = site.tensor_parallel.value
        if tp == 1:
            return
        sp = site.sequence_parallel.value is True
        cp = (site.context_parallel.value or 1) > 1
        yield Finding(
            span=where(scope, site),
            message=(f"amax reduction group leaves out the tensor-parallel ranks: {term(scope)}"),
            note=(
                "SP/CP all-gathers then decode shards scaled apart: wrong values every step"
                if sp or cp
                else "TP shards of one tensor get different scales; Megatron PR #442 traced "
                "a 40B TP=8 divergence to this"
            ),
            severity=Severity.ERROR if sp or cp else None,
            fix=FixPlan(
                Applicability.DISPLAY_ONLY,
                "pass Megatron's parallel_state.get_amax_reduction_group() (or no group, for the "
                "world) as the amax reduction group"
                if scope.written
                else f"{scope.default_of} fixes the group in its code: run FP8 with "
                "tensor parallel size 1, or on Megatron-LM",
            ),
        )
