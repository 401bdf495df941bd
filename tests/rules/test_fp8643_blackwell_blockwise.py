"""FP8643 on the model, twin by twin: the cases its examples do not show (SM 12.x, a GPU
the table does not list, both findings at once)."""

from __future__ import annotations

from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe, Setting, make_span
from fp8lint.rule import Finding
from fp8lint.rules.fp8643_blackwell_blockwise import BlackwellBlockwise

SPAN = make_span("run.sh", 1, 1, 1, 10, 0, 9)


def site(**values: Any) -> Fp8Site:
    settings = {
        name: Setting[Any].model_construct(
            value=value, known=True, provenance="written", key=name, span=SPAN
        )
        for name, value in values.items()
    }
    return Fp8Site.model_construct(
        path="run.sh", framework="megatron", kind="k", span=SPAN, **settings
    )


BASE = {"enabled": True, "recipe": Recipe.BLOCKWISE, "gpu": "B200"}


def severities(s: Fp8Site) -> list[Severity | None]:
    rule = BlackwellBlockwise()
    return [f.severity or rule.severity for f in rule.check(s, {}) if isinstance(f, Finding)]


def test_fp32_block_scales_on_blackwell_are_an_error_and_off_are_not() -> None:
    assert severities(site(**BASE, block_scaling_fp32_scales=True)) == [Severity.ERROR]
    assert severities(site(**BASE, block_scaling_fp32_scales=False)) == []


def test_moe_on_blackwell_is_a_warning_and_dense_is_not() -> None:
    assert severities(site(**BASE, num_experts=64)) == [Severity.WARNING]
    assert severities(site(**BASE, num_experts=1)) == []


def test_hopper_mxfp8_or_no_gpu_written_stay_silent() -> None:
    moe = {"num_experts": 64, "block_scaling_fp32_scales": True}
    assert severities(site(**{**BASE, "gpu": "H100"}, **moe)) == []
    assert severities(site(**{**BASE, "recipe": Recipe.MXFP8}, **moe)) == []
    no_gpu = {k: v for k, v in BASE.items() if k != "gpu"}
    assert severities(site(**no_gpu, **moe)) == []
    assert len(severities(site(**{**BASE, "gpu": "RTX 5090"}, **moe))) == 2  # SM 12.x too


def test_fp32_scales_and_moe_give_both_findings() -> None:
    both = site(**BASE, block_scaling_fp32_scales=True, num_experts=8)
    assert severities(both) == [Severity.ERROR, Severity.WARNING]
