"""Renderers: diagnostics (and sites, for `show`) to the `--output-format` formats, one
module per format as in ruff's `message/`: `text`, `concise`, `json`, `json_lines`,
`sarif`, `github`, `rdjson`, `junit`, `markdown`, and `sites` for `fp8lint show`.

They see only `Report`, `Diagnostic` and `RuleMeta` data and know nothing of rule classes.
Every format is deterministic for a given input (the engine hands diagnostics over sorted).
"""

from __future__ import annotations

from fp8lint.diagnostics import Diagnostic, Severity
from fp8lint.records import field, record

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
# the formats whose renderers read `Diagnostic.fix` (its edits, message or applicability:
# `[*]` and the fixable counts need the edits planned, which may demote a fix to
# display-only); for the others, `github` and `markdown`, a check plans no fix
SHOWS_FIXES = frozenset({"text", "concise", "json", "json-lines", "sarif", "rdjson", "junit"})


@record(frozen=True)
class RuleMeta:
    """What an output format may say about a rule (SARIF rules, links): plain data, so that
    renderers never import rule classes."""

    code: str
    name: str
    summary: str
    severity: Severity
    page: str  # the rule's Markdown page


@record(frozen=True)
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
    """The whole output of `fp8lint check` in format `fmt` (one of OUTPUT_FORMATS): each
    format is one module of this package, imported when it is asked for."""
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"unknown output format {fmt!r}")
    import importlib

    module = importlib.import_module(f"{__name__}.{fmt.replace('-', '_')}")
    rendered: str = module.render(report)
    return rendered
