"""`github`: GitHub Actions workflow commands (`::error file=...::message`), folded into one
`::group::` per file."""

from __future__ import annotations

from fp8lint.diagnostics import Diagnostic, Severity, posix_path, printable
from fp8lint.report import Report

_GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _gh_data(text: str) -> str:
    """`text` as a workflow command's data: GitHub's escapes of `%`, CR and LF (so nothing can
    end the command or start a line), then the other control and bidi characters shown
    escaped (`printable`: no ESC sequence reaches the log, no override reorders it)."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    """One `::error|warning|notice` workflow command, titled `fp8lint (CODE)` as ruff titles
    its own `ruff (CODE)`; `fp8lint review` prints the same lines when it cannot comment.
    `col` and `endColumn` are sent only for a one-line span, as GitHub requires."""
    props = [("file", posix_path(d.path)), ("line", str(d.line))]
    if d.end_line == d.line:
        props.append(("col", str(d.column)))
    props.append(("endLine", str(d.end_line)))
    if d.end_line == d.line:
        props.append(("endColumn", str(d.end_column)))
    props.append(("title", f"fp8lint ({d.code})"))
    rendered = ",".join(f"{k}={_gh_property(v)}" for k, v in props)
    return f"::{_GITHUB_COMMAND[d.severity]} {rendered}::{_gh_data(d.message)}"


def render(report: Report) -> str:
    """The annotations, folded into one `::group::` per file."""
    by_path: dict[str, list[Diagnostic]] = {}
    for d in report.diagnostics:
        by_path.setdefault(posix_path(d.path), []).append(d)
    lines: list[str] = []
    for path, diags in by_path.items():
        lines.append(f"::group::{_gh_data(path)}")
        lines += [annotation(d) for d in diags]
        lines.append("::endgroup::")
    return "".join(line + "\n" for line in lines)
