"""Linting one decoded file: recognize its FP8 sites, run the selected rules, let the site's
framework write each finding's fix, apply inline suppressions and severity overrides.

Heavy modules (pydantic, the frameworks, the rules) are imported here only when a file has
passed the prefilter.
"""

from __future__ import annotations

import os
from functools import partial

from fp8lint.diagnostics import PARSE_ERROR, Applicability, Diagnostic, Fix, Related, Severity
from fp8lint.records import replace
from fp8lint.settings import TARGETS_OPTION, RunSettings

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from fp8lint.documents.text import Reader, SourceFile
    from fp8lint.fixes import FixResult
    from fp8lint.model import FixPlan, Fp8Site, Span
    from fp8lint.rule import Finding, Rule

# what a kind's first file imports (`preload` does it before a file's clock starts)
_KIND_MODULES = {
    "yaml": "fp8lint.frameworks.dispatch",
    "cfg": "fp8lint.frameworks.dispatch",
    "json": "fp8lint.frameworks.dispatch",
    "toml": "fp8lint.frameworks.dispatch",
    "shell": "fp8lint.frameworks.dispatch",
    "python": "fp8lint.frameworks.python_sites",
}


def preload(kind: str) -> None:
    """Import a kind's recognizers before the clock starts: the one-time import (pydantic) is
    not the time of the first file that needs it."""
    import sys

    name = _KIND_MODULES.get(kind)
    if name is None or name in sys.modules:
        return
    import importlib

    try:
        importlib.import_module(name)
    except Exception:
        pass  # the same error comes back, reported on the file, when it is parsed


def default_reader(path: str, limit: int | None = None) -> bytes | None:
    """Related files are read through the cache module, which notes them while recording,
    with the bounds of a linted file (regular file, size limit; the time limit is the linted
    file's own, which covers reading its parents)."""
    from fp8lint.engine.cache_keys import DEPENDENCY_LIMIT, read_dependency

    return read_dependency(path, DEPENDENCY_LIMIT if limit is None else limit)


def parse_file(file: SourceFile, kind: str, reader: Reader | None = None) -> list[Fp8Site]:
    from fp8lint.frameworks import recognize

    return recognize(file, kind, in_repository(file.path, reader or default_reader))


def in_repository(path: str, reader: Reader) -> Reader:
    """`reader` for the files read on `path`'s behalf (Hydra parents, a launch script's
    config, a sourced script): one that reads none whose real path, links followed, lies
    outside the repository `path` belongs to.  Each framework checks the places it looks in;
    this is the rule for every read, whatever a family forgot."""
    from fp8lint.frameworks.shared.paths import inside_real, repository_root

    root: list[str] = []

    def read(other: str) -> bytes | None:
        if not root:
            root.append(repository_root(path))
        return reader(other) if inside_real(os.path.abspath(other), root[0]) else None

    return read


def lint_text(
    path: str,
    text: str,
    kind: str,
    settings: RunSettings,
    reader: Reader | None = None,
    parsed: object | None = None,
) -> tuple[list[Diagnostic], list[Fp8Site]]:
    """Diagnostics and sites for one decoded file; `parsed`, a parse of `text` already made
    (`syntax.checked_parse`), which its reader may take over."""
    from fp8lint.documents.text import ParseError, SourceFile

    if kind == "cfg":
        kind = cfg_kind(text) or ""
        if not kind:
            return [], []  # an INI file or another `.cfg`: not a config of ours
    file = SourceFile(path, text)
    file.parsed = parsed
    if reader is None:
        reader = partial(default_reader, limit=settings.max_bytes)
    try:
        sites = parse_file(file, kind, reader)
    except ParseError as exc:
        return [problem(path, exc.message, exc.line, exc.column)], []
    except RecursionError:
        return [problem(path, "nesting too deep to read")], []
    from fp8lint.engine import suppress

    found = apply_rules(sites, settings, file)
    if kind == "python" and found:
        found = _in_tests(file, found)
    diags = suppress.apply(file, [_advice(d) for d in found], settings.selection, kind)
    if settings.severity:
        diags = [
            replace(d, severity=settings.severity[d.code]) if d.code in settings.severity else d
            for d in diags
        ]
    return diags, sites


