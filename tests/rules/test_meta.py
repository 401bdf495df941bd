"""The catalog itself: codes, names, pages and examples are complete and consistent."""

from __future__ import annotations

import re

from fp8lint.diagnostics import Applicability
from fp8lint.rules import ENGINE_CODES, all_rules, page_codes, rule_page

HEADINGS = [
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Fix safety",
    "## Options",
    "## When this is wrong",
    "## References",
]


def test_every_rule_has_a_page_and_every_page_a_rule() -> None:
    engine = {e.code for e in ENGINE_CODES}
    assert engine == {"FP8001", "FP8002"}  # engine-level codes: parse errors, suppressions
    assert not engine & {r.code for r in all_rules()}
    codes = {r.code for r in all_rules()} | engine
    assert set(page_codes()) == codes


def test_pages_follow_the_template() -> None:
    for code in page_codes():
        page = rule_page(code)
        assert page.startswith(f"# {code} "), code
        positions = [page.find(h) for h in HEADINGS]
        assert all(p >= 0 for p in positions), (code, positions)
        assert positions == sorted(positions), code


def test_page_title_names_the_rule() -> None:
    for rule in [*all_rules(), *ENGINE_CODES]:
        assert rule_page(rule.code).splitlines()[0] == f"# {rule.code} {rule.name}"


# how a page's "## Fix safety" section begins, for each declared `fix`
FIX_SAFETY = {
    Applicability.SAFE: "Safe:",
    Applicability.UNSAFE: "Unsafe:",
    Applicability.DISPLAY_ONLY: "Display-only:",
    None: "No fix",
}


def test_fix_safety_section_states_the_declared_fix() -> None:
    for rule in [*all_rules(), *ENGINE_CODES]:
        section = rule_page(rule.code).split("## Fix safety\n", 1)[1].lstrip()
        assert section.startswith(FIX_SAFETY[rule.fix]), (rule.code, rule.fix, section[:40])


def test_codes_and_names_are_unique_and_well_formed() -> None:
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.name for r in rules}) == len(rules)
    for r in rules:
        assert re.fullmatch(r"FP8\d{3}", r.code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name)
        assert r.summary
        # a note names the other level and when it applies: "error with SP/CP"
        assert not r.severity_note or r.severity_note.split()[0] in ("error", "warning", "info")
        assert not r.severity_note.startswith(r.severity.value), r.code


def test_every_rule_has_examples_both_ways() -> None:
    for r in all_rules():
        assert r.valid, r.code
        assert r.invalid, r.code
        assert all(ex.lines for ex in r.invalid), r.code


def test_declared_options_have_defaults_of_their_type() -> None:
    for r in all_rules():
        for o in r.options:
            assert isinstance(o.default, o.type), (r.code, o.name)
