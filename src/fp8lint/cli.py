"""Command line: `fp8lint check`, `fp8lint show`, `fp8lint rule`, `fp8lint clean`,
`fp8lint schema`, ...

Exit codes follow ruff: 0 clean, 1 findings (at or above `--fail-on`, default `warning`),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace  # loaded already: enum imports it

from fp8lint.diagnostics import LocatedError, printable
from fp8lint.settings import FAIL_LEVELS

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from fp8lint.engine.config import Resolver

FAST_FLAGS = {  # `check` flags the quick scan reads: store_true, no value
    "--no-cache": "no_cache",
    "-q": "quiet",
    "--quiet": "quiet",
    "--exit-zero": "exit_zero",
    "--force-exclude": "force_exclude",
    "--fix": "fix",
    "--diff": "diff",
    "--show-fixes": "show_fixes",
    "--unsafe-fixes": "unsafe_fixes",
    "--exit-non-zero-on-fix": "exit_non_zero_on_fix",
    "--statistics": "statistics",
}
FAST_VALUES = ("--cache-dir", "--config", "--output-format", "--fail-on")  # one value each
# what argparse gives `check` for every option not on the command line (a test compares the
# two on many command lines, so they cannot drift apart)
CHECK_DEFAULTS: dict[str, Any] = {
    "command": "check",
    "paths": ["."],
    "select": None,
    "extend_select": [],
    "ignore": [],
    "exclude": None,
    "extend_exclude": [],
    "per_file_ignores": None,
    "color": "auto",
    "option": [],
    "output_format": "text",
    "output_file": None,
    "fail_on": None,
    "config": None,
    "show_settings": False,
    "stdin_filename": None,
    "show_files": False,
    "force_exclude": False,
    "baseline": None,
    "write_baseline": None,
    "rule_url_base": None,
    "exit_zero": False,
    "quiet": False,
    "fix": False,
    "unsafe_fixes": False,
    "diff": False,
    "show_fixes": False,
    "exit_non_zero_on_fix": False,
    "statistics": False,
    "no_cache": False,
    "cache_dir": None,
    "file_timeout": None,
    "max_file_size": None,
}


def quick_check(words: list[str]) -> SimpleNamespace | None:
    """`check [OPTION...] PATH... [OPTION...]` with only the flags of `FAST_FLAGS` and the
    options of `FAST_VALUES`, the line pre-commit runs on every commit, read without argparse.
    Anything else (another option, `-`, `--`, an abbreviation, a value that starts with `-`
    or is not among an option's choices, paths split by an option, which argparse rejects)
    is None: argparse reads it, with its usual messages."""
    if not words or words[0] != "check":
        return None
    values = {k: list(v) if isinstance(v, list) else v for k, v in CHECK_DEFAULTS.items()}
    paths: list[str] = []
    ended = False  # an option came after the paths: no more paths
    rest = iter(words[1:])
    for word in rest:
        if not word.startswith("-"):
            if ended:
                return None
            paths.append(word)
            continue
        ended = bool(paths)
        name = FAST_FLAGS.get(word)
        if name is not None:
            values[name] = True
            continue
        option, sep, value = word.partition("=")
        if option not in FAST_VALUES:
            return None
        if not sep:
            value = next(rest, "-")
        if value.startswith("-") or not _allowed(option, value):
            return None
        values[option[2:].replace("-", "_")] = value
    if paths:
        values["paths"] = paths
    return SimpleNamespace(**values)  # the attributes argparse's namespace would have


def _allowed(option: str, value: str) -> bool:
    if option == "--output-format":
        from fp8lint.report import OUTPUT_FORMATS

        return value in OUTPUT_FORMATS
    return option != "--fail-on" or value in FAIL_LEVELS


def parse_arguments(words: list[str]) -> Any:
    """`words` parsed: by the quick scan when it covers them, else by argparse."""
    quick = quick_check(words)
    if quick is not None:
        return quick
    from fp8lint.arguments import parse_full

    return parse_full(words)


class UsageError(Exception):
    pass


def parse_options(pairs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """`NAME=VALUE` pairs checked against the options rules declare (type and existence), by
    the same pydantic model as `[options]` in the configuration."""
    if not pairs:
        return {}
    from fp8lint.engine.config_model import Invalid, validate_options

    given: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise UsageError(f"`--option {pair}`: write NAME=VALUE")
        given[name.strip()] = raw
    try:
        return validate_options(given, raw=True)
    except Invalid as exc:
        raise UsageError(exc.problems[0]) from None


def cache_location(cache_dir: str | None, configs: Resolver) -> str:
    """Where the cache lives: `--cache-dir`, else FP8LINT_CACHE_DIR, else `cache-dir` from
    the configuration of the working directory, else `.fp8lint_cache` in its root (the
    folder of that configuration file, or the working directory when there is none)."""
    from fp8lint.engine.cache_files import location

    explicit = cache_dir or os.environ.get("FP8LINT_CACHE_DIR")
    if explicit:
        return location(".", None, explicit)
    project = configs.for_path(".")
    return location(project.root, project.cache_dir)


def cache_enabled(args: argparse.Namespace, configs: Resolver | None) -> bool:
    """Only a plain check uses the cache (never --fix or --diff), unless --no-cache,
    FP8LINT_NO_CACHE or `cache = false` turn it off (without `configs`: what the command line
    and the environment say)."""
    if args.fix or args.diff or args.no_cache:
        return False
    from fp8lint.engine.cache_files import disabled_by_environment

    if disabled_by_environment():
        return False
    return configs is None or configs.for_path(".").cache is not False


def cmd_check(args: argparse.Namespace) -> int:
    from fp8lint.engine import run
    from fp8lint.report import Report, render_output
    from fp8lint.settings import (
        DEFAULT_FILE_TIMEOUT,
        DEFAULT_MAX_BYTES,
        FixMode,
        RunSettings,
        Selection,
    )

    given = frozenset(
        name
        for name, value in (("max_bytes", args.max_file_size), ("file_timeout", args.file_timeout))
        if value is not None
    )
    settings = RunSettings(
        selection=Selection(
            select=tuple(args.select) if args.select is not None else None,
            extend_select=tuple(args.extend_select),
            ignore=tuple(args.ignore),
        ),
        options=parse_options(args.option),
        max_bytes=args.max_file_size if args.max_file_size is not None else DEFAULT_MAX_BYTES,
        file_timeout=args.file_timeout if args.file_timeout is not None else DEFAULT_FILE_TIMEOUT,
        command_line=given,
    )
    _check_selectors(settings.selection)
    rules = path_rules(args)
    for _pattern, codes in rules.per_file_ignores or ():
        _check_selectors(Selection(ignore=codes))
    if args.statistics and (args.diff or args.fix):
        raise UsageError("--statistics cannot be combined with --fix or --diff")
    if args.exit_zero and args.exit_non_zero_on_fix:
        raise UsageError("--exit-zero and --exit-non-zero-on-fix exclude each other")
    from fp8lint.engine.config import Resolver

    configs = Resolver(
        args.config,
        # `--no-cache` needs no cache module (nor the `json` it imports): it is a pre-commit
        # call's start-up cost
        remember=cache_enabled(args, None),
        cache_dir=args.cache_dir or os.environ.get("FP8LINT_CACHE_DIR"),
    )
    if args.show_settings:
        return show_settings(args, configs, settings)
    if args.show_files:
        return show_files(args, configs)
    main_cfg = configs.for_path(args.paths[0] if args.paths else ".")
    mode = None
    if args.fix or args.diff:
        mode = FixMode(unsafe=args.unsafe_fixes, write=not args.diff)
    cache = None
    if cache_enabled(args, configs):
        from fp8lint.engine.cache import Cache

        try:
            cache = Cache(cache_location(args.cache_dir, configs))
        except OSError:  # no working directory, say: lint without a cache
            if os.environ.get("FP8LINT_DEBUG"):
                raise
    report_stream = sys.stdout
    if args.paths == ["-"]:
        if args.stdin_filename is None:
            raise UsageError("`-` reads standard input: name its file with --stdin-filename")
        from fp8lint.engine.runner import run_stdin

        data = sys.stdin.buffer.read(settings.max_bytes + 1)
        result, fixed_bytes = run_stdin(
            data, args.stdin_filename, settings, mode, configs, args.force_exclude, rules
        )
        if mode is not None and mode.write:
            # ruff's convention: the fixed text on stdout, the report on stderr
            sys.stdout.flush()
            sys.stdout.buffer.write(fixed_bytes if fixed_bytes is not None else data)
            sys.stdout.flush()
            report_stream = sys.stderr
    elif "-" in args.paths or args.stdin_filename is not None:
        raise UsageError("--stdin-filename goes with the single PATH `-`")
    else:
        result = run(args.paths, settings, mode, configs, args.force_exclude, cache, rules)
    for path, why in result.fix_failures:
        print(f"{printable(path)}: {why}", file=sys.stderr)
    if not args.quiet:  # -q: findings only, as ruff's --quiet
        for path, why in result.not_read:
            print(f"warning: {printable(path)}: {why}", file=sys.stderr)
        if result.files_seen == 0:
            print("warning: no files to check under the given paths", file=sys.stderr)
    if args.write_baseline:
        from fp8lint.engine.baseline import write

        try:
            n = write(args.write_baseline, result.diagnostics)
        except OSError as exc:
            raise UsageError(f"cannot write {args.write_baseline}: {exc.strerror or exc}") from None
        print(
            f"Wrote {n} baseline entr{'y' if n == 1 else 'ies'} to {args.write_baseline}.",
            file=sys.stderr,
        )
        return 0
    if args.baseline:
        from fp8lint.engine.baseline import Baseline

        kept, stale = Baseline.load(args.baseline).filter(result.diagnostics)
        result.diagnostics = kept
        if stale:
            print(
                f"{args.baseline}: {len(stale)} baseline entr{'y' if len(stale) == 1 else 'ies'}"
                " no longer match a finding (fixed?); rewrite it with --write-baseline:",
                file=sys.stderr,
            )
            for code, path, key in stale:
                print(f"  {code} {printable(path)}: {printable(key)}", file=sys.stderr)
    if args.diff:
        sys.stdout.write("".join(result.diffs))
        if not args.quiet:
            n = len(result.fixed)
            print(f"Would fix {n} finding{'s' if n != 1 else ''}.", file=sys.stderr)
        if result.interrupted:
            interrupted(result)
            return 130
        return 1 if result.diffs and not args.exit_zero else 0
    report = Report(
        diagnostics=result.diagnostics,
        files_seen=result.files_seen,
        fixed=result.fixed,
        # --unsafe-fixes alone changes nothing: it widens what --fix and --diff apply
        unsafe=args.unsafe_fixes and (args.fix or args.diff),
        quiet=args.quiet,
        show_fixes=args.show_fixes,
        color=use_color(args.color, args.output_file is None and report_stream.isatty()),
        rules=rule_metadata() if args.output_format in NEEDS_RULES else (),
        rule_url_base=args.rule_url_base or main_cfg.rule_url_base,
    )
    if args.statistics:
        out = statistics(result.diagnostics, report.unsafe)
    else:
        out = render_output(args.output_format, report)
    if args.output_file is not None:
        try:
            with open(args.output_file, "w", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(out)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output_file}: {exc.strerror or exc}") from None
    elif out:
        report_stream.write(out)
    if result.interrupted:
        interrupted(result)
        return 130
    if args.exit_zero:
        return 0
    if args.exit_non_zero_on_fix and result.fixed:
        return 1
    threshold = FAIL_LEVELS.index(args.fail_on or main_cfg.fail_on or "warning")
    failing = any(d.severity.rank >= threshold for d in result.diagnostics)
    return 1 if failing or result.fix_failures else 0


NEEDS_RULES = ("sarif",)


def interrupted(result: Any) -> None:
    """After Ctrl-C: what was done (the report above covers the files checked so far) and,
    for `--fix`, every file already changed."""
    print(
        f"fp8lint: interrupted; the report covers the {result.files_done} of "
        f"{result.files_seen} files found so far, done before it",
        file=sys.stderr,
    )
    if result.written:
        print("files already changed by --fix:", file=sys.stderr)
        for path in result.written:
            print(f"  {printable(path)}", file=sys.stderr)


def use_color(choice: str, terminal: bool) -> bool:
    """`--color`: always / never, or auto: on a terminal, unless NO_COLOR is set to anything
    non-empty (no-color.org); a non-empty FORCE_COLOR turns it on anywhere."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return terminal


def path_rules(args: argparse.Namespace) -> Any:
    from fp8lint.engine.units import comma_list
    from fp8lint.settings import PathRules

    pairs: list[tuple[str, tuple[str, ...]]] = []
    for item in args.per_file_ignores or ():
        pattern, sep, codes = item.rpartition(":")
        listed = tuple(comma_list(codes))
        if not sep or not pattern or not listed:
            raise UsageError(f"--per-file-ignores takes PATTERN:CODES, not `{item}`")
        pairs.append((pattern, listed))
    return PathRules(
        exclude=tuple(args.exclude) if args.exclude is not None else None,
        extend_exclude=tuple(args.extend_exclude),
        per_file_ignores=tuple(pairs) if args.per_file_ignores is not None else None,
    )


def statistics(diags: list[Any], unsafe: bool) -> str:
    """`--statistics`: one line per rule, most frequent first (count, code, [*] when
    `--fix` would fix them, name), as ruff prints it."""
    from collections import Counter

    counts = Counter((d.code, d.name) for d in diags)
    fixable = {(d.code, d.name) for d in diags if d.fix is not None and d.fix.applies(unsafe)}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(
        f"{n:>{width}}\t{code}\t{'[*] ' if (code, name) in fixable else ''}{name}\n"
        for (code, name), n in rows
    )


def show_files(args: argparse.Namespace, configs: Any) -> int:
    """`--show-files`: one path per line, the files `check` would read; files named on the
    command line that it would not read are listed on stderr."""
    from fp8lint.engine.runner import selected_files

    chosen, skipped = selected_files(args.paths, configs, args.force_exclude, path_rules(args))
    for path, why in skipped:
        print(f"warning: {printable(path)}: {why}", file=sys.stderr)
    sys.stdout.write("".join(f"{printable(path)}\n" for path in chosen))
    return 0


def show_settings(args: argparse.Namespace, configs: Any, cli: Any) -> int:
    """`--show-settings FILE`: the configuration that applies to FILE, after the CLI."""
    import json

    from fp8lint.engine.per_file import SettingsCache

    target = args.paths[0] if args.paths else "."
    cfg = configs.for_path(target)
    effective = SettingsCache(cli, configs).settings(target)
    out = cfg.settings_dict()
    out["effective"] = {
        "select": list(effective.selection.select)
        if effective.selection.select is not None
        else "(default)",
        "extend-select": list(effective.selection.extend_select),
        "ignore": list(effective.selection.ignore),
        "options": effective.options,
        "severity": {k: v.value for k, v in sorted(effective.severity.items())},
        "max-file-size": effective.max_bytes,
        "file-timeout": effective.file_timeout,
        "cache-dir": cache_location(args.cache_dir, configs)
        if cache_enabled(args, configs)
        else None,
    }
    print(json.dumps({"file": target, **out}, indent=2))
    return 0


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


def _check_selectors(selection: Any) -> None:
    """Selectors must name a rule.  Checked against the rule pages' titles, which the
    meta-tests keep in step with the rules, so that no rule module is imported here."""
    selectors = (selection.select or ()) + selection.extend_select + selection.ignore
    if not selectors:
        return
    from fp8lint.rules import page_titles

    titles = page_titles()
    codes, names = list(titles), list(titles.values())
    for p in selectors:
        if p.upper() == "ALL" or p.lower() in names or any(c.startswith(p.upper()) for c in codes):
            continue
        raise UsageError(f"unknown rule selector `{p}`")


def cmd_clean(args: argparse.Namespace) -> int:
    """Remove the cache directory `check` would use (exit 0, also when there is none)."""
    from fp8lint.engine.cache_files import clean
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

    from fp8lint.documents import kind_for
    from fp8lint.engine import FileProblem, lint_text, read_text
    from fp8lint.engine.runner import selected_files
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
        kind = kind_for(shown)
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
        diags, sites = lint_text(shown, text, kind, RunSettings())
        # a record of unidentified FP8 keys is no FP8 site of any family: not shown
        sites = [s for s in sites if s.framework.value != "unidentified"]
        for d in diags:
            if d.code == "FP8001":
                print(f"{d.path}:{d.line}:{d.column}: {d.message}", file=sys.stderr)
                status = 2
        if args.output_format == "json":
            dumps.extend(s.model_dump(mode="json") for s in sites)
        else:
            sys.stdout.write(render_sites(shown, sites))
    if args.output_format == "json":
        print(json.dumps(dumps, indent=2))
    return status


def cmd_rule(args: argparse.Namespace) -> int:
    """A rule's page; `--all` every page; no argument: the list of rules (as `ruff rule`)."""
    import json

    from fp8lint.rules import ENGINE_CODES, page_codes, rule_by_code, rule_page

    if args.all:
        print("\n\n".join(rule_page(code) for code in page_codes()))
        return 0
    if not args.code:
        metas = rule_metadata()
        defaults = {e.code: True for e in ENGINE_CODES}
        from fp8lint.rules import all_rules

        defaults.update({r.code: r.default_enabled for r in all_rules()})
        if args.output_format == "json":
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
    engine = {e.code: e.code for e in ENGINE_CODES} | {e.name.upper(): e.code for e in ENGINE_CODES}
    if args.code.upper() in engine:
        print(rule_page(engine[args.code.upper()]))
        return 0
    rule = rule_by_code(args.code)
    if rule is None:
        raise UsageError(f"unknown rule `{args.code}`")
    print(rule_page(rule.code))
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


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # file names need not be valid UTF-8
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args = parse_arguments(list(sys.argv[1:] if argv is None else argv))
    handlers = {
        "check": cmd_check,
        "clean": cmd_clean,
        "show": cmd_show,
        "rule": cmd_rule,
        "schema": cmd_schema,
        "review": cmd_review,
        "simulate": cmd_simulate,
    }
    try:
        return handlers[args.command](args)
    except UsageError as exc:
        print(f"fp8lint: error: {exc}", file=sys.stderr)
        return 2
    except LocatedError as exc:  # a bad configuration or baseline file: a line per problem
        for line in exc.message.splitlines() or [""]:
            print(f"fp8lint: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fp8lint: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `fp8lint ... | head`: the reader left, nothing to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as exc:  # an internal error: one line, no traceback, exit 2
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        print(
            f"fp8lint: internal error: {type(exc).__name__}: {exc} "
            "(set FP8LINT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
