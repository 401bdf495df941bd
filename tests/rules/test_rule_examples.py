"""Every rule's own valid/invalid examples, run automatically (Fixit style): an invalid
example is flagged at its lines, and when its finding offers a fix that `--fix` (or
`--unsafe-fixes`) applies, the example declares the fixed text and the fix loop produces it."""

from __future__ import annotations

import pytest

from fp8lint.diagnostics import Applicability
from fp8lint.rule import Example, Rule
from fp8lint.rules import all_rules
from fp8lint.settings import RunSettings, Selection

from .fixing import (
    MESSAGE_CAP,
    NOTE_CAP,
    applicabilities,
    applicable,
    assert_fix,
    findings,
    needs_unsafe,
    one_line,
    show,
)

CASES = [
    pytest.param(rule, ex, valid, id=f"{rule.code}-{'valid' if valid else 'invalid'}-{ex.filename}")
    for rule in all_rules()
    for valid, examples in ((True, rule.valid), (False, rule.invalid))
    for ex in examples
]
INVALID = [p for p in CASES if p.values[2] is False]


def settings(rule: type[Rule], example: Example) -> RunSettings:
    """The rule alone (and parse errors), with the example's options."""
    return RunSettings(
        selection=Selection(select=(rule.code, "FP8001")),
        options={rule.code: dict(example.options)} if example.options else {},
    )


@pytest.mark.parametrize(("rule", "example", "valid"), CASES)
def test_rule_example(rule: type[Rule], example: Example, valid: bool) -> None:
    diags = findings(example.filename, example.text, settings(rule, example))
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
            # one short line naming the key; the why goes to the note (issue 13)
            assert one_line(d.message, MESSAGE_CAP), d.message
            assert d.note and one_line(d.note, NOTE_CAP), (d.message, d.note)


@pytest.mark.parametrize(("rule", "example", "valid"), INVALID)
def test_rule_example_fix(rule: type[Rule], example: Example, valid: bool) -> None:
    """Fixit's `expected_replacement`: a fixable example pins its fixed text, and only a
    fixable one may declare it."""
    run = settings(rule, example)
    mine = [d for d in findings(example.filename, example.text, run) if d.code == rule.code]
    if not applicable(mine, unsafe=True):
        assert example.fixed is None, (
            f"{example.filename} declares a fixed text, but no {rule.code} finding on it offers "
            "a fix that --fix or --unsafe-fixes would apply"
        )
        assert not example.unsafe, f"{example.filename}: unsafe=True without a fix"
        return
    unsafe = needs_unsafe(mine)
    if example.fixed is None:
        from fp8lint.documents import kind_for
        from fp8lint.engine import fix_text

        kind = kind_for(example.filename)
        assert kind is not None
        result = fix_text(example.filename, example.text, kind, run, unsafe)
        raise AssertionError(
            f"{example.filename}: a {rule.code} finding offers a fix that "
            f"{'--unsafe-fixes' if unsafe else '--fix'} applies; declare the fixed text "
            f"(fixed=...{', unsafe=True' if unsafe else ''}). The fix loop makes "
            f"(failure: {result.failure}):\n{show(result.text)}"
        )
    assert example.unsafe == unsafe, (
        f"{example.filename}: unsafe={example.unsafe}, but the fix "
        f"{'needs' if unsafe else 'does not need'} --unsafe-fixes"
    )
    assert_fix(example.filename, example.text, run, rule.code, unsafe, example.fixed)


def test_examples_declare_fixes_only_where_they_can() -> None:
    for rule in all_rules():
        for ex in rule.valid:
            assert ex.fixed is None and not ex.unsafe, (rule.code, ex.filename)
        for ex in rule.invalid:
            assert ex.fixed is not None or not ex.unsafe, (rule.code, ex.filename)
            assert ex.fixed != ex.text, (rule.code, ex.filename)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_declared_fix_matches_the_examples(rule: type[Rule]) -> None:
    """`Rule.fix` (which the docs show) is what the invalid examples' findings offer: the
    declared applicability at least once, nothing else, except that a safe fix may be demoted
    to unsafe for one finding (a value shared through a YAML anchor or an interpolation)."""
    seen: set[Applicability | None] = set()
    for ex in rule.invalid:
        diags = findings(ex.filename, ex.text, settings(rule, ex))
        seen |= applicabilities([d for d in diags if d.code == rule.code])
    if rule.fix is None:
        assert seen == {None}, seen
        return
    assert rule.fix in seen, (rule.fix, seen)
    allowed: set[Applicability | None] = {rule.fix, None}
    if rule.fix is Applicability.SAFE:
        allowed.add(Applicability.UNSAFE)
    assert seen <= allowed, (rule.fix, seen)
