"""`rdjson`: reviewdog's Diagnostic Format, with suggestions for fixes `--fix` may apply."""

from __future__ import annotations

import json
from typing import Any

from fp8lint.diagnostics import Diagnostic, Severity, posix_path
from fp8lint.report import Report
from fp8lint.report.common import suggested

_RD_SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def _rd_column(d: Diagnostic, path: str, line: int, column: int) -> int:
    """reviewdog counts columns in UTF-8 bytes; converted where the line's text is known (the
    finding's first line), kept as characters elsewhere (the same for ASCII lines)."""
    if path != d.path or line != d.line or not d.source_line:
        return column
    text = d.source_line
    prefix = text[: column - 1].encode("utf-8", "surrogateescape")
    return len(prefix) + max(0, column - 1 - len(text)) + 1


def _rd_range(
    d: Diagnostic, path: str, line: int, column: int, end_line: int, end_column: int
) -> dict[str, Any]:
    return {
        "start": {"line": line, "column": _rd_column(d, path, line, column)},
        "end": {"line": end_line, "column": _rd_column(d, path, end_line, end_column)},
    }


def render(report: Report) -> str:
    base = report.rule_url_base
    source: dict[str, str] = {"name": "fp8lint"}
    if base:
        source["url"] = base
    diagnostics: list[dict[str, Any]] = []
    for d in report.diagnostics:
        code: dict[str, str] = {"value": d.code}
        if base:
            code["url"] = base + d.code
        item: dict[str, Any] = {
            "message": d.message,
            "location": {
                "path": posix_path(d.path),
                "range": _rd_range(d, d.path, d.line, d.column, d.end_line, d.end_column),
            },
            "severity": _RD_SEVERITY[d.severity],
            "code": code,
        }
        if d.fix is not None and suggested(d):
            item["suggestions"] = [
                {
                    "range": _rd_range(d, d.path, e.line, e.column, e.end_line, e.end_column),
                    "text": e.content,
                }
                for e in d.fix.edits
            ]
        if d.related:
            item["related_locations"] = [
                {
                    "message": r.message,
                    "location": {
                        "path": posix_path(r.path),
                        "range": {
                            "start": {
                                "line": r.line,
                                "column": _rd_column(d, r.path, r.line, r.column),
                            }
                        },
                    },
                }
                for r in d.related
            ]
        diagnostics.append(item)
    doc = {"source": source, "severity": "WARNING", "diagnostics": diagnostics}
    # exact values, ASCII output (see `json`)
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
