"""What several formats share: paths in POSIX form, colours, the ruff-style header line of a
finding, the summary that follows the findings, and whether a finding is fixable."""

from __future__ import annotations

from collections import Counter

from fp8lint.diagnostics import Diagnostic, Severity, posix_path, printable

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
SEVERITY_COLOR = {
    Severity.ERROR: "\x1b[31m",
    Severity.WARNING: "\x1b[33m",
    Severity.INFO: "\x1b[34m",
}


def paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color else text


def header(d: Diagnostic, unsafe: bool, color: bool) -> str:
    star = " [*]" if fixable(d, unsafe) else ""
    code = paint(d.code, BOLD, color)
    severity = paint(f"[{d.severity.value}]", SEVERITY_COLOR[d.severity], color)
    where = printable(posix_path(d.path))
    return f"{where}:{d.line}:{d.column}: {code}{star} {severity} {printable(d.message)}"


def summary_lines(
    diags: list[Diagnostic],
    files_seen: int,
    quiet: bool = False,
    unsafe: bool = False,
    fixed: list[Diagnostic] | None = None,
    show_fixes: bool = False,
) -> list[str]:
    """What follows the findings: the `--show-fixes` list and the summary lines."""
    lines: list[str] = []
    fixed = fixed or []
    if show_fixes and fixed:
        lines.append(f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}:")
        for path in sorted({d.path for d in fixed}):
            per_rule = Counter((d.code, d.name) for d in fixed if d.path == path)
            lines.append(f"- {printable(posix_path(path))}:")
            lines.extend(
                f"    {n} x {code} ({name})" for (code, name), n in sorted(per_rule.items())
            )
    if not quiet:
        if diags:
            lines.append(f"Found {counts_phrase(diags)} in {files_phrase(files_seen)} checked.")
        else:
            lines.append(f"All checks passed ({files_phrase(files_seen)} checked).")
        if fixed:
            lines.append(f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}.")
        safe = sum(1 for d in diags if fixable(d, unsafe))
        hidden = sum(1 for d in diags if not unsafe and fixable(d, True) and not fixable(d, False))
        if safe:
            lines.append(f"{safe} fixable with --fix" + (" --unsafe-fixes." if unsafe else "."))
        if hidden:
            lines.append(f"({hidden} more fixable with --fix --unsafe-fixes.)")
    return lines


def files_phrase(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


def counts_phrase(diags: list[Diagnostic]) -> str:
    """`7 findings (1 error, 2 warnings, 4 info)`: "info" is not counted in the plural (no
    "4 infos"), as the review bot's summary writes it."""
    counts = Counter(d.severity.value for d in diags)
    parts = [
        f"{counts[s]} {s}{'s' if counts[s] != 1 and s != 'info' else ''}"
        for s in ("error", "warning", "info")
        if counts[s]
    ]
    noun = "finding" if len(diags) == 1 else "findings"
    return f"{len(diags)} {noun} ({', '.join(parts)})"


def fixable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and d.fix.applies(unsafe)


def suggested(d: Diagnostic) -> bool:
    """A fix with edits that `--fix` may apply (safe, or unsafe with `--unsafe-fixes`)."""
    return fixable(d, True)
