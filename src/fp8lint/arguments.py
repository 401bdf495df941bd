"""The command line's parser (argparse): every subcommand's arguments.

Imported only when the quick scan in `fp8lint.cli` does not cover a command line: argparse,
with the gettext and locale it pulls in and the parser it builds, is a fifth of a
pre-commit call on a file without FP8 settings (issue 14).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from fp8lint import __version__
from fp8lint.engine.units import comma_list
from fp8lint.report import OUTPUT_FORMATS
from fp8lint.settings import FAIL_LEVELS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


def _size(value: str) -> int:
    from fp8lint.engine.config import parse_size

    try:
        return parse_size(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(value: str) -> float:
    from fp8lint.engine.config import parse_seconds

    try:
        return parse_seconds(float(value))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, read as shutil reads it (COLUMNS, else the
    terminal of `sys.__stdout__`, else 80), without importing shutil (and bz2, lzma)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, the width found without shutil: argparse makes one per
    argument it adds, and shutil's import is a tenth of a pre-commit call (issue 14)."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
        **kwargs: Any,
    ) -> None:
        if width is None:
            width = _terminal_columns() - 2  # as HelpFormatter computes it
        super().__init__(prog, indent_increment, max_help_position, width, **kwargs)


class _Incomplete(Exception):
    """A lean parser (the chosen subcommand's alone) met an error: the full parser, which
    prints argparse's usual message, parses again."""


class _Parser(argparse.ArgumentParser):
    lean = False

    def error(self, message: str) -> NoReturn:
        if self.lean:
            raise _Incomplete(message)
        super().error(message)


def build_parser(command: str | None = None, lean: bool = False) -> argparse.ArgumentParser:
    """The parser; with `command`, only that subcommand's arguments are built (building all
    seven costs a pre-commit call more than the check of a file without FP8 settings).
    `lean`: only that subcommand's parser at all, for a command line that starts with it;
    its errors raise `_Incomplete` (the message lists the subcommands: build them all)."""
    parser = _Parser(
        prog="fp8lint",
        description="Static checks for FP8 training configurations (Transformer Engine, "
        "Megatron-LM, NeMo, Accelerate, DeepSpeed/MS-AMP).",
        formatter_class=_Formatter,
        allow_abbrev=False,  # `--selec` is an error, as in ruff
    )
    parser.lean = lean
    parser.add_argument("--version", action="version", version=f"fp8lint {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (summary, fill) in SUBCOMMANDS.items():
        if lean and command != name:
            continue
        arguments = sub.add_parser(
            name, help=summary, formatter_class=_Formatter, allow_abbrev=False
        )
        if command is None or command == name:
            arguments.lean = lean
            fill(arguments)
    return parser


def parse_full(words: list[str]) -> argparse.Namespace:
    """`words` parsed.  A command line that starts with a subcommand, as pre-commit's does,
    is parsed by that subcommand's parser alone; any error is reported by the full parser,
    so that messages (and the usage they show) are argparse's as ever."""
    # the first word that is not an option names the subcommand (only --version and --help
    # may come before it); anything else builds every parser, for argparse's own messages
    command = next((w for w in words if not w.startswith("-")), None)
    if words and words[0] in SUBCOMMANDS:
        try:
            return build_parser(words[0], lean=True).parse_args(words)
        except _Incomplete:
            pass
    return build_parser(command if command in SUBCOMMANDS else None).parse_args(words)


# `check`'s options by what they are about: each is (flags, add_argument's keywords)
Option = tuple[tuple[str, ...], "dict[str, Any]"]


def _option(*flags: str, **keywords: Any) -> Option:
    return flags, keywords


FILES = (  # what is read, and with which configuration
    _option("paths", nargs="*", default=["."], metavar="PATH"),
    _option(
        "--exclude",
        type=comma_list,
        action="extend",
        default=None,
        metavar="PATTERNS",
        help="gitignore-style patterns (relative to the working directory) to skip, instead "
        "of the configuration's `exclude`",
    ),
    _option(
        "--extend-exclude",
        type=comma_list,
        action="extend",
        default=[],
        metavar="PATTERNS",
        help="patterns to skip in addition to the configured ones",
    ),
    _option(
        "--force-exclude",
        action="store_true",
        help="apply `exclude` also to files named on the command line (for pre-commit)",
    ),
    _option(
        "--config",
        action="append",
        default=None,
        metavar="FILE|'KEY = VALUE'",
        help="use this configuration file for every file (paths relative to the CWD); or, "
        "as ruff, one setting in TOML (e.g. 'fail-on = \"info\"'), laid over every file's "
        "configuration (repeatable)",
    ),
    _option(
        "--stdin-filename",
        default=None,
        metavar="NAME",
        help="with PATH `-` (standard input): check it as NAME (its kind, its settings, NAME "
        "in the findings); without it the kind is guessed from the text; with --fix the "
        "fixed text goes to stdout",
    ),
    _option(
        "--show-settings",
        action="store_true",
        help="print the resolved settings for the given file and exit",
    ),
    _option(
        "--show-files",
        action="store_true",
        help="print the files that would be checked (after exclusions) and exit",
    ),
)
# repeated selection flags accumulate, as ruff's do
SELECTION = (  # which rules run, with which options
    _option(
        "--select",
        type=comma_list,
        action="extend",
        default=None,
        help="rule codes, prefixes or names to run (replaces the default set; repeatable)",
    ),
    _option(
        "--extend-select", type=comma_list, action="extend", default=[], help="add rules to the set"
    ),
    _option(
        "--ignore", type=comma_list, action="extend", default=[], help="rules to skip (repeatable)"
    ),
    _option(
        "--per-file-ignores",
        action="append",
        default=None,
        metavar="PATTERN:CODES",
        help="ignore CODES (comma-separated) in files matching PATTERN, instead of the "
        "configuration's `per-file-ignores` (repeatable)",
    ),
    _option(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a rule option, e.g. min-amax-history-len=32 (repeatable)",
    ),
)
OUTPUT = (  # what is printed, where
    _option("--output-format", choices=OUTPUT_FORMATS, default="text"),
    _option(
        "-o",
        "--output-file",
        default=None,
        help="write the report to this file instead of standard output",
    ),
    _option(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR "
        "forces it), always or never",
    ),
    _option("-q", "--quiet", action="store_true", help="print findings only"),
    _option(
        "--statistics",
        action="store_true",
        help="print the number of findings per rule instead of the findings",
    ),
    _option(
        "--rule-url-base",
        default=None,
        metavar="URL",
        help="where rule pages are published (URL + code), for links in SARIF and Markdown",
    ),
    _option("--baseline", default=None, metavar="FILE", help="report only findings not in FILE"),
    _option(
        "--write-baseline",
        default=None,
        metavar="FILE",
        help="write every current finding to FILE (then exit 0)",
    ),
)
EXIT = (  # the exit code
    _option(
        "--fail-on",
        choices=FAIL_LEVELS,
        default=None,
        help="lowest severity that makes the exit code 1 (default: `fail-on` from the "
        "configuration, else warning)",
    ),
    _option("--exit-zero", action="store_true", help="exit 0 even when there are findings"),
)
FIXING = (
    _option("--fix", action="store_true", help="apply safe fixes in place"),
    _option(
        "--unsafe-fixes",
        action="store_true",
        help="also apply unsafe fixes with --fix/--diff; alone, show them as fixable ([*]) "
        "without applying them (as ruff)",
    ),
    _option(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff instead of writing them "
        "(exit 1 when there is a diff)",
    ),
    _option("--show-fixes", action="store_true", help="list the findings that --fix fixed"),
    _option(
        "--add-noqa",
        action="store_true",
        help="append `# fp8lint: ignore[CODE]` to every flagged line (merged into an fp8lint "
        "comment already there; JSON files are skipped), then exit 0",
    ),
    _option(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when --fix changed a file, even if nothing is left",
    ),
)
CACHE = (
    _option(
        "--no-cache",
        action="store_true",
        help="neither read nor write the cache (also: FP8LINT_NO_CACHE=1, `cache = false`)",
    ),
    _option(
        "--cache-dir",
        default=None,
        metavar="DIR",
        help="where the cache lives (default: `cache-dir` from the configuration, else "
        ".fp8lint_cache in the project root; also: FP8LINT_CACHE_DIR)",
    ),
)
LIMITS = (  # what one file may cost
    _option(
        "--file-timeout",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="report a file whose checks take longer as FP8001 and go on (default: "
        "`file-timeout` from the configuration, else 60; 0: no limit)",
    ),
    _option(
        "--max-file-size",
        type=_size,
        default=None,
        metavar="SIZE",
        help="larger files are an FP8001 finding, not read: bytes or e.g. 512KiB, 16MiB, 2MB "
        "(default: `max-file-size` from the configuration, else 4MiB)",
    ),
)
CHECK_OPTIONS = {
    flags[-1].lstrip("-").replace("-", "_"): (flags, keywords)
    for group in (FILES, SELECTION, OUTPUT, EXIT, FIXING, CACHE, LIMITS)
    for flags, keywords in group
}
# the order `check --help` lists them in, as it always has
CHECK_ORDER = (
    "paths",
    "select",
    "extend_select",
    "ignore",
    "exclude",
    "extend_exclude",
    "per_file_ignores",
    "statistics",
    "color",
    "option",
    "output_format",
    "output_file",
    "fail_on",
    "config",
    "show_settings",
    "stdin_filename",
    "show_files",
    "force_exclude",
    "baseline",
    "write_baseline",
    "rule_url_base",
    "exit_zero",
    "quiet",
    "fix",
    "unsafe_fixes",
    "diff",
    "show_fixes",
    "exit_non_zero_on_fix",
    "add_noqa",
    "no_cache",
    "cache_dir",
    "file_timeout",
    "max_file_size",
)


def _check_arguments(check: argparse.ArgumentParser) -> None:
    for name in CHECK_ORDER:
        flags, keywords = CHECK_OPTIONS[name]
        # a fresh list default for each parser, as a literal in the call would give
        fresh: dict[str, Any] = {
            k: list(v) if isinstance(v, list) else v for k, v in keywords.items()
        }
        check.add_argument(*flags, **fresh)


def _clean_arguments(clean: argparse.ArgumentParser) -> None:
    clean.add_argument(
        "--cache-dir", default=None, metavar="DIR", help="the cache to remove (as for check)"
    )
    clean.add_argument(
        "--config", default=None, metavar="FILE", help="the configuration that names the cache"
    )


def _show_arguments(show: argparse.ArgumentParser) -> None:
    show.add_argument("paths", nargs="+", metavar="PATH")
    show.add_argument("--output-format", choices=("text", "json"), default="text")


def _schema_arguments(schema: argparse.ArgumentParser) -> None:
    schema.add_argument("name", nargs="?", metavar="NAME", help="e.g. config")


def _rule_arguments(rule: argparse.ArgumentParser) -> None:
    rule.add_argument("code", nargs="?", help="a rule code (FP8101) or name (zero-headroom)")
    rule.add_argument("--all", action="store_true", help="print every rule page")
    rule.add_argument(
        "--output-format",
        choices=("text", "json"),
        default="text",
        help="text, or json: the rule's metadata and page (a list with --all or no CODE)",
    )


def _review_arguments(review: argparse.ArgumentParser) -> None:
    from fp8lint.review.command import configure_parser

    configure_parser(review)


def _simulate_arguments(simulate: argparse.ArgumentParser) -> None:
    from fp8lint.simulate import configure_parser as configure_simulate

    configure_simulate(simulate)


SUBCOMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "check": ("lint files and directories", _check_arguments),
    "clean": ("remove the cache directory", _clean_arguments),
    "show": ("print the normalized FP8 sites of files", _show_arguments),
    "schema": ("print a JSON Schema for editors (no NAME: list the schemas)", _schema_arguments),
    "rule": ("print a rule's documentation", _rule_arguments),
    "review": ("review a GitHub pull request (comments, summary)", _review_arguments),
    "simulate": ("replay an amax trace through a delayed-scaling recipe", _simulate_arguments),
}