def lint_checked(
    path: str, text: str, kind: str, settings: RunSettings
) -> tuple[list[Diagnostic], list[Fp8Site]]:
    """`lint_text` for a check that shows fixes: when the file offers a safe fix, the
    verified fix loop runs too, and a fix the loop would refuse loses its edits (advice, no
    `[*]`, not counted), so that `[*]` and "N fixable" are what `--fix` then does.  Only
    files with a safe fix pay for it (unsafe fixes are counted as offered)."""
    first = lint_text(path, text, kind, settings)
    diags, sites = first
    if not settings.plan_fixes or not any(
        d.fix is not None and d.fix.applies(False) for d in diags
    ):
        return first
    outcome = fix_text(path, text, kind, settings, False, first=first)
    # on a refusal the loop hands back these findings with their safe fixes refused
    return (outcome.remaining, sites) if outcome.failure is not None else first


def fix_text(
    path: str,
    text: str,
    kind: str,
    settings: RunSettings,
    unsafe: bool,
    first: tuple[list[Diagnostic], list[Fp8Site]] | None = None,
) -> FixResult:
    """The verified fix loop (`fp8lint.fixes.fix_text`) on one file's text (which needs
    every finding's fix planned); `first`, the lint of `text` itself when the caller has it
    (with fixes planned), so that it is not linted twice."""
    from fp8lint.documents.syntax import checked_parse, document_entries
    from fp8lint.fixes import fix_text as loop

    if not settings.plan_fixes:
        settings = replace(settings, plan_fixes=True)
        first = None
    if kind == "cfg":
        kind = cfg_kind(text) or "cfg"  # not YAML: nothing to lint, nothing to fix
    lint_one = partial(lint_text, path, kind=kind, settings=settings)
    checked: dict[str, object] = {}  # the text the loop's check just parsed, and its parse

    def parses(t: str) -> str | None:
        why, tree = checked_parse(t, kind)
        checked.clear()
        if tree is not None:
            checked[t] = tree
        return why

    def lint(t: str) -> tuple[list[Diagnostic], list[Fp8Site]]:
        if first is not None and t is text:
            return first
        return lint_one(t, parsed=checked.pop(t, None))

    return loop(text, lint, unsafe, parses, partial(document_entries, kind=kind))


def cfg_kind(text: str) -> str | None:
    """ "yaml" when a `.cfg` file is a YAML mapping (Megatron's `--te-precision-config-file`
    under the name `te_quant.cfg`), else None: INI files and the rest are not read."""
    from fp8lint.documents.tree import load_yaml

    try:
        docs = load_yaml(text)
    except Exception:
        return None
    return "yaml" if docs and docs[0].root is not None and docs[0].root.is_map else None


def apply_rules(sites: list[Fp8Site], settings: RunSettings, file: SourceFile) -> list[Diagnostic]:
    """The selected rules' findings on `sites`; a finding's fix is planned only when the run
    asks for fixes (`settings.plan_fixes`) and the finding stays in this file."""
    if not sites:
        return []
    plan_to_fix = _fix_writer() if settings.plan_fixes else None
    from fp8lint.model import Framework
    from fp8lint.rules import all_rules

    out: list[Diagnostic] = []
    for rule_cls in all_rules():
        if not settings.selection.enabled(rule_cls.code, rule_cls.name, rule_cls.default_enabled):
            continue
        rule = rule_cls()
        options = rule_cls.option_defaults()
        options.update(settings.options.get(rule_cls.code, {}))
        options[TARGETS_OPTION] = settings.targets  # not a declarable name: never user-set
        for index, site in enumerate(sites):
            if site.framework == Framework.UNIDENTIFIED and not rule_cls.reads_unidentified:
                continue  # keys of an unidentified family: no rule but FP8406 reads them
            for f in rule.check(site, options):
                here = _script_span(f.span.path, site, file)
                fix = None
                if f.fix is not None and plan_to_fix is not None and here is None:
                    fix = plan_to_fix(file, site, index, f.fix)
                d = _diagnostic(rule, f, fix, file)
                if here is not None:
                    d = _at_the_script(d, here, file)
                if len(site.layers) > 1:
                    chain = f"effective config: {' > '.join(site.layers)}"
                    d = replace(d, note=f"{d.note}; {chain}" if d.note else chain)
                out.append(d)
    return _dedupe(out)


