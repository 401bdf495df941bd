"""`fp8lint check`: the request built from the command line, the engine's run of it, then
the report and the exit code, each step a small function."""

from __future__ import annotations

import os
import sys

from fp8lint.cli import UsageError
from fp8lint.diagnostics import printable
from fp8lint.engine.check import CheckRequest, cache_enabled, cache_location, configurations
from fp8lint.settings import FAIL_LEVELS, FixMode, PathRules, RunSettings, Selection

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, TextIO

    from fp8lint.engine.config import Config, Resolver
    from fp8lint.engine.runner import RunResult

NEEDS_RULES = ("sarif",)  # formats that describe the rules (their metadata is loaded)


def cmd_check(args: argparse.Namespace) -> int:
    request = check_request(args)
    configs = configurations(request)
    if request.show_settings:
        return show_settings(request, configs)
    if request.show_files:
        return show_files(request, configs)
    project = configs.for_path(request.paths[0] if request.paths else ".")
    result, stream = execute(request, configs)
    if request.add_noqa:
        return add_noqa(request, result, configs)
    return finish(request, result, stream, project)


# --------------------------------------------------------------------------- the request


def check_request(args: argparse.Namespace) -> CheckRequest:
    """The request `args` make (the quick scan's namespace or argparse's), checked: what
    argparse cannot tell from one option alone (unknown rules, flags that exclude each other)
    is a UsageError, raised in the order these checks have always run."""
    settings = run_settings(args)
    _check_selectors(settings.selection)
    rules = path_rules(args)
    for _pattern, codes in rules.per_file_ignores or ():
        _check_selectors(Selection(ignore=codes))
    _check_exclusive(args)
    config, inline = config_arguments(args.config)
    return CheckRequest(
        paths=tuple(args.paths),
        stdin_filename=args.stdin_filename,
        config=config,
        config_settings=inline,
        force_exclude=args.force_exclude,
        path_rules=rules,
        settings=settings,
        fix=fix_mode(args),
        unsafe_fixes=args.unsafe_fixes,
        show_fixes=args.show_fixes,
        exit_non_zero_on_fix=args.exit_non_zero_on_fix,
        add_noqa=args.add_noqa,
        cache=not (args.fix or args.diff or args.no_cache),
        cache_dir=args.cache_dir,
        output_format=args.output_format,
        output_file=args.output_file,
        color=args.color,
        quiet=args.quiet,
        statistics=args.statistics,
        rule_url_base=args.rule_url_base,
        baseline=args.baseline,
        write_baseline=args.write_baseline,
        exit_zero=args.exit_zero,
        fail_on=args.fail_on,
        show_settings=args.show_settings,
        show_files=args.show_files,
    )


def config_arguments(given: Sequence[str] | None) -> tuple[str | None, tuple[str, ...]]:
    """`--config` arguments: the one configuration file, and the inline settings."""
    if not given:
        return None, ()
    from fp8lint.engine.config_inline import is_inline

    files = [g for g in given if not is_inline(g)]
    if len(files) > 1:
        raise UsageError(f"--config names one configuration file, not {len(files)}")
    return (files[0] if files else None), tuple(g for g in given if is_inline(g))


