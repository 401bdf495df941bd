"""A suppression is a comment in the file's own syntax, never text inside a string (issue 19,
class 6): a string holding `# fp8lint: ignore[...]` hides nothing, is not reported unused,
and no fix ever cuts it; a fix whose result does not parse is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lint.documents.comments import comment_spans
from fp8lint.fixes import fix_text as loop

from ..conftest import run_cli

MARK = "# fp8lint: ignore[FP8101]"


def comments(text: str, kind: str) -> list[str]:
    return [text[a:b] for a, b in comment_spans(text, kind)]


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        (
            "python",
            f'S = "x: 1  {MARK}"\nT = """\n{MARK}\n"""\nx = 1  # real\n',
            ["# real"],
        ),
        (
            "yaml",
            f"a: \"x {MARK}\"  # one\nb: |\n  {MARK}\n# two\nc: d#e\nf: ['{MARK}'] # three\n",
            ["# one", "# two", "# three"],
        ),
        (
            "toml",
            f'a = "{MARK}" # one\nb = """\n{MARK}\n"""\nc = \'x#\' # two\n',
            ["# one", "# two"],
        ),
        (
            "shell",
            f"echo \"{MARK}\" '{MARK}' a#b # one\n# two\r\n",
            ["# one", "# two"],
        ),
        ("json", f'{{"a": "{MARK}"}}\n', []),
    ],
)
def test_each_syntax_finds_its_own_comments(kind: str, text: str, expected: list[str]) -> None:
    assert comments(text, kind) == expected


def test_a_file_that_stops_lexing_keeps_the_comments_before() -> None:
    assert comments("x = 1  # kept\ny = (\n", "python") == ["# kept"]


def findings(root: Path) -> list[tuple[str, int, str]]:
    r = run_cli("check", ".", "--output-format", "json", "--exit-zero", cwd=root)
    assert r.returncode == 0, r.stderr
    return [(d["filename"], d["location"]["row"], d["code"]) for d in json.loads(r.stdout)]


def test_text_in_strings_neither_suppresses_nor_is_unused(tmp_path: Path) -> None:
    (tmp_path / "fixture.py").write_text(
        f'CONFIG = "MODEL_ARGS:\\n  --fp8-format: hybrid  {MARK}\\n"\n'
    )
    (tmp_path / "quoted.yaml").write_text(
        f'MODEL_ARGS:\n  --fp8-format: hybrid\n  --help-text: "{MARK}"\n'
    )
    (tmp_path / "launch.sh").write_text(
        f"python pretrain_gpt.py --fp8-format hybrid --bf16 --note '{MARK}'\n"
    )
    got = findings(tmp_path)
    assert not any(code == "FP8002" for _, _, code in got)
    # the quoted text did not hide the zero-headroom warning of the YAML or the script
    assert ("quoted.yaml", 2, "FP8101") in got
    assert ("launch.sh", 1, "FP8101") in got


def test_fix_leaves_a_python_string_holding_a_mark_intact(tmp_path: Path) -> None:
    text = f'import textwrap\n\nDATA = "fp8: true  {MARK}"\nx = 1  {MARK}\n'
    path = tmp_path / "data.py"
    path.write_text(text)
    r = run_cli("check", ".", "--fix", "--exit-zero", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    # only the real, unused comment goes; the string stays byte-exact and the file parses
    assert path.read_text() == text.replace(f"x = 1  {MARK}", "x = 1")
    compile(path.read_text(), "data.py", "exec")


def test_the_fix_loop_refuses_a_result_that_does_not_parse() -> None:
    """Whatever a fix's edits are, a fixed text that fails to parse is never kept."""
    from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Severity, TextEdit

    text = 'S = "a"  # x\n'
    cut = TextEdit("", 1, 6, 1, 13, 5, 12)  # cuts the closing quote with the comment

    def lint(t: str) -> tuple[list[Diagnostic], list[object]]:
        if t != text:
            return [], []
        fix = Fix(Applicability.SAFE, "remove", (cut,))
        d = Diagnostic(
            "FP8002", "unused-suppression", Severity.WARNING, "m", "a.py", 1, 6, 1, 13, fix=fix
        )
        return [d], []

    from fp8lint.documents.syntax import checked_parse

    result = loop(text, lint, False, lambda t: checked_parse(t, "python")[0])  # type: ignore[arg-type]
    assert result.text == text and not result.fixed
    assert result.failure is not None and "no longer parses" in result.failure
