"""Renderers: diagnostics (and sites, for `show`) to the `--output-format` formats.

They see only `Report`, `Diagnostic` and `RuleMeta` data and know nothing of rule classes.
Every format is deterministic for a given input (the engine hands diagnostics over sorted).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fp8lint.diagnostics import Diagnostic, Severity

OUTPUT_FORMATS = (
    "text",
    "concise",
    "json",
    "json-lines",
    "sarif",
    "github",
    "rdjson",
    "junit",
    "markdown",
)


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
    renderers: dict[str, Callable[[Report], str]] = {
        "text": render_full,
        "concise": render_concise,
        "json": lambda r: render_json(r.diagnostics),
        "json-lines": lambda r: render_json_lines(r.diagnostics),
        "sarif": render_sarif,
        "github": render_github,
        "rdjson": render_rdjson,
        "junit": render_junit,
        "markdown": render_markdown,
    }
    renderer = renderers.get(fmt)
    if renderer is None:
        raise ValueError(f"unknown output format {fmt!r}")
    return renderer(report)


if TYPE_CHECKING:
    from fp8lint.model import Fp8Site


# ---------------------------------------------------------------------------------------------
# Human-readable formats: `text` (ruff's "full") and `concise`

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_SEVERITY_COLOR = {
    Severity.ERROR: "\x1b[31m",
    Severity.WARNING: "\x1b[33m",
    Severity.INFO: "\x1b[34m",
}


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color else text


def _posix(path: str) -> str:
    """`path` with forward slashes (a no-op where `/` is the only separator)."""
    for sep in (os.sep, os.altsep):
        if sep and sep != "/":
            path = path.replace(sep, "/")
    return path


def _header(d: Diagnostic, unsafe: bool, color: bool) -> str:
    star = " [*]" if _fixable(d, unsafe) else ""
    code = _paint(d.code, _BOLD, color)
    severity = _paint(f"[{d.severity.value}]", _SEVERITY_COLOR[d.severity], color)
    return f"{_posix(d.path)}:{d.line}:{d.column}: {code}{star} {severity} {d.message}"


def render_concise(report: Report) -> str:
    """One line per finding, then the summary."""
    return render_text(
        report.diagnostics,
        report.files_seen,
        quiet=report.quiet,
        unsafe=report.unsafe,
        fixed=report.fixed,
        show_fixes=report.show_fixes,
        color=report.color,
    )


def render_full(report: Report) -> str:
    """ruff's "full" format: each finding's header line, its source line with a gutter and
    carets under the span, and the fix's help; a blank line between findings; the summary."""
    blocks = [
        "\n".join([_header(d, report.unsafe, report.color), *_snippet(d, report.color), *_help(d)])
        for d in report.diagnostics
    ]
    trailer = _trailer(
        report.diagnostics,
        report.files_seen,
        quiet=report.quiet,
        unsafe=report.unsafe,
        fixed=report.fixed,
        show_fixes=report.show_fixes,
    )
    if trailer:
        blocks.append("\n".join(trailer))
    return "\n\n".join(blocks) + "\n" if blocks else ""


def _char_width(ch: str) -> int:
    import unicodedata

    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _snippet(d: Diagnostic, color: bool) -> list[str]:
    """The gutter, the finding's first source line and the carets under its span."""
    src = d.source_line.rstrip("\r\n")
    if not src.strip():
        return []
    number = str(d.line)
    pad = " " * len(number)
    start = max(d.column, 1)
    end = d.end_column if d.end_line == d.line else len(src) + 1
    # tabs stay tabs under the line, so that the carets line up however tabs are shown
    indent = "".join("\t" if ch == "\t" else " " * _char_width(ch) for ch in src[: start - 1])
    indent += " " * max(0, start - 1 - len(src))
    width = sum(_char_width(ch) for ch in src[start - 1 : max(end, start) - 1])
    carets = _paint("^" * max(1, width), _SEVERITY_COLOR[d.severity], color)
    return [f"{pad} |", f"{number} | {src}", f"{pad} | {indent}{carets}", f"{pad} |"]


def _help(d: Diagnostic) -> list[str]:
    if d.fix is None or not d.fix.message:
        return []
    return [f"{' ' * len(str(d.line))} = help: {d.fix.message}"]


def render_text(
    diags: list[Diagnostic],
    files_seen: int,
    quiet: bool = False,
    unsafe: bool = False,
    fixed: list[Diagnostic] | None = None,
    show_fixes: bool = False,
    color: bool = False,
) -> str:
    """ruff-style lines (the `concise` format); `[*]` marks a finding that `--fix` (with
    `unsafe`: and `--unsafe-fixes`) would repair."""
    lines = [_header(d, unsafe, color) for d in diags]
    lines += _trailer(diags, files_seen, quiet, unsafe, fixed, show_fixes)
    return "\n".join(lines) + "\n" if lines else ""


def _trailer(
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
            lines.append(f"- {_posix(path)}:")
            lines.extend(
                f"    {n} x {code} ({name})" for (code, name), n in sorted(per_rule.items())
            )
    if not quiet:
        if diags:
            lines.append(f"Found {_counts_phrase(diags)} in {_files(files_seen)} checked.")
        else:
            lines.append(f"All checks passed ({_files(files_seen)} checked).")
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
    return lines


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


def _counts_phrase(diags: list[Diagnostic]) -> str:
    """`3 findings (1 error, 2 warnings)`."""
    counts = Counter(d.severity.value for d in diags)
    parts = [
        f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}"
        for s in ("error", "warning", "info")
        if counts[s]
    ]
    noun = "finding" if len(diags) == 1 else "findings"
    return f"{len(diags)} {noun} ({', '.join(parts)})"


