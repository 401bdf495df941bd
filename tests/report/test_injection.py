"""Hostile names and keys in every output format: nothing from the input can start a line of
its own (a GitHub Actions log reads a workflow command from any line that starts with `::`),
send an ESC sequence to a terminal, or reorder a line with a bidi control (issue 20)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fp8lint.arguments import CHECK_OPTIONS
from fp8lint.diagnostics import (
    Applicability,
    Diagnostic,
    Fix,
    Related,
    Severity,
    TextEdit,
    printable,
)
from fp8lint.report import OUTPUT_FORMATS, Report, render_output

pytestmark = pytest.mark.skipif(os.name == "nt", reason="file names with newlines are POSIX's")

FORGED = "::error file=README.md,line=1::FORGED"
# what must never reach the output raw: C0 controls but the newline, DEL, C1 controls, the
# bidi controls, line and paragraph separators, lone surrogates (written out here, not taken
# from the helper, so that a character dropped from the helper fails this test)
FORBIDDEN = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
# fp8lint's own workflow commands: a group per file, and one annotation per finding whose
# properties hold no raw `:` or `,` and whose data holds no raw `%` but GitHub's escapes
OWN_COMMAND = re.compile(
    r"::group::(?P<group>.*)|::endgroup::|::(?:error|warning|notice) file=(?P<file>[^,:]*),"
    r"line=\d+(?:,col=\d+)?,endLine=\d+(?:,endColumn=\d+)?,title=fp8lint \(FP8\d{3}\)::(?P<data>.*)"
)
JSON_FORMATS = {"json": "all", "sarif": "all", "rdjson": "all", "json-lines": "lines"}
UNIDENTIFIED = "trainer:\n  enable_fp8: true\n"  # FP8406 at 2:3


def cli_formats() -> tuple[str, ...]:
    """What `check --output-format` accepts, read from the parser's definition."""
    choices: tuple[str, ...] = CHECK_OPTIONS["output_format"][1]["choices"]
    return choices


def hostile_names() -> list[str]:
    names = [
        f"a\n{FORGED}.yaml",
        f"b\r{FORGED}\x1b[2J\u202egpj.yaml",
        "c\t\x07\x85\x9b\u2066\u061c\u200f\u2028.yaml",
    ]
    if sys.platform.startswith("linux"):  # a byte that is no UTF-8: a lone surrogate
        names.append("d\udcff.yaml")
    return names


def hostile_tree(root: Path) -> list[str]:
    """Hostile file names, a YAML and a JSON key of control and bidi characters, and source
    lines holding them raw; the names of the files that get a finding."""
    names = hostile_names()
    for name in names:
        (root / name).write_text(UNIDENTIFIED, encoding="utf-8")
    # YAML's escapes: \n, \r, \e (ESC), \a (BEL), \N (U+0085), \u202e, \u2067
    (root / "keys.yaml").write_text(
        f'args: {{"fp8-x\\n{FORGED}\\e[2J\\u202e\\u2067\\r\\a\\N##[error]X": 1}}\n',
        encoding="utf-8",
    )
    (root / "keys.json").write_text(
        '{"use_fp8\\u001b[2J\\u202e\\n::warning::FORGED": true}\n', encoding="utf-8"
    )
    (root / "src.yaml").write_text(
        "trainer:\n  enable_fp8_\u202e\u200e\u2069x: true\n", encoding="utf-8"
    )
    python = "r\x1b[31m\u202e.py"
    (root / python).write_text(
        "from transformer_engine.common.recipe import DelayedScaling\n"
        "recipe = DelayedScaling(margin=-1)  # \x1b[2J\u202e\x07 look\n",
        encoding="utf-8",
    )
    return [*names, "keys.yaml", "keys.json", "src.yaml", python]


def run_fp8lint(root: Path, *args: str, status: int = 0) -> tuple[str, str]:
    """stdout and stderr, as bytes decoded strictly: a text-mode pipe would turn a raw CR
    into a newline."""
    env = dict(os.environ)
    env.pop("FP8LINT_DEBUG", None)
    r = subprocess.run(
        [sys.executable, "-m", "fp8lint", *args],
        capture_output=True,
        cwd=root,
        env=env,
        timeout=120,
    )
    assert r.returncode == status, r.stderr.decode("utf-8", "replace")
    return r.stdout.decode("utf-8"), r.stderr.decode("utf-8")


def assert_safe(fmt: str, out: str) -> list[re.Match[str]]:
    """No raw control or bidi character; no line that GitHub would take for a command but
    fp8lint's own github ones; the JSON formats parse.  The github commands, for the caller."""
    raw = FORBIDDEN.search(out)
    assert raw is None, f"{fmt}: raw {raw.group()!r} in {out!r}"
    commands: list[re.Match[str]] = []
    for line in out.split("\n"):
        start = line.lstrip()
        assert not start.startswith("##["), f"{fmt}: {line!r}"
        if not start.startswith("::"):
            continue
        own = OWN_COMMAND.fullmatch(line)
        assert fmt == "github" and own is not None, f"{fmt}: {line!r}"
        for part in ("group", "data"):
            assert not re.search("%(?!25|0D|0A)", own.group(part) or ""), line
        assert not re.search("%(?!25|0D|0A|3A|2C)", own.group("file") or ""), line
        commands.append(own)
    if JSON_FORMATS.get(fmt) == "all":
        json.loads(out)
    elif JSON_FORMATS.get(fmt) == "lines":
        for line in out.splitlines():
            json.loads(line)
    return commands


def gh_unescape(text: str) -> str:
    for escaped, ch in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(escaped, ch)
    return text


