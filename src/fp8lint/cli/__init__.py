"""Command line: `fp8lint check`, `fp8lint show`, `fp8lint rule`, `fp8lint clean`,
`fp8lint schema`, ...

Exit codes follow ruff: 0 clean, 1 findings (at or above `--fail-on`, default `warning`),
2 usage, configuration or internal error.

This module is what every call loads: the quick scan of a pre-commit command line, and
`main`.  `check` runs from `cli.check`, the other subcommands from `cli.commands`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from types import SimpleNamespace  # loaded already: enum imports it

from fp8lint.diagnostics import LocatedError
from fp8lint.settings import FAIL_LEVELS

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

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
    "add_noqa": False,
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
        if option == "--config":  # repeatable: a file, or inline settings
            values["config"] = [*(values["config"] or ()), value]
        else:
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
    """A command line that cannot run as given: its message, exit 2."""


def _handler(command: str) -> Callable[[Any], int]:
    """The function that runs `command`, from the module that holds it."""
    if command == "check":
        from fp8lint.cli.check import cmd_check

        return cmd_check
    from fp8lint.cli import commands

    handler: Callable[[Any], int] = getattr(commands, f"cmd_{command}")
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    # pydantic scans every installed distribution's entry points for plugins when it builds
    # its first validator: in an environment of hundreds of packages that is a large share
    # of a pre-commit call, and fp8lint's own records have no use for plugins (issue 23).
    # A value the user set is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    for stream in (sys.stdout, sys.stderr):  # file names need not be valid UTF-8
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    args = parse_arguments(list(sys.argv[1:] if argv is None else argv))
    try:
        return _handler(args.command)(args)
    except UsageError as exc:
        print(f"fp8lint: error: {exc}", file=sys.stderr)
        return 2
    except LocatedError as exc:  # a bad configuration or baseline file: a line per problem
        for line in exc.message.splitlines() or [""]:
            print(f"fp8lint: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        from fp8lint.engine.workers import Terminated  # SIGTERM while workers ran

        terminated = isinstance(exc, Terminated)
        print(f"fp8lint: {'terminated' if terminated else 'interrupted'}", file=sys.stderr)
        return 143 if terminated else 130
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


def entry() -> None:
    """The `fp8lint` command and `python -m fp8lint`: `main`, then an exit whose garbage
    collections skip the heap left by the imports.  At exit the interpreter collects its
    whole heap (libcst's and pydantic's classes) more than once: a sixth of a cold one-file
    call where it was measured (the commit that added this).  Every output is closed by
    then, and nothing fp8lint leaves needs a finalizer; `main` itself, called in-process,
    changes nothing."""
    code = main()
    import gc

    gc.freeze()
    sys.exit(code)
