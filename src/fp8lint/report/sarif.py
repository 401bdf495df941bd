"""`sarif`: one SARIF 2.1.0 run (GitHub code scanning), rules described from their pages.

Each result carries the finding's fingerprint (`fp8lint.diagnostics.fingerprint`), the same
identity the review bot and the baseline use.
"""

from __future__ import annotations

import json
import os
from typing import Any

from fp8lint.diagnostics import Diagnostic, Severity, fingerprint, posix_path
from fp8lint.report import Report, RuleMeta

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "fp8lintFingerprint/v1"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _section(page: str, title: str) -> str:
    """The text of a Markdown page's `## title` section, without the heading."""
    lines = page.splitlines()
    out: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("## "):
            if inside:
                break
            inside = line[3:].strip().lower() == title.lower()
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()


def _artifact(path: str) -> dict[str, str]:
    from pathlib import Path
    from urllib.parse import quote

    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(posix_path(path), errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}


def _sarif_rule(meta: RuleMeta, base: str | None) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": meta.code,
        "name": meta.name,
        "shortDescription": {"text": meta.summary},
    }
    what = _section(meta.page, "What it does")
    if what:
        rule["fullDescription"] = {"text": what}
    if meta.page:
        rule["help"] = {"text": meta.page, "markdown": meta.page}
    if base:
        rule["helpUri"] = base + meta.code
    rule["defaultConfiguration"] = {"level": _SARIF_LEVEL[meta.severity]}
    return rule


def render(report: Report) -> str:
    """One SARIF 2.1.0 run.  Rules come from `report.rules`; a code without metadata gets a
    bare rule entry so that every result has a `ruleIndex`."""
    from pathlib import Path

    base = report.rule_url_base
    metas = list(report.rules)
    known = {m.code for m in metas}
    for d in report.diagnostics:
        if d.code not in known:
            known.add(d.code)
            metas.append(RuleMeta(d.code, d.name, d.name, d.severity, ""))
    index = {m.code: i for i, m in enumerate(metas)}
    driver: dict[str, Any] = {"name": "fp8lint", "version": _version()}
    if base:
        driver["informationUri"] = base
    driver["rules"] = [_sarif_rule(m, base) for m in metas]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_sarif_result(d, index[d.code]) for d in report.diagnostics],
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    # exact values, ASCII output (see `json`): showing a decoded string safely is the viewer's part
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def _version() -> str:
    from fp8lint import __version__

    return __version__


def _sarif_result(d: Diagnostic, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": _SARIF_LEVEL[d.severity],
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(d.path),
                    "region": {
                        "startLine": d.line,
                        "startColumn": d.column,
                        "endLine": d.end_line,
                        "endColumn": d.end_column,
                    },
                }
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(d)},
    }
    if d.note:
        result["properties"] = {"note": d.note}
    if d.related:
        result["relatedLocations"] = [
            {
                "id": i,
                "message": {"text": r.message},
                "physicalLocation": {
                    "artifactLocation": _artifact(r.path),
                    "region": {"startLine": r.line, "startColumn": r.column},
                },
            }
            for i, r in enumerate(d.related)
        ]
    if d.fix is not None and d.fix.edits:
        result["fixes"] = [
            {
                "description": {"text": d.fix.message},
                "artifactChanges": [
                    {
                        "artifactLocation": _artifact(d.path),
                        "replacements": [
                            {
                                "deletedRegion": {
                                    "startLine": e.line,
                                    "startColumn": e.column,
                                    "endLine": e.end_line,
                                    "endColumn": e.end_column,
                                },
                                "insertedContent": {"text": e.content},
                            }
                            for e in d.fix.edits
                        ],
                    }
                ],
                "properties": {"applicability": d.fix.applicability.value},
            }
        ]
    return result