def run_settings(args: argparse.Namespace) -> RunSettings:
    """Selection, rule options and limits: what the command line lays over each file's
    configuration."""
    from fp8lint.settings import DEFAULT_FILE_TIMEOUT, DEFAULT_MAX_BYTES

    given = frozenset(
        name
        for name, value in (("max_bytes", args.max_file_size), ("file_timeout", args.file_timeout))
        if value is not None
    )
    return RunSettings(
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


def path_rules(args: argparse.Namespace) -> PathRules:
    from fp8lint.engine.units import comma_list

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


def fix_mode(args: argparse.Namespace) -> FixMode | None:
    if not (args.fix or args.diff):
        return None
    return FixMode(unsafe=args.unsafe_fixes, write=not args.diff)


def _check_exclusive(args: argparse.Namespace) -> None:
    if args.statistics and (args.diff or args.fix):
        raise UsageError("--statistics cannot be combined with --fix or --diff")
    if args.add_noqa and (args.fix or args.diff or args.statistics or args.write_baseline):
        raise UsageError(
            "--add-noqa cannot be combined with --fix, --diff, --statistics or --write-baseline"
        )
    if args.add_noqa and "-" in args.paths:
        raise UsageError("--add-noqa writes files: it cannot read standard input")
    if args.exit_zero and args.exit_non_zero_on_fix:
        raise UsageError("--exit-zero and --exit-non-zero-on-fix exclude each other")


def _check_selectors(selection: Selection) -> None:
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


# --------------------------------------------------------------------------- the run


def execute(request: CheckRequest, configs: Resolver) -> tuple[RunResult, TextIO]:
    """The engine's run of `request`, and the stream its report goes to: stderr when the
    fixed standard input goes to stdout (ruff's convention)."""
    from fp8lint.engine.check import run_request

    if request.paths != ("-",):
        if "-" in request.paths or request.stdin_filename is not None:
            raise UsageError("--stdin-filename goes with the single PATH `-`")
        return run_request(request, configs)[0], sys.stdout
    data = sys.stdin.buffer.read(request.settings.max_bytes + 1)
    result, fixed = run_request(request, configs, data)
    if request.fix is None or not request.fix.write:
        return result, sys.stdout
    sys.stdout.flush()
    sys.stdout.buffer.write(fixed if fixed is not None else data)
    sys.stdout.flush()
    return result, sys.stderr


# --------------------------------------------------------------------------- the outcome


def finish(request: CheckRequest, result: RunResult, stream: TextIO, project: Config) -> int:
    """What the run found, printed (or written) as the request asks; the exit code."""
    _warn(request, result)
    if request.write_baseline:
        return write_baseline(request.write_baseline, result)
    if request.baseline:
        apply_baseline(request.baseline, result)
    if request.diff:
        return show_diff(request, result)
    render_report(request, result, stream, project)
    return exit_code(request, result, project)


def _warn(request: CheckRequest, result: RunResult) -> None:
    for path, why in result.fix_failures:
        print(f"{printable(path)}: {why}", file=sys.stderr)
    if request.quiet:  # -q: findings only, as ruff's --quiet
        return
    for path, why in result.not_read:
        print(f"warning: {printable(path)}: {why}", file=sys.stderr)
    if result.files_seen == 0:
        print("warning: no files to check under the given paths", file=sys.stderr)


def add_noqa(request: CheckRequest, result: RunResult, configs: Resolver) -> int:
    """`--add-noqa`: a suppression comment for each finding (after the baseline, when one
    is given); the files and lines left as they were are listed on stderr.  Exit 0, or 1
    after Ctrl-C or a failed write."""
    from fp8lint.engine import noqa
    from fp8lint.engine.per_file import SettingsCache

    _warn(request, result)
    if request.baseline:
        apply_baseline(request.baseline, result)
    if result.interrupted:
        return interrupted(result)
    done = noqa.add_noqa(
        result.diagnostics, SettingsCache(request.settings, configs, request.path_rules)
    )
    for note in done.notes:
        print(printable(note), file=sys.stderr)
    print(noqa.summary(done), file=sys.stderr)
    return 0


def write_baseline(path: str, result: RunResult) -> int:
    from fp8lint.engine.baseline import write

    try:
        n = write(path, result.diagnostics)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"Wrote {n} baseline entr{'y' if n == 1 else 'ies'} to {path}.", file=sys.stderr)
    return 0


def apply_baseline(path: str, result: RunResult) -> None:
    """Keep only the findings the baseline does not hold; list its entries that match none."""
    from fp8lint.engine.baseline import Baseline

    kept, stale = Baseline.load(path).filter(result.diagnostics)
    result.diagnostics = kept
    if not stale:
        return
    print(
        f"{path}: {len(stale)} baseline entr{'y' if len(stale) == 1 else 'ies'}"
        " no longer match a finding (fixed?); rewrite it with --write-baseline:",
        file=sys.stderr,
    )
    for code, shown, key in stale:
        print(f"  {code} {printable(shown)}: {printable(key)}", file=sys.stderr)


def show_diff(request: CheckRequest, result: RunResult) -> int:
    """`--diff`: the fixes as a unified diff; exit 1 when there is one."""
    sys.stdout.write("".join(result.diffs))
    if not request.quiet:
        n = len(result.fixed)
        print(f"Would fix {n} finding{'s' if n != 1 else ''}.", file=sys.stderr)
    if result.interrupted:
        return interrupted(result)
    return 1 if result.diffs and not request.exit_zero else 0


