"""`json`: a list of finding objects, ruff's JSON shape (`filename`, `location`, `fix`)."""

from __future__ import annotations

import json

from fp8lint.diagnostics import Diagnostic
from fp8lint.report import Report


def diagnostic_json(d: Diagnostic) -> dict[str, object]:
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "message": d.message,
        "note": d.note or None,
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


def render(report: Report) -> str:
    # values stay exact (data: a filename names the real file, an edit is the file's text);
    # ensure_ascii writes every control, bidi and non-ASCII character as \uXXXX, so no raw one
    # (no newline inside a string, no ESC, no U+202E) reaches the output
    doc = [diagnostic_json(d) for d in report.diagnostics]
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"