def _in_tests(file: SourceFile, diags: list[Diagnostic]) -> list[Diagnostic]:
    """Findings in test code: none inside `with pytest.raises(...)` (the test expects that
    construction to fail), and at most info inside a `test_*` function (a fixture, not a
    run), whose fix `_advice` then keeps from a plain `--fix`."""
    from fp8lint.documents.pyspans import Located
    from fp8lint.documents.pytests import HINT, test_ranges, test_ranges_at, within

    path, text = file.path, file.text
    if HINT.search(text) is None:
        return diags
    parsed = file.parsed
    found = None
    if isinstance(parsed, Located):  # the module its sites came from: no second parse
        from fp8lint.documents.pydeep import deep

        lines = [d.line for d in diags if d.path == path]
        found = deep(lambda: test_ranges_at(parsed, lines))
    raises, tests = found if found is not None else test_ranges(text)
    if not raises and not tests:
        return diags
    out = []
    for d in diags:
        here = d.path == path
        if here and within(raises, d.line):
            continue
        if here and within(tests, d.line) and d.severity is not Severity.INFO:
            note = "in a test function: a fixture, not a training run"
            d = replace(d, severity=Severity.INFO, note=f"{d.note}; {note}" if d.note else note)
        out.append(d)
    return out


def _advice(d: Diagnostic) -> Diagnostic:
    """The fix of an info finding (advice, or a risk derived rather than documented; a
    construction in a test) is never applied by a plain `--fix`: a pre-commit hook must not
    rewrite what only an info finding flags.  It stays offered with `--unsafe-fixes`."""
    fix = d.fix
    if (
        d.severity is not Severity.INFO
        or fix is None
        or fix.applicability is not Applicability.SAFE
    ):
        return d
    return replace(d, fix=replace(fix, applicability=Applicability.UNSAFE))


def _fix_writer() -> Callable[[SourceFile, Fp8Site, int, FixPlan], Fix]:
    """The writer of fixes, imported only by a run that plans them (with the documents'
    editors it is a few milliseconds of a call's start-up)."""
    from fp8lint.frameworks.writer import plan_to_fix

    return plan_to_fix


def _script_span(path: str, site: Fp8Site, file: SourceFile) -> Span | None:
    """Where in the launch script `file` a finding at `path` is reported, or None when it
    stays where it is.  A finding about a config that a launch script's overrides change (the
    script switches FP8 on over a template, or its base config is missing) is the script's:
    it is reported at the script's line that switched FP8 on (or another line of it the site
    reads).  The template alone is linted on its own."""
    if path == file.path or not site.layers or not site.layers[-1].endswith("(overrides)"):
        return None
    from fp8lint.model import SETTING_FIELDS

    spans = [site.enable_span, site.enabled.span]
    spans += [getattr(site, name).span for name in SETTING_FIELDS]
    spans.append(site.span)  # the lines that pull the other file in (`source x.sh`)
    return next((s for s in spans if s is not None and s.path == file.path), None)


def _at_the_script(d: Diagnostic, here: Span, file: SourceFile) -> Diagnostic:
    """`d` reported at `here` in the launch script, pointing at the template's line as
    related, without a fix: one would write into the template, which other scripts share."""
    written = Related(d.path, d.line, d.column, "the value is written here")
    return replace(
        d,
        path=here.path,
        line=here.line,
        column=here.column,
        end_line=here.end_line,
        end_column=here.end_column,
        related=(written, *d.related),
        source_line=file.line_text(here.line),
        key=identity(file.line_text(here.line)),
        fix=None,
    )


def _diagnostic(rule: Rule, f: Finding, fix: Fix | None, file: SourceFile) -> Diagnostic:
    span = f.span
    line = file.line_text(span.line)
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=f.severity or rule.severity,
        message=f.message,
        path=span.path,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
        related=tuple(Related(s.path, s.line, s.column, m) for s, m in f.related),
        headroom_binades=f.headroom_binades,
        fix=fix,
        source_line=line,
        key=f.key or identity(line),
        note=f.note,
    )


def identity(line: str) -> str:
    """A finding's key from its source line: the text without comments and spacing."""
    text = line.split(" #", 1)[0] if not line.lstrip().startswith("#") else line
    return " ".join(text.split())


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for d in diags:
        key = (d.code, d.path, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def problem(path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    """An FP8001 finding: a file that cannot be read or checked."""
    code, name = PARSE_ERROR
    return Diagnostic(
        code, name, Severity.ERROR, message, path, line, column, line, column + 1, key=message
    )
