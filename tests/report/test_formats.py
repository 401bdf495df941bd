"""`--output-format`: the exact shape of every format, SARIF against the official schema."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from fp8lint import __version__
from fp8lint.diagnostics import (
    Applicability,
    Diagnostic,
    Fix,
    Related,
    Severity,
    TextEdit,
    fingerprint,
)
from fp8lint.report import OUTPUT_FORMATS, SHOWS_FIXES, Report, RuleMeta, render_output

from ..conftest import SHARED, run_cli

SARIF_SCHEMA = SHARED / "schemas" / "sarif-schema-2.1.0.json"
RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"  # FP8101 at 2:17, with an unsafe fix
BASE = "https://example.org/rules/"


def diag(
    code: str = "FP8101",
    message: str = "zero headroom",
    path: str = "conf/a.yaml",
    line: int = 2,
    column: int = 17,
    end_line: int | None = None,
    end_column: int = 23,
    severity: Severity = Severity.WARNING,
    source_line: str = "  --fp8-format: hybrid",
    fix: Fix | None = None,
    name: str = "zero-headroom",
    related: tuple[Related, ...] = (),
    key: str = "--fp8-format",
    note: str = "",
) -> Diagnostic:
    return Diagnostic(
        code=code,
        name=name,
        severity=severity,
        message=message,
        path=path,
        line=line,
        column=column,
        end_line=line if end_line is None else end_line,
        end_column=end_column,
        related=related,
        fix=fix,
        source_line=source_line,
        key=key,
        note=note,
    )


SAFE_FIX = Fix(
    Applicability.SAFE,
    "set amax_history_len 1024",
    (TextEdit("  --fp8-amax-history-len: 1024\n", 3, 1, 3, 1, 30, 30),),
)


def check(tmp_path: Path, *args: str) -> Any:
    return run_cli("check", ".", "--exit-zero", *args, cwd=tmp_path)


def risky(tmp_path: Path) -> dict[str, Any]:
    """Write the one-finding file; return that finding as the `json` format reports it."""
    (tmp_path / "m.yaml").write_text(RISKY, encoding="utf-8")
    found = json.loads(check(tmp_path, "--output-format", "json").stdout)
    assert [d["code"] for d in found] == ["FP8101"]
    assert found[0]["fix"]["applicability"] == "unsafe"  # it changes the run
    return dict(found[0])


# --- text (ruff's "full") and concise ------------------------------------------------------


def test_text_is_the_full_format(tmp_path: Path) -> None:
    d = risky(tmp_path)
    r = check(tmp_path)
    assert r.stdout == (
        f"m.yaml:2:17: FP8101 [warning] {d['message']}\n"
        "  |\n"
        "2 |   --fp8-format: hybrid\n"
        "  |                 ^^^^^^\n"
        "  |\n"
        f"  = note: {d['note']}\n"
        f"  = help: {d['fix']['message']}\n"
        "\n"
        "Found 1 finding (1 warning) in 1 file checked.\n"
        "(1 more fixable with --fix --unsafe-fixes.)\n"
    )
    # the header is one short line naming the key; the why is the note, on its own line
    assert "--fp8-margin" in d["message"] and len(d["message"]) <= 160
    assert d["note"] and d["note"] not in d["message"]


def test_text_blocks_are_separated_and_aligned() -> None:
    report = Report(
        [
            diag(fix=SAFE_FIX, note="a spike clips"),
            diag(
                code="FP8401",
                name="invalid-value",
                message="bad value",
                line=12,
                column=3,
                end_line=13,
                end_column=2,
                severity=Severity.ERROR,
                source_line="\tkey: \u4e2d\u6587",
            ),
            diag(code="FP8001", message="cannot parse", line=1, column=1, source_line=""),
        ],
        files_seen=2,
        quiet=True,
    )
    assert render_output("text", report) == (
        "conf/a.yaml:2:17: FP8101 [*] [warning] zero headroom\n"
        "  |\n"
        "2 |   --fp8-format: hybrid\n"
        "  |                 ^^^^^^\n"
        "  |\n"
        "  = note: a spike clips\n"
        "  = help: set amax_history_len 1024\n"
        "\n"
        # a span running past its first line is underlined to the end of that line; a tab
        # stays a tab under the line, a wide character takes two columns
        "conf/a.yaml:12:3: FP8401 [error] bad value\n"
        "   |\n"
        "12 | \tkey: \u4e2d\u6587\n"
        "   | \t ^^^^^^^^\n"
        "   |\n"
        "\n"
        "conf/a.yaml:1:1: FP8001 [warning] cannot parse\n"
    )


def test_text_color_only_when_asked() -> None:
    d = diag(severity=Severity.ERROR)
    plain = render_output("text", Report([d], files_seen=1))
    assert "\x1b[" not in plain
    colored = render_output("text", Report([d], files_seen=1, color=True))
    assert "\x1b[1mFP8101\x1b[0m" in colored
    assert "\x1b[31m[error]\x1b[0m" in colored
    assert "\x1b[33m[warning]" in render_output("concise", Report([diag()], color=True))
    assert "\x1b[34m[info]" in render_output(
        "text", Report([diag(severity=Severity.INFO)], color=True)
    )


def test_concise_is_one_line_per_finding(tmp_path: Path) -> None:
    d = risky(tmp_path)
    r = check(tmp_path, "--output-format", "concise")
    assert r.stdout == (
        f"m.yaml:2:17: FP8101 [warning] {d['message']}\n"
        "Found 1 finding (1 warning) in 1 file checked.\n"
        "(1 more fixable with --fix --unsafe-fixes.)\n"
    )
    assert check(tmp_path, "--output-format", "concise", "-q").stdout.count("\n") == 1
    assert d["note"] not in r.stdout  # the note is the full format's, not concise's


def test_concise_is_one_line_even_for_a_multi_line_message() -> None:
    """A message (or file name) holding a newline still takes one line in `concise`."""
    report = Report(
        [diag(message="first\nsecond", note="why", fix=SAFE_FIX), diag(line=9)], quiet=True
    )
    out = render_output("concise", report)
    assert out == (
        "conf/a.yaml:2:17: FP8101 [*] [warning] first\\nsecond\n"
        "conf/a.yaml:9:17: FP8101 [warning] zero headroom\n"
    )


def test_summary_counts_info_findings_without_a_plural_s() -> None:
    """ "4 info", never "4 infos"."""
    diags = [diag(severity=Severity.INFO, line=n) for n in range(1, 5)]
    diags.append(diag(severity=Severity.WARNING, line=9))
    diags.append(diag(severity=Severity.WARNING, line=10))
    out = render_output("concise", Report(diags, files_seen=1))
    assert "Found 6 findings (2 warnings, 4 info) in 1 file checked.\n" in out
    assert "infos" not in render_output("markdown", Report(diags, files_seen=1))


def test_clean_run_summary_in_both_human_formats(tmp_path: Path) -> None:
    (tmp_path / "ok.yaml").write_text("model:\n  hidden: 1\n", encoding="utf-8")
    for fmt in ("text", "concise"):
        assert check(tmp_path, "--output-format", fmt).stdout == (
            "All checks passed (1 file checked).\n"
        )


# --- json-lines -----------------------------------------------------------------------------


def test_json_lines_match_json(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(RISKY, encoding="utf-8")
    (tmp_path / "n.yaml").write_text(RISKY.replace("hybrid", "e4m3"), encoding="utf-8")
    array = json.loads(check(tmp_path, "--output-format", "json").stdout)
    lines = check(tmp_path, "--output-format", "json-lines").stdout.splitlines()
    assert len(lines) == len(array) >= 2
    assert [json.loads(line) for line in lines] == array
    assert render_output("json-lines", Report([])) == ""


# --- github ---------------------------------------------------------------------------------


def test_github_annotations_exact_and_escaped() -> None:
    report = Report(
        [
            diag(path="dir/we,ird:name.yaml", message="100% sure: a, b\nsecond\rline"),
            diag(
                path="dir/we,ird:name.yaml",
                code="FP8205",
                message="multi-line span",
                line=5,
                column=3,
                end_line=7,
                end_column=4,
                severity=Severity.ERROR,
            ),
            diag(path="b.yaml", code="FP8103", message="note", severity=Severity.INFO),
        ]
    )
    assert render_output("github", report) == (
        "::group::dir/we,ird:name.yaml\n"
        "::warning file=dir/we%2Cird%3Aname.yaml,line=2,col=17,endLine=2,endColumn=23,"
        "title=fp8lint (FP8101)::100%25 sure: a, b%0Asecond%0Dline\n"
        "::error file=dir/we%2Cird%3Aname.yaml,line=5,endLine=7,"
        "title=fp8lint (FP8205)::multi-line span\n"
        "::endgroup::\n"
        "::group::b.yaml\n"
        "::notice file=b.yaml,line=2,col=17,endLine=2,endColumn=23,"
        "title=fp8lint (FP8103)::note\n"
        "::endgroup::\n"
    )
    assert render_output("github", Report([])) == ""


def test_github_from_the_cli(tmp_path: Path) -> None:
    d = risky(tmp_path)
    out = check(tmp_path, "--output-format", "github").stdout.splitlines()
    message = d["message"].replace("%", "%25")
    assert out == [
        "::group::m.yaml",
        "::warning file=m.yaml,line=2,col=17,endLine=2,endColumn=23,"
        f"title=fp8lint (FP8101)::{message}",
        "::endgroup::",
    ]


# --- rdjson ---------------------------------------------------------------------------------


def test_rdjson_has_reviewdogs_shape(tmp_path: Path) -> None:
    d = risky(tmp_path)
    data = json.loads(check(tmp_path, "--output-format", "rdjson").stdout)
    # reviewdog proto/rdf/README.md: DiagnosticResult{source, severity, diagnostics}
    assert data == {
        "source": {"name": "fp8lint"},
        "severity": "WARNING",
        "diagnostics": [
            {
                "message": d["message"],
                "location": {
                    "path": "m.yaml",
                    "range": {
                        "start": {"line": 2, "column": 17},
                        "end": {"line": 2, "column": 23},
                    },
                },
                "severity": "WARNING",
                "code": {"value": "FP8101"},
                "suggestions": [
                    {
                        "range": {
                            "start": {"line": 3, "column": 1},
                            "end": {"line": 3, "column": 1},
                        },
                        "text": d["fix"]["edits"][0]["content"],
                    }
                ],
                "related_locations": [
                    {
                        "message": d["related"][0]["message"],
                        "location": {
                            "path": "m.yaml",
                            "range": {"start": {"line": 2, "column": 17}},
                        },
                    }
                ],
            }
        ],
    }


def test_rdjson_urls_byte_columns_and_display_only_fixes() -> None:
    display = Fix(Applicability.DISPLAY_ONLY, "look at it")
    report = Report(
        [
            # columns count UTF-8 bytes: "é" is two bytes
            diag(source_line="  é: x", column=6, end_column=7, fix=display),
            diag(code="FP8104", severity=Severity.ERROR, fix=SAFE_FIX),
        ],
        rule_url_base=BASE,
    )
    data = json.loads(render_output("rdjson", report))
    assert data["source"] == {"name": "fp8lint", "url": BASE}
    first, second = data["diagnostics"]
    assert first["location"]["range"] == {
        "start": {"line": 2, "column": 7},
        "end": {"line": 2, "column": 8},
    }
    assert first["code"] == {"value": "FP8101", "url": BASE + "FP8101"}
    assert "suggestions" not in first
    assert second["severity"] == "ERROR"
    assert second["suggestions"][0]["text"] == "  --fp8-amax-history-len: 1024\n"


# --- junit ----------------------------------------------------------------------------------


def test_junit_lists_findings_as_failures(tmp_path: Path) -> None:
    report = Report(
        [
            diag(message='a <b> & "c"', fix=SAFE_FIX, note="a spike clips"),
            diag(path="z.yaml", code="FP8205", line=4, column=1, severity=Severity.ERROR),
        ],
        files_seen=3,
    )
    root = ET.fromstring(render_output("junit", report))
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert suite.get("name") == "fp8lint"
    assert (suite.get("tests"), suite.get("failures")) == ("2", "2")
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("conf/a.yaml", "FP8101 2:17"),
        ("z.yaml", "FP8205 4:1"),
    ]
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("message") == 'a <b> & "c"'
    assert failure.get("type") == "FP8101"
    assert failure.text is not None and "help: set amax_history_len 1024" in failure.text
    assert "\nnote: a spike clips\n" in failure.text
    # files checked without a finding are not listed; an empty run is an empty suite
    empty = ET.fromstring(render_output("junit", Report([], files_seen=3)))
    suite = empty.find("testsuite")
    assert suite is not None and suite.get("tests") == "0" and not suite.findall("testcase")


def test_junit_from_the_cli(tmp_path: Path) -> None:
    risky(tmp_path)
    (tmp_path / "ok.yaml").write_text("model:\n  hidden: 1\n", encoding="utf-8")
    root = ET.fromstring(check(tmp_path, "--output-format", "junit").stdout)
    assert [c.get("classname") for c in root.iter("testcase")] == ["m.yaml"]


# --- markdown -------------------------------------------------------------------------------


def test_markdown_comment_exact() -> None:
    report = Report(
        [
            diag(message="zero headroom"),
            diag(path="b.yaml", line=7, message="zero headroom"),
            diag(
                code="FP8205",
                name="a|b",
                path="b.yaml",
                line=9,
                message="fails at launch",
                severity=Severity.ERROR,
            ),
        ],
        files_seen=4,
        rule_url_base=BASE,
    )
    assert render_output("markdown", report) == (
        "## fp8lint\n"
        "\n"
        "Found 3 findings (1 error, 2 warnings) in 2 of 4 files checked.\n"
        "\n"
        "| Rule | Name | Count |\n"
        "| --- | --- | ---: |\n"
        f"| [FP8101]({BASE}FP8101) | zero-headroom | 2 |\n"
        f"| [FP8205]({BASE}FP8205) | a\\|b | 1 |\n"
        "\n"
        "### Findings\n"
        "\n"
        "- **FP8205** `b.yaml:9` fails at launch\n"
        "- **FP8101** `conf/a.yaml:2` zero headroom\n"
        "- **FP8101** `b.yaml:7` zero headroom\n"
        "\n"
        "### How to suppress\n"
        "\n"
        "Add `# fp8lint: ignore[CODE]` at the end of the flagged line or on the line above it, "
        "or record the current findings in a baseline with `fp8lint check --write-baseline`.\n"
        "\n"
        f"Rule pages: [FP8101]({BASE}FP8101), [FP8205]({BASE}FP8205).\n"
    )


def test_markdown_empty_and_truncated() -> None:
    assert render_output("markdown", Report([], files_seen=2)) == (
        "## fp8lint\n\nNo FP8 findings (2 files checked).\n"
    )
    many = [diag(line=n) for n in range(1, 26)]
    text = render_output("markdown", Report(many, files_seen=1))
    assert "### Top findings" in text
    assert sum(line.startswith("- **FP8101**") for line in text.splitlines()) == 20
    assert "- … and 5 more findings" in text
    assert "Rule pages" not in text and "](" not in text


# --- sarif ----------------------------------------------------------------------------------


def sarif(tmp_path: Path, *args: str) -> dict[str, Any]:
    return dict(json.loads(check(tmp_path, "--output-format", "sarif", *args).stdout))


def validate_sarif(doc: dict[str, Any]) -> None:
    if not SARIF_SCHEMA.is_file():
        pytest.skip("../shared/schemas/sarif-schema-2.1.0.json is not present")
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


def test_sarif_is_valid_and_complete(tmp_path: Path) -> None:
    d = risky(tmp_path)
    doc = sarif(tmp_path)
    validate_sarif(doc)
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    driver = run["tool"]["driver"]
    assert driver["name"] == "fp8lint" and driver["version"] == __version__
    assert "informationUri" not in driver
    rules = {r["id"]: r for r in driver["rules"]}
    assert {"FP8001", "FP8101", "FP8205"} <= set(rules)
    rule = rules["FP8101"]
    assert rule["name"] == "zero-headroom"
    assert rule["defaultConfiguration"] == {"level": "warning"}
    assert rule["fullDescription"]["text"].startswith("Flags delayed scaling")
    assert "## Why is this bad?" not in rule["fullDescription"]["text"]
    assert rule["help"]["markdown"].startswith("# FP8101 zero-headroom")
    assert "helpUri" not in rule
    (result,) = run["results"]
    assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"] == "FP8101"
    assert result["level"] == "warning"
    assert result["message"]["text"] == d["message"]
    assert result["properties"] == {"note": d["note"]}
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "m.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 2, "startColumn": 17, "endLine": 2, "endColumn": 23}
    assert result["relatedLocations"][0]["message"]["text"] == d["related"][0]["message"]
    (replacement,) = result["fixes"][0]["artifactChanges"][0]["replacements"]
    assert replacement["insertedContent"]["text"] == d["fix"]["edits"][0]["content"]
    assert replacement["deletedRegion"]["startLine"] == 3


def test_sarif_fingerprint_survives_moving_lines(tmp_path: Path) -> None:
    risky(tmp_path)
    before = sarif(tmp_path)["runs"][0]["results"][0]
    (tmp_path / "m.yaml").write_text("\n\n\n" + RISKY, encoding="utf-8")
    after = sarif(tmp_path)["runs"][0]["results"][0]
    region = after["locations"][0]["physicalLocation"]["region"]
    assert (
        region["startLine"] == before["locations"][0]["physicalLocation"]["region"]["startLine"] + 3
    )
    fp = before["partialFingerprints"]["fp8lintFingerprint/v1"]
    assert after["partialFingerprints"] == {"fp8lintFingerprint/v1": fp}
    assert len(fp) == 64 and int(fp, 16) >= 0


def test_sarif_levels_urls_and_fallback_rules() -> None:
    meta = RuleMeta("FP8103", "amax-history-unused", "unused", Severity.INFO, "# FP8103\n")
    report = Report(
        [
            diag(code="FP8103", severity=Severity.INFO, fix=SAFE_FIX),
            diag(code="FP8999", name="made-up", path="/abs/x y.yaml"),
        ],
        rules=(meta,),
        rule_url_base=BASE,
    )
    doc = json.loads(render_output("sarif", report))
    validate_sarif(doc)
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["informationUri"] == BASE
    assert [r["id"] for r in driver["rules"]] == ["FP8103", "FP8999"]
    assert driver["rules"][0]["helpUri"] == BASE + "FP8103"
    assert driver["rules"][0]["defaultConfiguration"] == {"level": "note"}
    first, second = doc["runs"][0]["results"]
    assert first["level"] == "note" and second["ruleIndex"] == 1
    assert second["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "file:///abs/x%20y.yaml"
    }
    assert first["partialFingerprints"]["fp8lintFingerprint/v1"] == fingerprint(
        report.diagnostics[0]
    )


def test_output_file(tmp_path: Path) -> None:
    risky(tmp_path)
    r = check(tmp_path, "--output-format", "sarif", "-o", "out.sarif")
    assert r.returncode == 0 and r.stdout == ""
    doc = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    validate_sarif(doc)
    assert doc["runs"][0]["results"][0]["ruleId"] == "FP8101"
    r = check(tmp_path, "--output-file", "out.txt")
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").startswith("m.yaml:2:17: FP8101")


# --- every format ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
def test_every_format_is_deterministic(fmt: str) -> None:
    report = Report(
        [diag(fix=SAFE_FIX, related=(Related("conf/a.yaml", 1, 1, "here"),)), diag(line=9)],
        files_seen=1,
    )
    assert render_output(fmt, report) == render_output(fmt, report)
    render_output(fmt, Report([]))


@pytest.mark.parametrize("fmt", OUTPUT_FORMATS)
@pytest.mark.parametrize("fix", [SAFE_FIX, Fix(Applicability.DISPLAY_ONLY, "do it by hand")])
def test_shows_fixes_names_the_formats_that_read_a_fix(fmt: str, fix: Fix) -> None:
    """A check in a format outside SHOWS_FIXES plans no fix: its output must not depend on
    one (and every format in it shows something of a safe fix)."""
    rules = (RuleMeta("FP8101", "zero-headroom", "s", Severity.WARNING, "# FP8101\n"),)

    def out(with_fix: Fix | None) -> str:
        return render_output(fmt, Report([diag(fix=with_fix)], files_seen=1, rules=rules))

    if fmt not in SHOWS_FIXES:
        assert out(fix) == out(None)
    elif fix is SAFE_FIX:
        assert out(fix) != out(None)


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        render_output("xml", Report([]))
    assert run_cli("check", ".", "--output-format", "xml", cwd=tmp_path).returncode == 2
