"""Renderers: diagnostics (and sites, for `show`) to text or JSON.  They know nothing of rules."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fp8lint.diagnostics import Diagnostic, Severity

OUTPUT_FORMATS = ("text", "json")


@dataclass(frozen=True)
class RuleMeta:
    """What an output format may say about a rule (SARIF rules, links): plain data, so that
    renderers never import rule classes."""

    code: str
    name: str
    summary: str
    severity: Severity
    page: str  # the rule's Markdown page


@dataclass(frozen=True)
class Report:
    diagnostics: list[Diagnostic]
    files_seen: int = 0
    fixed: list[Diagnostic] = field(default_factory=list)
    unsafe: bool = False
    quiet: bool = False
    show_fixes: bool = False
    color: bool = False
    rules: tuple[RuleMeta, ...] = ()
    rule_url_base: str | None = None  # e.g. https://host/docs/rules/ -> {base}FP8101


def render_output(fmt: str, report: Report) -> str:
    """The whole output of `fp8lint check` in format `fmt` (one of OUTPUT_FORMATS)."""
    if fmt == "json":
        return render_json(report.diagnostics)
    if fmt == "text":
        return render_text(
            report.diagnostics,
            report.files_seen,
            quiet=report.quiet,
            unsafe=report.unsafe,
            fixed=report.fixed,
            show_fixes=report.show_fixes,
        )
    raise ValueError(f"unknown output format {fmt!r}")


if TYPE_CHECKING:
    from fp8lint.model import Fp8Site


def render_text(
    diags: list[Diagnostic],
    files_seen: int,
    quiet: bool = False,
    unsafe: bool = False,
    fixed: list[Diagnostic] | None = None,
    show_fixes: bool = False,
) -> str:
    """ruff-style lines; `[*]` marks a finding that `--fix` (with `unsafe`: and
    `--unsafe-fixes`) would repair."""
    lines = []
    for d in diags:
        star = " [*]" if _fixable(d, unsafe) else ""
        lines.append(
            f"{d.path}:{d.line}:{d.column}: {d.code}{star} [{d.severity.value}] {d.message}"
        )
    fixed = fixed or []
    if show_fixes and fixed:
        lines.append(f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}:")
        for path in sorted({d.path for d in fixed}):
            per_rule = Counter((d.code, d.name) for d in fixed if d.path == path)
            lines.append(f"- {path}:")
            lines.extend(
                f"    {n} x {code} ({name})" for (code, name), n in sorted(per_rule.items())
            )
    if not quiet:
        if diags:
            counts = Counter(d.severity.value for d in diags)
            parts = [
                f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}"
                for s in ("error", "warning", "info")
                if counts[s]
            ]
            noun = "finding" if len(diags) == 1 else "findings"
            lines.append(
                f"Found {len(diags)} {noun} ({', '.join(parts)}) in {files_seen} "
                f"file{'s' if files_seen != 1 else ''} checked."
            )
        else:
            lines.append(
                f"All checks passed ({files_seen} file{'s' if files_seen != 1 else ''} checked)."
            )
        if fixed:
            lines.append(f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}.")
        safe = sum(1 for d in diags if _fixable(d, unsafe))
        hidden = sum(
            1 for d in diags if not unsafe and _fixable(d, True) and not _fixable(d, False)
        )
        if safe:
            lines.append(f"{safe} fixable with --fix" + (" --unsafe-fixes." if unsafe else "."))
        if hidden:
            lines.append(f"({hidden} more fixable with --fix --unsafe-fixes.)")
    return "\n".join(lines) + "\n" if lines else ""


def _fixable(d: Diagnostic, unsafe: bool) -> bool:
    from fp8lint.diagnostics import Applicability

    if d.fix is None or not d.fix.edits:
        return False
    return d.fix.applicability is Applicability.SAFE or (
        unsafe and d.fix.applicability is Applicability.UNSAFE
    )


def diagnostic_json(d: Diagnostic) -> dict[str, object]:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "message": d.message,
        "filename": d.path,
        "location": {"row": d.line, "column": d.column},
        "end_location": {"row": d.end_line, "column": d.end_column},
        "related": [
            {
                "filename": r.path,
                "location": {"row": r.line, "column": r.column},
                "message": r.message,
            }
            for r in d.related
        ],
        "headroom_binades": d.headroom_binades,
        "fix": None
        if d.fix is None
        else {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": {"row": e.line, "column": e.column},
                    "end_location": {"row": e.end_line, "column": e.end_column},
                }
                for e in d.fix.edits
            ],
        },
    }


def render_json(diags: list[Diagnostic]) -> str:
    return json.dumps([diagnostic_json(d) for d in diags], indent=2) + "\n"


def render_sites(path: str, sites: list[Fp8Site]) -> str:
    from fp8lint.model import FRAMEWORK_LABEL, SETTING_FIELDS

    if not sites:
        return f"{path}: no FP8 configuration site recognized\n"
    out: list[str] = []
    for i, site in enumerate(sites, 1):
        s = site.span
        out.append(
            f"{path}:{s.line}:{s.column}: site {i}: {site.kind} ({FRAMEWORK_LABEL[site.framework]})"
        )
        for name in SETTING_FIELDS:
            setting = getattr(site, name)
            if not setting.known and setting.span is None and not setting.key:
                continue
            value = setting.value
            shown = getattr(value, "value", value) if setting.known else "unknown"
            if setting.provenance == "written" and setting.span is not None:
                origin = f"written at {setting.span.line}:{setting.span.column} `{setting.key}`"
            elif setting.provenance == "default":
                origin = f"default of {setting.default_of or 'the framework'}"
            elif setting.provenance == "preset":
                origin = f"preset `{setting.key}`"
            else:
                origin = "derived"
            extra = f" - {setting.note}" if setting.note else ""
            out.append(f"    {name:28} {shown!s:14} {origin}{extra}")
        for n in site.notes + site.invalid:
            out.append(f"    note {n.span.line}:{n.span.column} [{n.kind}] {n.message}")
    return "\n".join(out) + "\n"