def test_every_cli_format_is_a_renderer() -> None:
    assert set(cli_formats()) == set(OUTPUT_FORMATS)
    assert set(JSON_FORMATS) <= set(cli_formats())


@pytest.mark.parametrize("fmt", cli_formats())
def test_hostile_tree_in_every_format(tmp_path: Path, fmt: str) -> None:
    files = hostile_tree(tmp_path)
    out, err = run_fp8lint(tmp_path, "check", ".", "--exit-zero", "--output-format", fmt)
    assert_safe("stderr", err)
    commands = assert_safe(fmt, out)
    if fmt == "github":
        # one annotation per finding, each naming a real file (its CR and LF in GitHub's
        # escapes, the other controls shown escaped), none forged
        annotated = [gh_unescape(m.group("file")) for m in commands if m.group("file")]
        assert sorted(printable(f) for f in annotated) == sorted(printable(n) for n in files)
    if fmt in ("json", "json-lines"):
        # the data stay exact: every name comes back as the file's own
        found = [json.loads(line) for line in out.splitlines()] if fmt == "json-lines" else None
        rows = found if found is not None else json.loads(out)
        assert {row["filename"] for row in rows} == set(files)
        assert out.isascii()
    elif fmt in JSON_FORMATS:
        assert out.isascii()
    else:
        # the hostile text is there, shown escaped, not dropped
        newline = "%0A" if fmt == "github" else "\\n"
        assert f"{newline}::error file=README.md" in out
        assert "\\u202e" in out and "\\x1b[2J" in out


def test_show_escapes_hostile_names(tmp_path: Path) -> None:
    files = hostile_tree(tmp_path)
    out, err = run_fp8lint(tmp_path, "show", *files)
    assert_safe("sites", out)
    assert_safe("stderr", err)
    assert printable(files[-1]) in out  # the Python file's site, under its escaped name


def test_show_escapes_an_unreadable_hostile_name(tmp_path: Path) -> None:
    """`show` reports FP8001 on stderr: the file's name is escaped there too."""
    name = f"x\n{FORGED}\x1b[2J\u202e.yaml"
    (tmp_path / name).write_text("fp8: [\n", encoding="utf-8")
    out, err = run_fp8lint(tmp_path, "show", name, status=2)
    assert_safe("sites", out)
    assert_safe("stderr", err)
    assert f"{printable(name)}:2:1: YAML syntax error" in err


def hostile_diagnostic() -> Diagnostic:
    """Every text field of a finding hostile, for the ones no rule fills from the input."""
    evil = f"x\n{FORGED}\r\x1b]0;title\x07\u202e\u2066\x85"
    return Diagnostic(
        code="FP8101",
        name="zero-headroom",
        severity=Severity.ERROR,
        message=f"message {evil}",
        path=f"dir/{evil}.yaml",
        line=2,
        column=3,
        end_line=2,
        end_column=9,
        related=(Related(f"other{evil}.yaml", 1, 1, f"related {evil}"),),
        fix=Fix(Applicability.SAFE, f"fix {evil}", (TextEdit("y\n", 2, 3, 2, 9, 10, 16),)),
        source_line=f"  key: {evil}\n",
        key="key",
        note=f"note {evil}",
    )


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_hostile_fields_in_every_renderer(fmt: str) -> None:
    d = hostile_diagnostic()
    report = Report([d], files_seen=1, fixed=[d], show_fixes=True, rule_url_base="https://x/")
    out = render_output(fmt, report)
    assert_safe(fmt, out)
    if fmt not in JSON_FORMATS:
        assert "\\x1b]0;title\\x07" in out


def test_text_snippet_carets_under_escaped_characters() -> None:
    """An escaped character takes as many columns as its escape: the carets stay under the
    span that follows it."""
    src = "  a\u202eb: \x1b1"
    d = Diagnostic(
        code="FP8101",
        name="zero-headroom",
        severity=Severity.WARNING,
        message="m",
        path="a.yaml",
        line=1,
        column=9,
        end_line=1,
        end_column=10,
        source_line=src,
    )
    lines = render_output("text", Report([d])).splitlines()
    shown, carets = lines[2], lines[3]
    assert shown == "1 |   a\\u202eb: \\x1b1"
    assert carets.index("^") == shown.rindex("1") and carets.count("^") == 1


PRINTABLE_ESCAPES = [
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
    ("\x00", "\\x00"),
    ("\x07", "\\x07"),
    ("\x1b", "\\x1b"),
    ("\x7f", "\\x7f"),
    ("\x85", "\\x85"),
    ("\x9b", "\\x9b"),
    ("\u061c", "\\u061c"),
    ("\u200e", "\\u200e"),
    ("\u200f", "\\u200f"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
    *((chr(c), f"\\u{c:04x}") for c in range(0x202A, 0x202F)),
    *((chr(c), f"\\u{c:04x}") for c in range(0x2066, 0x206A)),
    ("\udcff", "\\udcff"),
]


@pytest.mark.parametrize(("raw", "shown"), PRINTABLE_ESCAPES)
def test_printable_escapes_visibly(raw: str, shown: str) -> None:
    assert printable(f"a{raw}b") == f"a{shown}b"


def test_printable_keeps_printable_text() -> None:
    text = "conf/é 中文 \U0001f600 `key`: -1 \\n"
    assert printable(text) is text


def test_printable_is_one_line_and_stable() -> None:
    text = "".join(raw for raw, _ in PRINTABLE_ESCAPES) + FORGED
    once = printable(text)
    assert FORBIDDEN.search(once) is None and "\n" not in once
    assert printable(once) == once
