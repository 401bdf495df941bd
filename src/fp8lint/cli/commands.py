"""The subcommands besides `check`: `clean`, `show`, `rule`, `schema`, and the entries of
`review` and `simulate`."""

from __future__ import annotations

import os
import sys

from fp8lint.cli import UsageError
from fp8lint.diagnostics import printable

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    import argparse
    from typing import Any


def rule_metadata() -> tuple[Any, ...]:
    """Every rule's code, name, summary, severity and page, for formats that describe rules
    (the engine's own codes first)."""
    from fp8lint.report import RuleMeta
    from fp8lint.rules import ENGINE_CODES, all_rules, rule_page

    metas = [
        RuleMeta(e.code, e.name, e.summary, e.severity, rule_page(e.code)) for e in ENGINE_CODES
    ]
    metas += [
        RuleMeta(r.code, r.name, r.summary, r.severity, rule_page(r.code)) for r in all_rules()
    ]
    return tuple(metas)


def cmd_clean(args: argparse.Namespace) -> int:
    """Remove the cache directory `check` would use (exit 0, also when there is none)."""
    from fp8lint.engine.cache_files import clean
    from fp8lint.engine.check import cache_location
    from fp8lint.engine.config import Resolver

    location = cache_location(args.cache_dir, Resolver(args.config))
    try:
        _removed, message = clean(location)
    except OSError as exc:
        raise UsageError(f"cannot remove {location}: {exc.strerror or exc}") from None
    print(message)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """The normalized sites of files: the same selection as `check` makes among them, with
    the same warnings for files it does not read.  A folder is not a FILE here (exit 2)."""
    import json

    from fp8lint.engine import FileProblem, lint_text, read_text
    from fp8lint.engine.files import file_kind
    from fp8lint.engine.runner import selected_files
    from fp8lint.frameworks.registry import label
    from fp8lint.report.sites import render_sites
    from fp8lint.settings import RunSettings

    status = 0
    dumps: list[Any] = []
    for path in args.paths:
        if os.path.isdir(path):
            print(f"{printable(path)}: is a directory; `fp8lint show` takes files", file=sys.stderr)
            status = 2
    chosen, skipped = selected_files(p for p in args.paths if not os.path.isdir(p))
    for shown, why in skipped:
        print(f"warning: {printable(shown)}: {why}", file=sys.stderr)
    if not chosen and not status:
        print("warning: no files to check under the given paths", file=sys.stderr)
    for shown in chosen:
        kind = file_kind(shown)
        assert kind is not None
        try:
            text = read_text(shown, RunSettings().max_bytes)
        except FileProblem as exc:
            print(f"{printable(shown)}:{exc.line}:{exc.column}: {exc.message}", file=sys.stderr)
            status = 2
            continue
        if text is None:
            if args.output_format != "json":
                print(f"{printable(shown)}: no FP8 settings")
            continue
        # only the sites and FP8001 are shown: no fix is
        diags, sites = lint_text(shown, text, kind, RunSettings(plan_fixes=False))
        # a record of unidentified FP8 keys is no FP8 site of any family: not shown
        sites = [s for s in sites if s.framework != "unidentified"]
        for d in diags:
            if d.code == "FP8001":
                where = f"{printable(d.path)}:{d.line}:{d.column}"
                print(f"{where}: {printable(d.message)}", file=sys.stderr)
                status = 2
        if args.output_format == "json":
            dumps.extend(s.model_dump(mode="json") for s in sites)
        else:
            sys.stdout.write(render_sites(shown, sites, label))
    if args.output_format == "json":
        print(json.dumps(dumps, indent=2))
    return status


def rule_explanation(rule: Any) -> dict[str, Any]:
    """A rule (or engine code) as `fp8lint rule --output-format json` prints it: the fields of
    ruff's `ruff rule --output-format json`, with the page as "explanation"."""
    from fp8lint.rules import rule_page

    fix = rule.fix.value if rule.fix is not None else None
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "fix": fix,
        "default_enabled": rule.default_enabled,
        "options": [
            {
                "name": o.name,
                "type": getattr(o.type, "__name__", str(o.type)),
                "default": _plain(o.default),
                "help": o.help,
            }
            for o in getattr(rule, "options", ())
        ],
        "explanation": rule_page(rule.code),
    }


def _plain(value: Any) -> Any:
    """`value` as JSON can hold it (a tuple as a list, anything else as its text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple, frozenset, set)):
        return [_plain(v) for v in value]
    return str(value)


def _by_code(code: str) -> Any:
    """The rule class or engine code that `code` (a code or a name) names, else None."""
    from fp8lint.rules import ENGINE_CODES, rule_by_code

    for e in ENGINE_CODES:
        if code.upper() == e.code or code.lower() == e.name:
            return e
    return rule_by_code(code)


def cmd_rule(args: argparse.Namespace) -> int:
    """A rule's page; `--all` every page; no argument: the list of rules (as `ruff rule`).
    `--output-format json`: the page and the rule's metadata as JSON (a list for `--all`)."""
    import json

    from fp8lint.rules import ENGINE_CODES, page_codes, rule_page

    as_json = args.output_format == "json"
    if args.all:
        if as_json:
            print(json.dumps([rule_explanation(_by_code(c)) for c in page_codes()], indent=2))
        else:
            print("\n\n".join(rule_page(code) for code in page_codes()))
        return 0
    if not args.code:
        metas = rule_metadata()
        defaults = {e.code: True for e in ENGINE_CODES}
        from fp8lint.rules import all_rules

        defaults.update({r.code: r.default_enabled for r in all_rules()})
        if as_json:
            rows = [
                {
                    "code": m.code,
                    "name": m.name,
                    "summary": m.summary,
                    "severity": m.severity.value,
                    "selected_by_default": defaults[m.code],
                }
                for m in metas
            ]
            print(json.dumps(rows, indent=2))
        else:
            width = max(len(m.name) for m in metas)
            for m in metas:
                off = "" if defaults[m.code] else "  (not selected by default)"
                print(f"{m.code}  {m.name:<{width}}  {m.severity.value:<7}  {m.summary}{off}")
        return 0
    rule = _by_code(args.code)
    if rule is None:
        raise UsageError(f"unknown rule `{args.code}`")
    print(json.dumps(rule_explanation(rule), indent=2) if as_json else rule_page(rule.code))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    """`fp8lint schema`: the schemas there are; `fp8lint schema NAME`: one, as JSON."""
    from fp8lint.engine.schemas import UnknownSchema, export, listing

    if not args.name:
        sys.stdout.write(listing())
        return 0
    try:
        sys.stdout.write(export(args.name))
    except UnknownSchema as exc:
        raise UsageError(str(exc)) from None
    return 0


def cmd_review(args: argparse.Namespace) -> int:
    from fp8lint.review.command import main as review_main

    return review_main(args)


def cmd_simulate(args: argparse.Namespace) -> int:
    from fp8lint.simulate import main as simulate_main

    return simulate_main(args)
