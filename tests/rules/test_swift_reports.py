"""FP8640-FP8642 (ms-swift #9723, #7290, #8001) on the normalized model: for each check a
violating site and its passing twin, which differ in the one setting the check reads."""

from __future__ import annotations

from typing import Any

import pytest

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe, Setting, make_span
from fp8lint.rule import Rule
from fp8lint.rules.fp8640_mxfp8_packed_tokens_unaligned import Mxfp8PackedTokensUnaligned
from fp8lint.rules.fp8641_blockwise_param_gather_lora import BlockwiseParamGatherLora
from fp8lint.rules.fp8642_delayed_param_gather_bf16_moments import (
    DelayedParamGatherBf16Moments,
)
from fp8lint.settings import TARGETS_OPTION, Targets

SPAN = make_span("run.sh", 1, 1, 1, 10, 0, 9)


def put(value: Any, provenance: str = "written") -> Setting[Any]:
    return Setting[Any].model_construct(
        value=value, known=True, provenance=provenance, key="k", span=SPAN
    )


def site(family: str = "swift", **values: Any) -> Fp8Site:
    settings = {name: put(value) for name, value in values.items()}
    return Fp8Site.model_construct(
        path="run.sh", framework="megatron", family=family, kind="k", span=SPAN, **settings
    )


def found(rule: Rule, s: Fp8Site, **options: Any) -> list[Severity | None]:
    return [f.severity for f in rule.check(s, {**rule.option_defaults(), **options})]


MX = {
    "enabled": True,
    "recipe": Recipe.MXFP8,
    "packing": True,
    "sequence_parallel": True,
    "tensor_parallel": 4,
}
BLOCK_LORA = {
    "enabled": True,
    "recipe": Recipe.BLOCKWISE,
    "fp8_param_gather": True,
    "peft": "lora",
}
DELAYED_PAO = {
    "enabled": True,
    "recipe": Recipe.DELAYED,
    "fp8_param_gather": True,
    "precision_aware_optimizer": True,
    "exp_avg_dtype": "bf16",
    "exp_avg_sq_dtype": "fp32",
}


@pytest.mark.parametrize(
    ("rule", "bad", "change"),
    [
        (Mxfp8PackedTokensUnaligned(), MX, {"recipe": Recipe.BLOCKWISE}),
        (Mxfp8PackedTokensUnaligned(), MX, {"packing": False}),
        (Mxfp8PackedTokensUnaligned(), MX, {"sequence_parallel": False}),
        (Mxfp8PackedTokensUnaligned(), MX, {"tensor_parallel": 1}),
        (Mxfp8PackedTokensUnaligned(), MX, {"enabled": False}),
        (BlockwiseParamGatherLora(), BLOCK_LORA, {"fp8_param_gather": False}),
        (BlockwiseParamGatherLora(), BLOCK_LORA, {"recipe": Recipe.MXFP8}),
        (BlockwiseParamGatherLora(), BLOCK_LORA, {"peft": None}),
        (DelayedParamGatherBf16Moments(), DELAYED_PAO, {"exp_avg_dtype": "fp32"}),
        (DelayedParamGatherBf16Moments(), DELAYED_PAO, {"precision_aware_optimizer": False}),
        (DelayedParamGatherBf16Moments(), DELAYED_PAO, {"fp8_param_gather": False}),
        (DelayedParamGatherBf16Moments(), DELAYED_PAO, {"recipe": Recipe.TENSORWISE}),
    ],
)
def test_violating_site_is_flagged_and_its_twin_is_not(
    rule: Rule, bad: dict[str, Any], change: dict[str, Any]
) -> None:
    assert len(found(rule, site(**bad))) == 1
    assert found(rule, site(**{**bad, **change})) == []


def test_unknown_values_stay_silent() -> None:
    unknown = Setting[Any].model_construct(known=False, provenance="written", key="k")
    for rule, base, name in (
        (Mxfp8PackedTokensUnaligned(), MX, "packing"),
        (BlockwiseParamGatherLora(), BLOCK_LORA, "peft"),
        (DelayedParamGatherBf16Moments(), DELAYED_PAO, "exp_avg_dtype"),
    ):
        s = site(**base).model_copy(update={name: unknown})
        assert found(rule, s) == []


def test_swift_padding_failure_is_a_warning_only_for_releases_before_the_fix() -> None:
    rule = Mxfp8PackedTokensUnaligned()
    old = {TARGETS_OPTION: Targets({"ms-swift": "4.4.0"})}
    new = {TARGETS_OPTION: Targets({"ms-swift": "4.4.1"})}
    assert found(rule, site(**MX), **old) == [Severity.WARNING]
    assert found(rule, site(**MX), **new) == [Severity.INFO]
    assert found(rule, site(**MX)) == [Severity.INFO]  # default target: the newest release


def test_swift_padding_rule_reads_only_swift_launches() -> None:
    """verl and Megatron pad packed batches their own way: not this report."""
    rule = Mxfp8PackedTokensUnaligned()
    assert found(rule, site(family="verl", **MX)) == []
    assert found(rule, site(family=None, **MX)) == []


def test_both_moments_in_fp16_are_flagged_once() -> None:
    s = site(**{**DELAYED_PAO, "exp_avg_dtype": "fp16", "exp_avg_sq_dtype": "bf16"})
    findings = list(DelayedParamGatherBf16Moments().check(s, {}))
    assert len(findings) == 1 and "fp16" in findings[0].message and "bf16" in findings[0].message
