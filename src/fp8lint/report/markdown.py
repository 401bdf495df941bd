"""`markdown`: a pull-request comment body (a summary line and a list of findings)."""

from __future__ import annotations

import re
from collections import Counter

from fp8lint.diagnostics import posix_path, printable
from fp8lint.report import Report
from fp8lint.report.common import counts_phrase, files_phrase

MARKDOWN_TOP = 20


def _md_cell(text: str) -> str:
    return " ".join(printable(text).replace("\\", "\\\\").replace("|", "\\|").split())


def _md_code(text: str) -> str:
    """`text` as a code span: control and bidi characters escaped (`printable`, so a newline
    in a file name cannot start a line of the comment, or of a CI log that shows it), and a
    fence longer than any run of backticks inside, so a backtick cannot close the span."""
    text = printable(text)
    run = max((len(r) for r in re.findall("`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(report: Report) -> str:
    diags = report.diagnostics
    base = report.rule_url_base
    out = ["## fp8lint", ""]
    if not diags:
        out.append(f"No FP8 findings ({files_phrase(report.files_seen)} checked).")
        return "\n".join(out) + "\n"
    files = len({d.path for d in diags})
    where = (
        f"{files} of {files_phrase(report.files_seen)} checked"
        if report.files_seen >= files
        else files_phrase(files)
    )
    out += [
        f"Found {counts_phrase(diags)} in {where}.",
        "",
        "| Rule | Name | Count |",
        "| --- | --- | ---: |",
    ]
    per_rule = Counter((d.code, d.name) for d in diags)
    for (code, name), n in sorted(per_rule.items()):
        shown = f"[{code}]({base}{code})" if base else code
        out.append(f"| {_md_cell(shown)} | {_md_cell(name)} | {n} |")
    # the most severe first; ties keep the input's (path, line) order
    top = sorted(diags, key=lambda d: -d.severity.rank)[:MARKDOWN_TOP]
    out += ["", "### Findings" if len(diags) <= MARKDOWN_TOP else "### Top findings", ""]
    for d in top:
        message = " ".join(printable(d.message).split())
        out.append(f"- **{d.code}** {_md_code(f'{posix_path(d.path)}:{d.line}')} {message}")
    if len(diags) > MARKDOWN_TOP:
        rest = len(diags) - MARKDOWN_TOP
        out.append(f"- … and {rest} more finding{'s' if rest != 1 else ''}")
    out += [
        "",
        "### How to suppress",
        "",
        "Add `# fp8lint: ignore[CODE]` at the end of the flagged line or on the line above it, "
        "or record the current findings in a baseline with `fp8lint check --write-baseline`.",
    ]
    if base:
        links = ", ".join(f"[{code}]({base}{code})" for code, _ in sorted(per_rule))
        out += ["", f"Rule pages: {links}."]
    return "\n".join(out) + "\n"
