"""`json-lines`: one JSON object per line, the objects of the `json` format."""

from __future__ import annotations

import json

from fp8lint.report import Report
from fp8lint.report.json import diagnostic_json


def render(report: Report) -> str:
    return "".join(json.dumps(diagnostic_json(d)) + "\n" for d in report.diagnostics)
