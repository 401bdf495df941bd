"""`json-lines`: one JSON object per line, the objects of the `json` format."""

from __future__ import annotations

import json

from fp8lint.report import Report
from fp8lint.report.json import diagnostic_json


def render(report: Report) -> str:
    # exact values, ASCII output (as `json`): no newline or control character inside a line
    lines = (json.dumps(diagnostic_json(d), ensure_ascii=True) for d in report.diagnostics)
    return "".join(line + "\n" for line in lines)