def _fixable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and d.fix.applies(unsafe)


def _suggested(d: Diagnostic) -> bool:
    """A fix with edits that `--fix` may apply (safe, or unsafe with `--unsafe-fixes`)."""
    return _fixable(d, True)


# ---------------------------------------------------------------------------------------------
# JSON and JSON Lines


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


def render_json_lines(diags: list[Diagnostic]) -> str:
    """One JSON object per line: the objects of the `json` format."""
    return "".join(json.dumps(diagnostic_json(d)) + "\n" for d in diags)


# ---------------------------------------------------------------------------------------------
# SARIF 2.1.0 (GitHub code scanning)

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "fp8lintFingerprint/v1"
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def fingerprint(d: Diagnostic) -> str:
    """sha256 of code, path and the finding's key: survives lines moving within the file."""
    import hashlib

    text = f"{d.code}\0{_posix(d.path)}\0{d.key}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


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
    return {"uri": quote(_posix(path), errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}


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


def render_sarif(report: Report) -> str:
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
    return json.dumps(doc, indent=2) + "\n"


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


# ---------------------------------------------------------------------------------------------
# GitHub Actions workflow commands

_GITHUB_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    """`::error|warning|notice` annotations, folded into one `::group::` per file.  `col` and
    `endColumn` are sent only for a one-line span, as GitHub requires."""
    by_path: dict[str, list[Diagnostic]] = {}
    for d in report.diagnostics:
        by_path.setdefault(_posix(d.path), []).append(d)
    lines: list[str] = []
    for path, diags in by_path.items():
        lines.append(f"::group::{_gh_data(path)}")
        for d in diags:
            props = [("file", path), ("line", str(d.line))]
            if d.end_line == d.line:
                props.append(("col", str(d.column)))
            props.append(("endLine", str(d.end_line)))
            if d.end_line == d.line:
                props.append(("endColumn", str(d.end_column)))
            props.append(("title", f"fp8lint ({d.code})"))
            rendered = ",".join(f"{k}={_gh_property(v)}" for k, v in props)
            lines.append(f"::{_GITHUB_COMMAND[d.severity]} {rendered}::{_gh_data(d.message)}")
        lines.append("::endgroup::")
    return "".join(line + "\n" for line in lines)


# ---------------------------------------------------------------------------------------------
# reviewdog Diagnostic Format (rdjson)

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


def render_rdjson(report: Report) -> str:
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
                "path": _posix(d.path),
                "range": _rd_range(d, d.path, d.line, d.column, d.end_line, d.end_column),
            },
            "severity": _RD_SEVERITY[d.severity],
            "code": code,
        }
        if d.fix is not None and _suggested(d):
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
                        "path": _posix(r.path),
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
    return json.dumps(doc, indent=2) + "\n"


# ---------------------------------------------------------------------------------------------
# JUnit XML


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


def render_junit(report: Report) -> str:
    """One `<testsuite name="fp8lint">` with a failing `<testcase>` per finding.  Only findings
    are listed: files checked without a finding do not appear as passing test cases."""
    import xml.etree.ElementTree as ET

    diags = report.diagnostics
    counts = {"tests": str(len(diags)), "failures": str(len(diags)), "errors": "0"}
    root = ET.Element("testsuites", {"name": "fp8lint", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": "fp8lint", **counts, "skipped": "0"})
    for d in diags:
        path = _xml_text(_posix(d.path))
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
        failure = ET.SubElement(case, "failure", {"message": _xml_text(d.message), "type": d.code})
        body = f"{path}:{d.line}:{d.column}: {d.code} [{d.severity.value}] {d.message}"
        if d.fix is not None and d.fix.message:
            body += f"\nhelp: {d.fix.message}"
        failure.text = _xml_text(body)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


# ---------------------------------------------------------------------------------------------
# Markdown (a pull-request comment body)

MARKDOWN_TOP = 20


def _md_cell(text: str) -> str:
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def render_markdown(report: Report) -> str:
    diags = report.diagnostics
    base = report.rule_url_base
    out = ["## fp8lint", ""]
    if not diags:
        out.append(f"No FP8 findings ({_files(report.files_seen)} checked).")
        return "\n".join(out) + "\n"
    files = len({d.path for d in diags})
    where = (
        f"{files} of {_files(report.files_seen)} checked"
        if report.files_seen >= files
        else _files(files)
    )
    out += [
        f"Found {_counts_phrase(diags)} in {where}.",
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
        message = " ".join(d.message.split())
        out.append(f"- **{d.code}** `{_posix(d.path)}:{d.line}` {message}")
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


def render_sites(path: str, sites: list[Fp8Site]) -> str:
    from fp8lint.model import FRAMEWORK_LABEL, SETTING_FIELDS

    if not sites:
        return f"{path}: no FP8 configuration site recognized\n"
    out: list[str] = []
    for i, site in enumerate(sites, 1):
        s = site.span
        out.append(
            f"{s.path}:{s.line}:{s.column}: site {i}: {site.kind} "
            f"({FRAMEWORK_LABEL[site.framework]})"
        )
        if len(site.layers) > 1:
            out.append(f"    layers (base first): {' > '.join(site.layers)}")
        for name in SETTING_FIELDS:
            setting = getattr(site, name)
            if not setting.known and setting.span is None and not setting.key:
                continue
            value = setting.value
            shown = getattr(value, "value", value) if setting.known else "unknown"
            if setting.provenance == "written" and setting.span is not None:
                sp = setting.span
                where = f"{sp.path}:" if sp.path != path else ""
                origin = f"written at {where}{sp.line}:{sp.column} `{setting.key}`"
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
