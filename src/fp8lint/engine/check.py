"""One `fp8lint check` as a request: everything the command line asked for, built once from
its namespace (the quick scan's or argparse's) and taken whole by the engine, which reads
what to check and how; the CLI reads the rest (the report, the exit code).

Light on purpose: a pre-commit call makes one, so it imports only records and settings, and
the configuration, the cache and the runner only once they are needed.
"""

from __future__ import annotations

import os

from fp8lint.records import field, record, replace
from fp8lint.report import SHOWS_FIXES
from fp8lint.settings import FixMode, PathRules, RunSettings

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from fp8lint.engine.cache import Cache
    from fp8lint.engine.config import Resolver
    from fp8lint.engine.runner import RunResult


@record(frozen=True)
class CheckRequest:
    """What one `check` is to do."""

    # what to check
    paths: tuple[str, ...] = (".",)
    # with the single path `-`: the name of stdin's file (None: its kind is guessed)
    stdin_filename: str | None = None
    config: str | None = None  # --config: this file for every path
    config_settings: tuple[str, ...] = ()  # --config 'KEY = VALUE': laid over every config
    force_exclude: bool = False
    path_rules: PathRules = field(default_factory=PathRules)  # --exclude, --per-file-ignores
    settings: RunSettings = field(default_factory=RunSettings)  # selection, options, limits
    # fixing
    fix: FixMode | None = None  # --fix (write), --diff (write=False); None: only check
    unsafe_fixes: bool = False  # --unsafe-fixes (without a fix mode: shown, not applied)
    show_fixes: bool = False
    exit_non_zero_on_fix: bool = False
    add_noqa: bool = False  # --add-noqa: suppression comments for every finding
    # the cache
    cache: bool = True  # the command line allows it: not --no-cache, --fix or --diff
    cache_dir: str | None = None  # --cache-dir
    # the report
    output_format: str = "text"
    output_file: str | None = None
    color: str = "auto"
    quiet: bool = False
    statistics: bool = False
    rule_url_base: str | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    # the exit code
    exit_zero: bool = False
    fail_on: str | None = None
    # instead of checking
    show_settings: bool = False
    show_files: bool = False

    @property
    def diff(self) -> bool:
        return self.fix is not None and not self.fix.write

    @property
    def unsafe(self) -> bool:
        """`--unsafe-fixes`: applied with --fix or --diff; alone, unsafe fixes are shown as
        available (`[*]`, "N fixable with --fix --unsafe-fixes"), as ruff shows them."""
        return self.fix.unsafe if self.fix is not None else self.unsafe_fixes

    @property
    def shows_fixes(self) -> bool:
        """Whether this run applies or shows fixes: --fix, --diff, --statistics (`[*]`) and
        the output formats that read them (`report.SHOWS_FIXES`); --write-baseline prints no
        finding."""
        if self.fix is not None:
            return True
        if self.write_baseline:
            return False
        return self.statistics or self.output_format in SHOWS_FIXES


def configurations(request: CheckRequest) -> Resolver:
    """The configuration files the request's paths use (`--config` forces one)."""
    from fp8lint.engine.config import Resolver

    overlay, remember = None, cache_enabled(request, None)
    if request.config_settings:
        from fp8lint.engine.config_inline import overlay_of

        overlay, cache = overlay_of(request.config_settings)
        remember = remember and cache is not False  # `--config 'cache = false'`
    return Resolver(
        request.config,
        overlay=overlay,
        # `--no-cache` needs no cache module (nor the `json` it imports): it is a pre-commit
        # call's start-up cost
        remember=remember,
        cache_dir=request.cache_dir or os.environ.get("FP8LINT_CACHE_DIR"),
    )


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


def cache_enabled(request: CheckRequest, configs: Resolver | None) -> bool:
    """Only a plain check uses the cache (never --fix or --diff), unless --no-cache,
    FP8LINT_NO_CACHE or `cache = false` turn it off (without `configs`: what the command line
    and the environment say)."""
    if not request.cache:
        return False
    from fp8lint.engine.cache_files import disabled_by_environment

    if disabled_by_environment():
        return False
    return configs is None or configs.for_path(".").cache is not False


def open_cache(request: CheckRequest, configs: Resolver) -> Cache | None:
    """The cache this run reads and writes, if any (none when it cannot be set up)."""
    if not cache_enabled(request, configs):
        return None
    from fp8lint.engine.cache import Cache

    try:
        return Cache(cache_location(request.cache_dir, configs))
    except OSError:  # no working directory, say: lint without a cache
        if os.environ.get("FP8LINT_DEBUG"):
            raise
    return None


def run_request(
    request: CheckRequest, configs: Resolver, stdin: bytes | None = None
) -> tuple[RunResult, bytes | None]:
    """The run: over the paths, or (`stdin`: the bytes read for the path `-`) over standard
    input as `--stdin-filename`, whose fixed text comes second (see `runner.run_stdin`)."""
    from fp8lint.engine.runner import run, run_stdin

    cache = open_cache(request, configs)
    settings = request.settings
    if stdin is not None:
        if not request.shows_fixes:
            settings = replace(settings, plan_fixes=False)
        return run_stdin(
            stdin,
            request.stdin_filename,
            settings,
            request.fix,
            configs,
            request.force_exclude,
            request.path_rules,
        )
    # a cache entry serves later runs, whatever they show: it keeps the fixes
    if not request.shows_fixes and cache is None:
        settings = replace(settings, plan_fixes=False)
    result = run(
        request.paths,
        settings,
        request.fix,
        configs,
        request.force_exclude,
        cache,
        request.path_rules,
    )
    return result, None
