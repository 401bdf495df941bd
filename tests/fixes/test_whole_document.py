"""The fix loop compares the whole parsed document, not only the FP8 sites (issue 20): a fix
may change only values whose own text it rewrote, and none read through an alias."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Severity, TextEdit
from fp8lint.documents.syntax import document_entries
from fp8lint.engine import fix_text as engine_fix_text
from fp8lint.fixes import fix_text, same_document
from fp8lint.settings import RunSettings

from ..conftest import run_cli

# the reproducer: one mapping, read by `model` and by an ablation without FP8
SHARED_MAPPING = (
    "base: &b\n  fp8: true\n  fp8_hybrid: true\n  fp8_margin: 0\nmodel: *b\nablation_no_fp8: *b\n"
)
# Megatron flags in a flow mapping that two keys read
SHARED_FLAGS = (
    "common: &m {--fp8-format: hybrid, --fp8-amax-compute-algo: max, "
    "--fp8-amax-history-len: 1}\nMODEL_ARGS: *m\nABLATION_ARGS: *m\n"
)


@pytest.mark.parametrize("text", [SHARED_MAPPING, SHARED_FLAGS], ids=["block", "flow"])
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_a_mapping_read_through_an_alias_is_never_edited(
    tmp_path: Path, text: str, unsafe: bool
) -> None:
    p = tmp_path / "b.yaml"
    p.write_bytes(text.encode())
    args = ["check", "b.yaml", "--fix", "--no-cache"] + (["--unsafe-fixes"] if unsafe else [])
    r = run_cli(*args, cwd=tmp_path)
    assert p.read_bytes() == text.encode()
    assert "is read through an alias by another key; change it by hand" in r.stdout
    assert "fixable" not in r.stdout and "[*]" not in r.stdout


def _offer(edit: TextEdit) -> Diagnostic:
    fix = Fix(Applicability.SAFE, "set it", (edit,), 0, ())
    return Diagnostic(
        "FP8101", "zero-headroom", Severity.WARNING, "m", "a.yaml", 1, 1, 1, 1, fix=fix
    )


def _loop(text: str, edit: TextEdit, kind: str = "yaml") -> str | None:
    """The loop's verdict on one offered edit, with a lint that finds no site (so only the
    whole-document comparison can refuse it)."""

    def lint(t: str) -> tuple[list[Diagnostic], list[object]]:
        return ([_offer(edit)] if t == text else []), []

    result = fix_text(text, lint, False, None, lambda t: document_entries(t, kind))  # type: ignore[arg-type]
    return result.failure


def _insert(text: str, at: str, content: str) -> TextEdit:
    i = text.index(at) + len(at)
    return TextEdit(content, 1, 1, 1, 1, i, i)


def test_an_edit_inside_an_aliased_ancestor_is_refused() -> None:
    """The edited mapping is not itself anchored, but its parent is: the copy under `run`
    would change too, and the loop names the anchor."""
    text = "base: &b\n  model:\n    fp8: true\nrun: *b\n"
    why = _loop(text, _insert(text, "fp8: true\n", "    fp8_margin: 1\n"))
    assert why == (
        "fix not applied: `base.model.fp8_margin` is shared: it lies under `&b` (line 1), "
        "which an alias reads; the file is unchanged"
    )


def test_an_edit_that_moves_another_key_is_refused() -> None:
    """An insertion that re-parents the next key (`other` ends up inside `model`) changes a
    value no edit wrote: the site check alone would not see it."""
    text = "model:\n  fp8: true\nother: 1\n"
    why = _loop(text, _insert(text, "fp8: true\n", "  inner:"))
    assert why is not None and "no fix meant to change it" in why


def test_an_edit_of_its_own_value_passes() -> None:
    text = "model:\n  fp8: true\n  fp8_margin: 0\nother: {a: 1}\n"
    i = text.index("0\n")
    assert _loop(text, TextEdit("1", 1, 1, 1, 1, i, i + 1)) is None
    assert _loop(text, _insert(text, "fp8_margin: 0\n", "  fp8_interval: 1\n")) is None


def test_a_value_merged_from_a_template_is_shared() -> None:
    text = "t: &t\n  fp8_margin: 0\nmodel:\n  <<: *t\n  fp8: true\n"
    i = text.index("0\n")
    why = _loop(text, TextEdit("1", 1, 1, 1, 1, i, i + 1))
    assert why is not None
    assert "`t.fp8_margin` is shared: it lies under `&t` (line 1), which a `<<:` merge reads" in why


def test_json_and_toml_documents_are_compared_too() -> None:
    js = '{"a": {"fp8": true}, "b": 1}\n'
    assert _loop(js, _insert(js, '"fp8": true', ', "x": 2'), "json") is None
    toml = "[float8]\nenable = true\nrecipe = 'rowwise'\n"
    assert _loop(toml, _insert(toml, "enable = true\n", "x = 2\n"), "toml") is None
    # a table header inserted before `recipe` moves it into the new table
    why = _loop(toml, _insert(toml, "enable = true\n", "[float8.sub]\n"), "toml")
    assert why is not None and "`float8.recipe` would change although" in why


def test_python_and_shell_have_no_document_to_compare() -> None:
    assert document_entries("x = 1\n", "python") is None
    assert document_entries("echo hi\n", "shell") is None
    edit = TextEdit("y", 1, 1, 1, 1, 0, 1)
    assert same_document("x = 1\n", "y = 1\n", [edit], lambda t: None) is None


def test_an_alias_bomb_is_compared_without_expanding_it() -> None:
    """9^8 values once expanded; compared as written, the FP8 mapping's fix goes through."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    text = "\n".join(lines) + "\nmodel:\n  fp8: true\n"
    assert _loop(text, _insert(text, "fp8: true\n", "  fp8_margin: 1\n")) is None
    entries = document_entries(text, "yaml")
    assert entries is not None and len(entries) < 100


def test_past_the_bound_a_document_is_not_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    from fp8lint.documents import syntax

    monkeypatch.setattr(syntax, "MAX_ENTRIES", 3)
    text = "model:\n  fp8: true\n  a: 1\n  b: 2\n"
    why = _loop(text, _insert(text, "fp8: true\n", "  fp8_margin: 1\n"))
    assert why is not None and "too large to compare" in why


def test_the_engine_wires_the_comparison() -> None:
    """Through the engine: a Megatron block mapping merged into the args is advice only."""
    text = (
        "base: &b\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1\n"
        "MODEL_ARGS:\n  <<: *b\n  --fp8-amax-compute-algo: max\n"
    )
    result = engine_fix_text("a.yaml", text, "yaml", RunSettings(), True)
    assert result.text == text and not result.fixed
