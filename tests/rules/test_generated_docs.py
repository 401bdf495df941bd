"""README's rule table and each page's status line restate the rule classes: they are
generated (scripts/gen_docs.py), and this fails as soon as either drifts from the classes."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.rules import ENGINE_CODES, all_rules, rule_page

from ..conftest import ROOT


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    path = ROOT / "scripts" / "gen_docs.py"
    spec = importlib.util.spec_from_file_location("gen_docs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


def test_readme_and_pages_match_the_rule_classes(gen: ModuleType) -> None:
    stale = sorted(str(p.relative_to(ROOT)) for p in gen.outdated())
    assert not stale, f"{', '.join(stale)} out of date: run `{gen.COMMAND}`"


def test_every_page_states_its_code(gen: ModuleType) -> None:
    """Line 3 of each page is the status line, with what the class says."""
    fp8206 = next(r for r in all_rules() if r.code == "FP8206")
    assert rule_page("FP8206").split("\n")[2] == (
        "**Default severity:** info · **Fix:** unsafe · **Selected by default:** yes"
    )
    assert fp8206.severity is Severity.INFO and fp8206.fix is Applicability.UNSAFE
    for entry in gen.entries():
        line = rule_page(entry.code).split("\n")[2]
        assert line == gen.status_line(entry)
        assert f"**Fix:** {gen.FIX_WORDS[entry.fix]}" in line
        assert ("**Selected by default:** yes" in line) is entry.default_enabled


def test_status_line_is_rewritten_or_inserted(gen: ModuleType) -> None:
    entry = replace(ENGINE_CODES[1], severity=Severity.ERROR, severity_note="info when ...")
    stale = "# FP8002 unused-suppression\n\n**Default severity:** warning · old\n\n## What\n"
    bare = "# FP8002 unused-suppression\n\n## What\n"
    expected = (
        "# FP8002 unused-suppression\n\n**Default severity:** error (info when ...) · "
        "**Fix:** safe · **Selected by default:** yes\n\n## What\n"
    )
    assert gen.render_page(stale, entry) == expected
    assert gen.render_page(bare, entry) == expected
    assert gen.render_page(expected, entry) == expected
    with pytest.raises(ValueError):
        gen.render_page("# FP8001 parse-error\n", entry)


def test_readme_table_is_replaced_between_the_markers_only(gen: ModuleType) -> None:
    items = gen.entries()
    text = f"intro\n{gen.TABLE_BEGIN}\nold table\n{gen.TABLE_END}\nafter\n"
    out = gen.render_readme(text, items)
    assert out.startswith(f"intro\n{gen.TABLE_BEGIN}\n\n| code | name |")
    assert out.endswith(f"\n\n{gen.TABLE_END}\nafter\n")
    assert "old table" not in out
    rows = [line for line in out.splitlines() if line.startswith("| FP8")]
    assert [r.split(" | ")[0][2:] for r in rows] == sorted(e.code for e in items)
    assert "| FP8106 | margin-below-policy (not selected by default) |" in out
    assert "| warning (error with SP/CP) | unsafe |" in out  # FP8302
    assert gen.render_readme(out, items) == out
    with pytest.raises(ValueError):
        gen.render_readme("no markers\n", items)


def test_check_mode_reports_drift_and_the_command(
    gen: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--check` on a copy whose page and README drifted: exit 1, names both, says how to fix;
    the plain run rewrites them and `--check` is then clean."""
    pages = tmp_path / "rules"
    pages.mkdir()
    for entry in gen.entries():
        (pages / f"{entry.code}.md").write_text(rule_page(entry.code), encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(gen.README.read_text(encoding="utf-8"), encoding="utf-8")
    page = pages / "FP8101.md"
    page.write_text(page.read_text().replace("**Fix:** unsafe", "**Fix:** none"), encoding="utf-8")
    readme.write_text(readme.read_text().replace("| FP8104 |", "| FP8104x |"), encoding="utf-8")
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "PAGES", pages)
    monkeypatch.setattr(gen, "README", readme)

    assert gen.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "README.md is out of date" in out and "rules/FP8101.md is out of date" in out
    assert gen.COMMAND in out
    assert gen.main([]) == 0
    assert "**Fix:** unsafe" in page.read_text() and "| FP8104 |" in readme.read_text()
    assert gen.main(["--check"]) == 0
