"""`concise`: one line per finding, then the summary (ruff's `concise`)."""

from __future__ import annotations

from fp8lint.diagnostics import Diagnostic
from fp8lint.report import Report
from fp8lint.report.common import header, summary_lines


def render(report: Report) -> str:
    """One line per finding, then the summary."""
    return render_text(
        report.diagnostics,
        report.files_seen,
        quiet=report.quiet,
        unsafe=report.unsafe,
        fixed=report.fixed,
        show_fixes=report.show_fixes,
        color=report.color,
    )


def render_text(
    diags: list[Diagnostic],
    files_seen: int,
    quiet: bool = False,
    unsafe: bool = False,
    fixed: list[Diagnostic] | None = None,
    show_fixes: bool = False,
    color: bool = False,
) -> str:
    """ruff-style lines (the `concise` format); `[*]` marks a finding that `--fix` (with
    `unsafe`: and `--unsafe-fixes`) would repair."""
    lines = [header(d, unsafe, color) for d in diags]
    lines += summary_lines(diags, files_seen, quiet, unsafe, fixed, show_fixes)
    return "\n".join(lines) + "\n" if lines else ""
