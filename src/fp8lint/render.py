"""Renderers: diagnostics (and sites, for `show`) to text or JSON.  They know nothing of rules."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from fp8lint.diagnostics import Diagnostic

if TYPE_CHECKING:
    from fp8lint.model import Fp8Site


def render_text(diags: list[Diagnostic], files_seen: int, quiet: bool = False) -> str:
    lines = [
        f"{d.path}:{d.line}:{d.column}: {d.code} [{d.severity.value}] {d.message}" for d in diags
    ]
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
    return "\n".join(lines) + "\n" if lines else ""


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
        "fix": None,
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
