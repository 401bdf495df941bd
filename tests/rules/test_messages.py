"""Messages people can read (issue 13): every finding's message is one short line (what is
wrong and the key), its note one more line (why), on every example, page and corpus file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lint.diagnostics import Diagnostic
from fp8lint.rules import all_rules, page_codes
from fp8lint.settings import RunSettings, Selection

from ..conftest import run_cli
from .fixing import MESSAGE_CAP, NOTE_CAP, findings, one_line
from .test_pages import blocks

EVERY_RULE = RunSettings(selection=Selection(select=("ALL",)))


def samples() -> list[tuple[str, str, str]]:
    """(where, file name, text) of every rule example and every page code block."""
    out = [
        (f"{rule.code} {ex.filename}", ex.filename, ex.text)
        for rule in all_rules()
        for ex in (*rule.valid, *rule.invalid)
    ]
    for code in page_codes():
        for heading in ("## Example", "## Use instead"):
            out += [(f"{code}.md", b.filename, b.text) for b in blocks(code, heading)]
    return out


def problems(diags: list[Diagnostic] | list[dict[str, object]]) -> list[str]:
    """The findings whose message or note is not one short line."""
    bad = []
    for d in diags:
        message, note = (
            (d.message, d.note) if isinstance(d, Diagnostic) else (d["message"], d["note"])
        )
        assert isinstance(message, str) and (note is None or isinstance(note, str))
        if not one_line(message, MESSAGE_CAP):
            bad.append(f"message [{len(message)}]: {message!r}")
        if note and not one_line(note, NOTE_CAP):
            bad.append(f"note [{len(note)}]: {note!r}")
    return bad


def test_every_example_message_is_one_short_line() -> None:
    seen = 0
    bad: list[str] = []
    for where, filename, text in samples():
        diags = findings(filename, text, EVERY_RULE)
        seen += len(diags)
        bad += [f"{where}: {p}" for p in problems(diags)]
    assert seen > 100  # every rule fires on its own examples
    assert bad == []


def test_corpus_messages_are_one_short_line(corpus: Path) -> None:
    r = run_cli("check", str(corpus), "--select", "ALL", "--output-format", "json", "--exit-zero")
    data = json.loads(r.stdout)
    assert len(data) > 10
    assert problems(data) == []
    # every rule finding says why in its note
    assert [d["message"] for d in data if not d["note"]] == []


def test_output_head_message_names_the_filter_not_a_bare_true() -> None:
    """FP8202 printed "converted to FP8 (True (`...filter_fqns`))"."""
    text = '[model]\nname = "llama3"\nconverters = ["float8"]\n\n[quantize.linear.float8]\n'
    only = RunSettings(selection=Selection(select=("FP8202", "FP8203")))
    written = findings("t.toml", text + "filter_fqns = []\n", only)
    default = findings("t.toml", text + "enable_fsdp_float8_all_gather = true\n", only)
    assert [d.message for d in written] == [
        "the output head runs in FP8 with tensorwise scaling "
        "(not excluded by `quantize.linear.float8.filter_fqns`)"
    ]
    assert [d.message for d in default] == [
        "the output head runs in FP8 with tensorwise scaling "
        "(not excluded by the default `quantize.linear.float8.filter_fqns`)"
    ]
    for d in written + default:
        assert "True" not in d.message and "((" not in d.message and "))" not in d.message


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # the value is anchored where it is read, and another key reads it through `*h`
        (
            "  fp8_amax_history_len: &h 4\n  tensor_model_parallel_size: *h\n",
            "`model.fp8_amax_history_len` 4 (anchored and shared)",
        ),
        # merged in from a template with `<<`
        (
            "  <<: *base\n",
            "`model.fp8_amax_history_len` 4 (merged in with `<<` from line 2)",
        ),
    ],
)
def test_a_shared_value_says_where_it_is_defined(text: str, shown: str) -> None:
    """The old form read "(`key`, via defined at line 5)"."""
    config = (
        "base: &base\n  fp8_amax_history_len: 4\n"
        "model:\n  fp8: true\n  fp8_e4m3: false\n  fp8_hybrid: true\n"
        "  fp8_amax_compute_algo: max\n" + text
    )
    only = RunSettings(selection=Selection(select=("FP8102",)))
    (d,) = findings("model_config.yaml", config, only)
    assert d.message == f"short amax history: {shown} (NVIDIA's recipes use 1024)"
    assert "via defined" not in d.message
