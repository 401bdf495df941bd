"""FP8102: a `max` window too short to remember recent spikes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import AmaxAlgo, Fp8Site
from fp8lint.rule import Example, Finding, FixPlan, Option, Rule, SetValue, amax_over, term, where


class ShortAmaxHistory(Rule):
    code = "FP8102"
    name = "short-amax-history"
    severity = Severity.INFO
    fix = Applicability.UNSAFE
    summary = "Delayed scaling with `max` over a short amax history"
    options = (
        Option(
            "min-amax-history-len",
            int,
            16,
            "windows shorter than this (and longer than 1) are reported",
        ),
    )
    valid = (
        Example(
            "long.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
            "  --fp8-amax-compute-algo: max\n",
        ),
        Example(
            "te16.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(amax_history_len=16, amax_compute_algo='max')\n",
        ),
    )
    invalid = (
        Example(
            "levanter.yaml",
            "trainer:\n  quantization:\n    fp8: true\n    amax_history_length: 4\n",
            lines=(4,),
            fixed="trainer:\n  quantization:\n    fp8: true\n    amax_history_length: 1024\n",
            unsafe=True,
        ),
        Example(
            "short.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 4\n"
            "  --fp8-amax-compute-algo: max\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "te4.py",
            "from transformer_engine.common.recipe import DelayedScaling\n"
            "r = DelayedScaling(amax_history_len=4)\n",
            lines=(2,),
            fixed=(
                "from transformer_engine.common.recipe import DelayedScaling\n"
                "r = DelayedScaling(amax_history_len=1024)\n"
            ),
            unsafe=True,
        ),
        Example(
            "opt.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 32\n"
            "  --fp8-amax-compute-algo: max\n",
            lines=(3,),
            options={"min-amax-history-len": 64},
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        hist = site.amax_history_len.value
        minimum = int(options["min-amax-history-len"])
        if not (site.is_on and site.is_delayed and site.margin.known):
            return
        if site.amax_compute_algo.value is not AmaxAlgo.MAX or hist is None:
            return
        if not 1 < hist < minimum:
            return
        m = site.margin.value or 0
        yield Finding(
            span=where(site.amax_history_len, site),
            message=(
                f"short amax history: {term(site.amax_history_len)} (NVIDIA's recipes use 1024)"
            ),
            note=(
                f"headroom {m} binade{'s' if m != 1 else ''}: {amax_over(m)} the largest of the "
                f"last {hist} clips; only spikes recurring within {hist} steps are absorbed"
            ),
            headroom_binades=float(m),
            fix=FixPlan(
                Applicability.UNSAFE,
                "set amax_history_len 1024",
                (SetValue("amax_history_len", 1024),),
            ),
        )
