"""Every rule's own valid/invalid examples, run automatically (Fixit style)."""

from __future__ import annotations

import pytest

from fp8lint.rule import Example, Rule
from fp8lint.rules import all_rules

from ..conftest import lint

CASES = [
    pytest.param(rule, ex, valid, id=f"{rule.code}-{'valid' if valid else 'invalid'}-{ex.filename}")
    for rule in all_rules()
    for valid, examples in ((True, rule.valid), (False, rule.invalid))
    for ex in examples
]


@pytest.mark.parametrize(("rule", "example", "valid"), CASES)
def test_rule_example(rule: type[Rule], example: Example, valid: bool) -> None:
    options = {rule.code: dict(example.options)} if example.options else None
    diags = lint(example.filename, example.text, select=[rule.code, "FP8001"], options=options)
    assert not [d for d in diags if d.code == "FP8001"], diags
    mine = [d for d in diags if d.code == rule.code]
    if valid:
        assert mine == [], [d.message for d in mine]
    else:
        assert mine, f"{rule.code} did not fire on {example.filename}"
        if example.lines:
            assert sorted({d.line for d in mine}) == sorted(example.lines), [
                (d.line, d.message) for d in mine
            ]
        for d in mine:
            assert d.severity.value in ("error", "warning", "info")
            assert len(d.message) > 40  # a finding says why and what to change
