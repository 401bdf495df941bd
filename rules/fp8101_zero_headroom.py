"""FP8101: delayed scaling whose scale has no headroom above the last amax."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import AmaxAlgo, Fp8Site
from fp8lint.rule import (
    Example,
    Finding,
    FixPlan,
    Rule,
    SetValue,
    enabled_related,
    short_run,
    term,
    where,
)


def zero_headroom_cause(site: Fp8Site) -> str | None:
    """Why the reference amax is the previous micro-batch's, or None if it is not."""
    if not site.is_delayed or site.margin.value != 0:
        return None
    algo, hist = site.amax_compute_algo, site.amax_history_len
    if algo.value is AmaxAlgo.MOST_RECENT:
        return term(algo)
    if hist.value == 1:
        return term(hist)
    return None


class ZeroHeadroom(Rule):
    code = "FP8101"
    name = "zero-headroom"
    severity = Severity.WARNING
    severity_note = "info for a fine-tune or a run under 10k steps"
    fix = Applicability.UNSAFE
    summary = (
        "Delayed scaling with margin 0 and a one-step reference amax clips every amax increase"
    )

    valid = (
        Example(
            "megatron_ok.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
        ),
        Example(
            "tensorwise.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
        ),
        Example(
            "te_default.py",
            "from transformer_engine.common.recipe import DelayedScaling\nr = DelayedScaling()\n",
        ),
        Example("margin.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1\n"),
        # ms-swift's own defaults are history 1024 with max
        Example("swift_sft.sh", "megatron sft --load m --fp8_format hybrid\n"),
        Example(
            "maxtext.sh",
            "python3 -m MaxText.train MaxText/configs/base.yml quantization=nanoo_fp8\n",
        ),
        Example(
            "lightning_default.py",
            'import lightning as L\nfabric = L.Fabric(precision="transformer-engine")\n',
        ),
    )
    invalid = (
        Example(
            "megatron_defaults.yaml",
            "MODEL_ARGS:\n  --bf16: true\n  --fp8-format: hybrid\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --bf16: true\n  --fp8-format: hybrid\n"
                "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "nemo.yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
            "  fp8_margin: 0\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n",
            lines=(7,),
            fixed=(
                "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
                "  fp8_margin: 0\n  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "te.py",
            "import transformer_engine.common.recipe as recipe\n"
            "r = recipe.DelayedScaling(margin=0, amax_history_len=1)\n",
            lines=(2,),
            fixed=(
                "import transformer_engine.common.recipe as recipe\n"
                "r = recipe.DelayedScaling(margin=0, amax_history_len=1024, "
                'amax_compute_algo="max")\n'
            ),
            unsafe=True,
        ),
        Example(
            "accelerate.json",
            '{"mixed_precision": "fp8",\n "fp8_config": {"backend": "TE",'
            ' "amax_history_len": 1}}\n',
            lines=(2,),
            fixed=(
                '{"mixed_precision": "fp8",\n'
                ' "fp8_config": {"backend": "TE", "amax_history_len": 1024,'
                ' "amax_compute_algo": "max"}}\n'
            ),
            unsafe=True,
        ),
        Example(
            "swift_pt.sh",
            "megatron pt --fp8_format hybrid --fp8_amax_compute_algo most_recent\n",
            lines=(1,),
            fixed=(
                "megatron pt --fp8_format hybrid --fp8_amax_compute_algo max"
                " --fp8_amax_history_len 1024\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on:
            return
        cause = zero_headroom_cause(site)
        if cause is None:
            return
        algo, hist = site.amax_compute_algo, site.amax_history_len
        target = (
            algo
            if (algo.value is AmaxAlgo.MOST_RECENT and algo.written)
            else (hist if hist.written and hist.value == 1 else algo)
        )
        note = (
            "headroom 0 binades: each scale fits the previous micro-batch's amax exactly, so "
            "any rise clips silently (a 2x spike loses half the outlier)"
        )
        short = short_run(site)
        yield Finding(
            span=where(target, site),
            message=f"zero headroom: {term(site.margin)} with {cause}",
            severity=Severity.INFO if short else None,
            note=f"{note}; info for {short}, which sees few spikes" if short else note,
            related=enabled_related(site, target),
            headroom_binades=0.0,
            fix=FixPlan(
                Applicability.UNSAFE,
                "set amax_history_len 1024 and amax_compute_algo max (NVIDIA's delayed recipe)",
                (SetValue("amax_history_len", 1024), SetValue("amax_compute_algo", AmaxAlgo.MAX)),
            ),
        )