def render_report(
    request: CheckRequest, result: RunResult, stream: TextIO, project: Config
) -> None:
    """The findings in the output format (or `--statistics`), to `--output-file` or `stream`."""
    from fp8lint.report import Report, render_output

    rules: tuple[Any, ...] = ()
    if request.output_format in NEEDS_RULES:
        from fp8lint.cli.commands import rule_metadata

        rules = rule_metadata()
    summary = Report(
        diagnostics=result.diagnostics,
        files_seen=result.files_seen,
        fixed=result.fixed,
        unsafe=request.unsafe,
        quiet=request.quiet,
        show_fixes=request.show_fixes,
        color=use_color(request.color, request.output_file is None and stream.isatty()),
        rules=rules,
        rule_url_base=request.rule_url_base or project.rule_url_base,
    )
    if request.statistics:
        out = statistics(result.diagnostics, summary.unsafe, request.output_format == "json")
        if request.output_format != "json":
            from fp8lint.report.common import summary_lines

            tail = summary_lines(
                result.diagnostics, result.files_seen, request.quiet, summary.unsafe
            )
            out += "".join(f"{line}\n" for line in tail)
    else:
        out = render_output(request.output_format, summary)
    if request.output_file is not None:
        try:
            with open(request.output_file, "w", encoding="utf-8", errors="backslashreplace") as fh:
                fh.write(out)
        except OSError as exc:
            why = exc.strerror or exc
            raise UsageError(f"cannot write {request.output_file}: {why}") from None
    elif out:
        stream.write(out)


def exit_code(request: CheckRequest, result: RunResult, project: Config) -> int:
    """130 after Ctrl-C (143 after SIGTERM); else 1 for a finding at or above the fail level
    (or a fix that failed), as `--exit-zero` and `--exit-non-zero-on-fix` allow."""
    if result.interrupted:
        return interrupted(result)
    if request.exit_zero:
        return 0
    if request.exit_non_zero_on_fix and result.fixed:
        return 1
    threshold = FAIL_LEVELS.index(request.fail_on or project.fail_on or "warning")
    failing = any(d.severity.rank >= threshold for d in result.diagnostics)
    return 1 if failing or result.fix_failures else 0


def interrupted(result: RunResult) -> int:
    """After Ctrl-C or SIGTERM: what was done (the report above covers the files checked so
    far) and, for `--fix`, every file already changed; the exit status (130, 143)."""
    what = "terminated" if result.terminated else "interrupted"
    print(
        f"fp8lint: {what}; the report covers the {result.files_done} of "
        f"{result.files_seen} files found so far, done before it",
        file=sys.stderr,
    )
    if result.written:
        print("files already changed by --fix:", file=sys.stderr)
        for path in result.written:
            print(f"  {printable(path)}", file=sys.stderr)
    return 143 if result.terminated else 130


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


def statistics(diags: list[Any], unsafe: bool, as_json: bool = False) -> str:
    """`--statistics`: one line per rule, most frequent first (count, code, [*] when
    `--fix` would fix them, name), as ruff prints it; `as_json`: a JSON list of
    `{code, name, count, fixable}`, as ruff's `--statistics --output-format json`."""
    from collections import Counter

    counts = Counter((d.code, d.name) for d in diags)
    fixable = {(d.code, d.name) for d in diags if d.fix is not None and d.fix.applies(unsafe)}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if as_json:
        import json

        listed = [
            {"code": code, "name": name, "count": n, "fixable": (code, name) in fixable}
            for (code, name), n in rows
        ]
        return json.dumps(listed, indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(
        f"{n:>{width}}\t{code}\t{'[*] ' if (code, name) in fixable else ''}{name}\n"
        for (code, name), n in rows
    )


# --------------------------------------------------------------------------- instead of checking


def show_files(request: CheckRequest, configs: Resolver) -> int:
    """`--show-files`: one path per line, the files `check` would read; files named on the
    command line that it would not read are listed on stderr."""
    from fp8lint.engine.runner import selected_files

    chosen, skipped = selected_files(
        request.paths, configs, request.force_exclude, request.path_rules
    )
    for path, why in skipped:
        print(f"warning: {printable(path)}: {why}", file=sys.stderr)
    sys.stdout.write("".join(f"{printable(path)}\n" for path in chosen))
    return 0


def show_settings(request: CheckRequest, configs: Resolver) -> int:
    """`--show-settings FILE`: the configuration that applies to FILE, after the CLI."""
    import json

    from fp8lint.engine.per_file import SettingsCache

    target = request.paths[0] if request.paths else "."
    cfg = configs.for_path(target)
    effective = SettingsCache(request.settings, configs).settings(target)
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
        "cache-dir": cache_location(request.cache_dir, configs)
        if cache_enabled(request, configs)
        else None,
    }
    print(json.dumps({"file": target, **out}, indent=2))
    return 0
