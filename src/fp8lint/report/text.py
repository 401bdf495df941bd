"""`text`, ruff's "full" format: each finding's header line, its source line with a gutter
and carets under the span, the finding's note and the fix's help, then the summary."""

from __future__ import annotations

from fp8lint.diagnostics import Diagnostic, printable
from fp8lint.report import Report
from fp8lint.report.common import SEVERITY_COLOR, header, paint, summary_lines


def render(report: Report) -> str:
    """ruff's "full" format: each finding's header line, its source line with a gutter and
    carets under the span, the note and the fix's help; a blank line between findings; the
    summary."""
    blocks = [
        "\n".join([header(d, report.unsafe, report.color), *_snippet(d, report.color), *_help(d)])
        for d in report.diagnostics
    ]
    trailer = summary_lines(
        report.diagnostics,
        report.files_seen,
        quiet=report.quiet,
        unsafe=report.unsafe,
        fixed=report.fixed,
        show_fixes=report.show_fixes,
    )
    if trailer:
        blocks.append("\n".join(trailer))
    return "\n\n".join(blocks) + "\n" if blocks else ""


def _char_width(ch: str) -> int:
    import unicodedata

    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _shown(ch: str) -> tuple[str, int]:
    """How the snippet shows one source character and how many columns that takes: a tab
    stays a tab, a control or bidi character is shown escaped (`\\x1b`, `\\u202e`) as in the
    header line, so that the source line cannot move the cursor or reorder the text."""
    if ch == "\t":
        return ch, 1
    escaped = printable(ch)
    return escaped, len(escaped) if escaped != ch else _char_width(ch)


def _snippet(d: Diagnostic, color: bool) -> list[str]:
    """The gutter, the finding's first source line and the carets under its span."""
    src = d.source_line.rstrip("\r\n")
    if not src.strip():
        return []
    number = str(d.line)
    pad = " " * len(number)
    start = max(d.column, 1)
    end = d.end_column if d.end_line == d.line else len(src) + 1
    # tabs stay tabs under the line, so that the carets line up however tabs are shown
    before = map(_shown, src[: start - 1])
    indent = "".join("\t" if ch == "\t" else " " * cols for ch, cols in before)
    indent += " " * max(0, start - 1 - len(src))
    width = sum(cols for _, cols in map(_shown, src[start - 1 : max(end, start) - 1]))
    carets = paint("^" * max(1, width), SEVERITY_COLOR[d.severity], color)
    line = "\t".join(printable(part) for part in src.split("\t"))
    return [f"{pad} |", f"{number} | {line}", f"{pad} | {indent}{carets}", f"{pad} |"]


def _help(d: Diagnostic) -> list[str]:
    """ruff's trailer lines: `= note:` (why it matters, one line) and `= help:` (the fix)."""
    pad = " " * len(str(d.line))
    lines = [f"{pad} = note: {printable(d.note)}"] if d.note else []
    if d.fix is not None and d.fix.message:
        lines.append(f"{pad} = help: {printable(d.fix.message)}")
    return lines
