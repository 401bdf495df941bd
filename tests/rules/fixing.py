"""What the catalog's tests assert about a fix, shared by the rule examples and the pages."""

from __future__ import annotations

import difflib

from fp8lint.diagnostics import Applicability, Diagnostic
from fp8lint.documents import kind_for
from fp8lint.engine import fix_text, lint_text
from fp8lint.settings import RunSettings

# a finding's message is one short line (what is wrong and the key), its note one more
MESSAGE_CAP = 160
NOTE_CAP = 240


def one_line(text: str, cap: int) -> bool:
    """`text` is a single line of printable text no longer than `cap` characters."""
    return bool(text.strip()) and text.isprintable() and len(text) <= cap


def findings(filename: str, text: str, settings: RunSettings) -> list[Diagnostic]:
    kind = kind_for(filename)
    assert kind is not None, f"fp8lint reads no file named {filename}"
    diags, _ = lint_text(filename, text, kind, settings)
    return sorted(diags, key=Diagnostic.sort_key)


def applicable(diags: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    """The findings whose fix `--fix` (with `--unsafe-fixes` if `unsafe`) would apply."""
    return [d for d in diags if d.fix is not None and d.fix.applies(unsafe)]


def needs_unsafe(diags: list[Diagnostic]) -> bool:
    """Whether some finding's fix is applied only with `--unsafe-fixes`."""
    return len(applicable(diags, True)) > len(applicable(diags, False))


def applicabilities(diags: list[Diagnostic]) -> set[Applicability | None]:
    return {d.fix.applicability if d.fix is not None else None for d in diags}


def show(text: str) -> str:
    """A text as a Python literal split at its lines, to paste into an `Example`."""
    return "\n".join(f"    {line!r}" for line in text.splitlines(keepends=True))


def assert_fix(
    filename: str,
    text: str,
    settings: RunSettings,
    code: str,
    unsafe: bool,
    expected: str,
) -> None:
    """The verified fix loop makes exactly `expected` of `text`, a second run changes nothing,
    and the findings of `code` that had an applicable fix are gone from the fixed text."""
    kind = kind_for(filename)
    assert kind is not None, filename
    before = [d for d in findings(filename, text, settings) if d.code == code]
    result = fix_text(filename, text, kind, settings, unsafe)
    assert result.failure is None, result.failure
    if result.text != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                result.text.splitlines(keepends=True),
                "expected",
                "fixed",
            )
        )
        raise AssertionError(
            f"the fix made another text:\n{diff}\nfixed text:\n{show(result.text)}"
        )
    again = fix_text(filename, result.text, kind, settings, unsafe)
    assert again.failure is None, again.failure
    assert not again.changed and again.text == result.text, "a second --fix changed the text"
    after = findings(filename, result.text, settings)
    assert not [d for d in after if d.code == "FP8001"], after
    mine = [d for d in after if d.code == code]
    kept = [d for d in before if not (d.fix is not None and d.fix.applies(unsafe))]
    assert len(mine) == len(kept), (
        f"{code} still reports the fixed finding: {[(d.line, d.message) for d in mine]}"
    )
