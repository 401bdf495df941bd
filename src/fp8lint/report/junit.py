"""`junit`: JUnit XML, one test case per finding (CI systems that read test reports)."""

from __future__ import annotations

from fp8lint.diagnostics import posix_path, printable
from fp8lint.report import Report


def _xml_text(text: str) -> str:
    """`text` without the characters XML 1.0 cannot hold (ElementTree escapes the rest)."""
    return "".join(
        ch
        if ch in "\t\n\r"
        or 0x20 <= ord(ch) <= 0xD7FF
        or 0xE000 <= ord(ch) <= 0xFFFD
        or 0x10000 <= ord(ch) <= 0x10FFFF
        else "\ufffd"
        for ch in text
    )


def render(report: Report) -> str:
    """One `<testsuite name="fp8lint">` with a failing `<testcase>` per finding.  Only findings
    are listed: files checked without a finding do not appear as passing test cases."""
    import xml.etree.ElementTree as ET

    diags = report.diagnostics
    counts = {"tests": str(len(diags)), "failures": str(len(diags)), "errors": "0"}
    root = ET.Element("testsuites", {"name": "fp8lint", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "fp8lint", **counts, "skipped": "0"})
    for d in diags:
        # every value from the input is `printable`: the body's lines are fp8lint's own, and a
        # newline in a file name or key cannot start one (a CI log may show the file)
        path = _xml_text(printable(posix_path(d.path)))
        case = ET.SubElement(
            suite,
            "testcase",
            {
                "classname": path,
                "name": f"{d.code} {d.line}:{d.column}",
                "file": path,
                "line": str(d.line),
            },
        )
        message = _xml_text(printable(d.message))
        failure = ET.SubElement(case, "failure", {"message": message, "type": d.code})
        body = f"{path}:{d.line}:{d.column}: {d.code} [{d.severity.value}] {message}"
        if d.note:
            body += f"\nnote: {printable(d.note)}"
        if d.fix is not None and d.fix.message:
            body += f"\nhelp: {printable(d.fix.message)}"
        failure.text = _xml_text(body)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
