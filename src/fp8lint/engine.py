"""The run: find files, read them once, prefilter, parse, apply rules, sort diagnostics.

Heavy modules (pydantic, libcst, the rules) are imported only for a file that passes the
byte-level prefilter, so a pre-commit call on unrelated files costs little more than starting
Python.  Every failure on one file becomes an FP8001 diagnostic and the run goes on: a file
that cannot be read, one over the size limit, one that takes longer than the time limit, and
an internal error.  `check` keeps per-file results in an on-disk cache (`fp8lint.cache`).
"""

from __future__ import annotations

import codecs
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from fp8lint.diagnostics import (
    PARSE_ERROR,
    Diagnostic,
    Fix,
    LocatedError,
    Related,
    Severity,
)
from fp8lint.sources import source_for

if TYPE_CHECKING:
    from fp8lint.cache import Cache, Dependency, Probe
    from fp8lint.config import Resolver
    from fp8lint.model import Fp8Site
    from fp8lint.rules.base import Rule
    from fp8lint.sources.base import SourceFile

_T = TypeVar("_T")

# The prefilter: a file that names none of these cannot hold FP8 settings.  The first words
# match in any case, the others as written: `msamp` in any case would catch every
# `RandomSampler`.  Substring tests on a lowered copy run ~7x faster than one (?i) regex.
PREFILTER_ANY_CASE = (b"fp8", b"float8", b"delayedscaling", b"nvfp4")  # as in `mentions_fp8`
PREFILTER_EXACT = (b"msamp", b'"mx"')


def mentions_fp8(data: bytes) -> bool:
    """The byte-level prefilter (UTF-8 and ASCII-compatible text).  Written out rather than
    looping over the word lists: this runs on every file of a tree."""
    if b"msamp" in data or b'"mx"' in data:
        return True
    low = data.lower()
    return b"fp8" in low or b"float8" in low or b"delayedscaling" in low or b"nvfp4" in low


def mentions_fp8_text(text: str) -> bool:
    """The prefilter on decoded text (files in UTF-16 or UTF-32)."""
    return mentions_fp8(text.encode("utf-8", errors="surrogatepass"))


SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env"})
# Larger files are not read.  4 MiB is far above any real config or recipe file and bounds the
# worst case: a 4 MiB Python file dense with recipes takes ~20 s and ~1 GB (16 MiB: ~70 s and
# 3.5 GB; YAML and JSON ~7 s and ~350 MB per 4 MiB), measured in bench/RESULTS.md.
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_FILE_TIMEOUT = 60.0  # seconds for one file's parse and rules; 0: no limit
_BOMS = (  # longest first: the UTF-32 LE mark starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class Selection:
    """Which rules run, ruff-style: `select` is the base, then `extend_select`, then `ignore`.

    Entries are codes, code prefixes (`FP81`), rule names, or `ALL`.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def enabled(self, code: str, name: str, default: bool) -> bool:
        def hit(patterns: Iterable[str]) -> bool:
            for p in patterns:
                p = p.strip()
                if p.upper() == "ALL" or code.startswith(p.upper()) or p.lower() == name:
                    return True
            return False

        on = hit(self.select) if self.select is not None else default
        if hit(self.extend_select):
            on = True
        if hit(self.ignore):
            on = False
        return on


@dataclass
class RunSettings:
    selection: Selection = field(default_factory=Selection)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> option -> value
    max_bytes: int = DEFAULT_MAX_BYTES
    severity: Mapping[str, Severity] = field(default_factory=dict)  # code -> overridden level
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    # the fields above that the command line set (`max_bytes`, `file_timeout`): they win over
    # the configuration files; otherwise each file's closest configuration decides
    command_line: frozenset[str] = frozenset()


@dataclass(frozen=True)
class FixMode:
    """`--fix` (write), `--diff` (write=False), with or without unsafe fixes."""

    unsafe: bool = False
    write: bool = True


@dataclass
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_seen: int = 0
    files_parsed: int = 0
    fixed: list[Diagnostic] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    fix_failures: list[tuple[str, str]] = field(default_factory=list)


# --------------------------------------------------------------------------- discovery


Excluder = Callable[[str, bool], bool]


def discover(
    paths: Iterable[str], excluded: Excluder | None = None, force_exclude: bool = False
) -> Iterator[tuple[str, bool]]:
    """(path, named explicitly) for every file to lint, in a stable order.  `excluded` prunes
    configured exclusions while walking; a file named explicitly is linted anyway unless
    `force_exclude` (what pre-commit needs, since it names every file)."""
    for root in paths:
        if os.path.isdir(root):
            if excluded is not None and force_exclude and excluded(root, True):
                continue
            yield from _walk(root, excluded)
        elif excluded is None or not force_exclude or not excluded(root, True):
            yield root, True


def _walk(top: str, excluded: Excluder | None = None) -> Iterator[tuple[str, bool]]:
    ignores: list[tuple[str, Any]] = []  # (directory, PathSpec) for each .gitignore seen
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        ignores = [(d, s) for d, s in ignores if _is_within(dirpath, d)]
        if ".gitignore" in filenames:
            spec = _read_gitignore(os.path.join(dirpath, ".gitignore"))
            if spec is not None:
                ignores.append((dirpath, spec))
        keep = []
        for d in sorted(dirnames):
            full = os.path.join(dirpath, d)
            if (
                d.startswith(".")
                or d in SKIP_DIRS
                or os.path.exists(os.path.join(full, "pyvenv.cfg"))
            ):
                continue
            if _ignored(full + "/", ignores) or (excluded is not None and excluded(full, False)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            if name.startswith(".") or source_for(name) is None or _ignored(full, ignores):
                continue
            if excluded is not None and excluded(full, False):
                continue
            yield full, False


def _is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _read_gitignore(path: str) -> Any:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    import pathspec

    return pathspec.PathSpec.from_lines("gitwildmatch", lines)


def _ignored(path: str, ignores: list[tuple[str, Any]]) -> bool:
    for directory, spec in ignores:
        rel = os.path.relpath(path.rstrip("/"), directory).replace(os.sep, "/")
        if path.endswith("/"):
            rel += "/"
        if spec.match_file(rel):
            return True
    return False


# --------------------------------------------------------------------------- reading


class FileProblem(LocatedError):
    """A file that cannot be read (missing, binary, wrong encoding, too large)."""


@dataclass(frozen=True)
class Decoded:
    """A file's text and how to write it back byte-for-byte: codec and byte-order mark."""

    text: str
    encoding: str = "utf-8"
    bom: bytes = b""


def read_text(path: str, max_bytes: int) -> str | None:
    decoded = read_file(path, max_bytes)
    return decoded.text if decoded is not None else None


def read_file(path: str, max_bytes: int) -> Decoded | None:
    """The decoded file, None when it cannot hold FP8 settings (prefilter)."""
    return decode(read_bytes(path, max_bytes)[0])


def read_bytes(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """A file's bytes (at most `max_bytes`) and its stat, or a FileProblem."""
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(path)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or device named like a config
            raise FileProblem("not a regular file (pipe, socket or device): not read")
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except IsADirectoryError:
        raise FileProblem("is a directory, not a file") from None
    except FileNotFoundError:
        raise FileProblem("no such file (or a dangling symbolic link)") from None
    except PermissionError:
        raise FileProblem("permission denied") from None
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise FileProblem(
            f"file too large: over {human_size(max_bytes)} (not read; raise the limit with "
            "--max-file-size or `max-file-size`)"
        )
    return data, info


def human_size(n: int) -> str:
    """`16 MiB`, `512 KiB`, `1.9 MiB (2000000 bytes)`, `100 bytes`: never more than `n`."""
    for factor, unit in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= factor:
            if n % factor == 0:
                return f"{n // factor} {unit}"
            return f"{n * 10 // factor / 10:.1f} {unit} ({n} bytes)"
    return f"{n} byte{'s' if n != 1 else ''}"


def decode(data: bytes) -> Decoded | None:
    """Decoded text, None when the bytes cannot hold FP8 settings (prefilter)."""
    bom, encoding = next(((b, enc) for b, enc in _BOMS if data.startswith(b)), (b"", "utf-8"))
    if encoding == "utf-8":
        if not mentions_fp8(data):
            return None
        if b"\0" in data[:8192]:
            raise FileProblem("binary content (NUL bytes): not a text config file")
    body = data[len(bom) :]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        col = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FileProblem(
            f"not valid {encoding.upper()} text (byte 0x{body[exc.start]:02x})", line, col
        ) from None
    if encoding != "utf-8" and not mentions_fp8_text(text):
        return None
    return Decoded(text, encoding, bom)


# --------------------------------------------------------------------------- the run


def parse_file(file: SourceFile, kind: str) -> list[Fp8Site]:
    if kind == "yaml":
        from fp8lint.sources.structured import parse_yaml

        return parse_yaml(file)
    if kind == "json":
        from fp8lint.sources.structured import parse_json

        return parse_json(file)
    if kind == "toml":
        from fp8lint.sources.toml_source import parse_toml

        return parse_toml(file)
    if kind == "shell":
        from fp8lint.sources.shell_source import parse_shell

        return parse_shell(file)
    from fp8lint.sources.python_source import parse_python

    return parse_python(file)


_PARSER_MODULES = {
    "yaml": "fp8lint.sources.structured",
    "json": "fp8lint.sources.structured",
    "toml": "fp8lint.sources.toml_source",
    "shell": "fp8lint.sources.shell_source",
    "python": "fp8lint.sources.python_source",
}


def _preload(kind: str) -> None:
    """Import a kind's parser before the clock starts: the one-time import (pydantic) is
    not the time of the first file that needs it."""
    import sys

    name = _PARSER_MODULES.get(kind)
    if name is None or name in sys.modules:
        return
    import importlib

    try:
        importlib.import_module(name)
    except Exception:
        pass  # the same error comes back, reported on the file, when it is parsed


def display_path(path: str) -> str:
    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path)
        except ValueError:
            return path
        return path if rel.startswith("..") else rel
    return os.path.normpath(path)


def lint_text(
    path: str, text: str, kind: str, settings: RunSettings
) -> tuple[list[Diagnostic], list[Fp8Site]]:
    """Diagnostics and sites for one decoded file."""
    from fp8lint.sources.base import ParseError, SourceFile

    file = SourceFile(path, text)
    try:
        sites = parse_file(file, kind)
    except ParseError as exc:
        return [_problem(path, exc.message, exc.line, exc.column)], []
    except RecursionError:
        return [_problem(path, "nesting too deep to read")], []
    from fp8lint import suppress

    diags = suppress.apply(file, apply_rules(sites, settings, file), settings.selection, kind)
    if settings.severity:
        diags = [
            replace(d, severity=settings.severity[d.code]) if d.code in settings.severity else d
            for d in diags
        ]
    return diags, sites


def apply_rules(sites: list[Fp8Site], settings: RunSettings, file: SourceFile) -> list[Diagnostic]:
    if not sites:
        return []
    from fp8lint.fixes import plan_to_fix
    from fp8lint.rules import all_rules

    out: list[Diagnostic] = []
    for rule_cls in all_rules():
        if not settings.selection.enabled(rule_cls.code, rule_cls.name, rule_cls.default_enabled):
            continue
        rule = rule_cls()
        options = rule_cls.option_defaults()
        options.update(settings.options.get(rule_cls.code, {}))
        for index, site in enumerate(sites):
            for f in rule.check(site, options):
                fix = plan_to_fix(file, site, index, f.fix) if f.fix is not None else None
                d = _diagnostic(rule, f, fix, file)
                if len(site.layers) > 1:
                    d = replace(
                        d, message=f"{d.message} [effective config: {' > '.join(site.layers)}]"
                    )
                out.append(d)
    return _dedupe(out)


def _diagnostic(rule: Rule, f: Any, fix: Fix | None, file: SourceFile) -> Diagnostic:
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


def _problem(path: str, message: str, line: int = 1, column: int = 1) -> Diagnostic:
    code, name = PARSE_ERROR
    return Diagnostic(
        code, name, Severity.ERROR, message, path, line, column, line, column + 1, key=message
    )


def run(
    paths: Iterable[str],
    cli: RunSettings,
    fix: FixMode | None = None,
    configs: Resolver | None = None,
    force_exclude: bool = False,
    cache: Cache | None = None,
) -> RunResult:
    """Lint (or fix) every file under `paths`.  `cli` holds what the command line said; each
    file's settings are its closest configuration file's, with the command line on top.
    `cache` (when checking, never when fixing) serves and stores per-file results."""
    if fix is not None:
        cache = None
    result = RunResult()
    jobs: list[ReadJob] = []
    probes: list[Probe | None] = []
    per_file = SettingsCache(cli, configs)
    shown_of = _DisplayPaths()
    for path, explicit in discover(paths, per_file.excluded if configs else None, force_exclude):
        settings = per_file.settings(path, explicit)
        parse_enabled = settings.selection.enabled(PARSE_ERROR[0], PARSE_ERROR[1], True)
        shown = display_path(path) if explicit else shown_of(path)
        kind = source_for(path)
        if kind is None:
            if explicit and not os.path.exists(path):
                kind = "missing"
            elif explicit and os.path.isdir(path):
                kind = "dir"
            else:
                continue
        result.files_seen += 1
        if kind in ("missing", "dir"):
            if parse_enabled:
                message = (
                    "no such file or directory"
                    if kind == "missing"
                    else ("is a directory, not a file")
                )
                result.diagnostics.append(_problem(shown, message))
            continue
        if fix is not None:
            try:
                decoded = read_file(path, settings.max_bytes)
            except FileProblem as exc:
                if parse_enabled:
                    result.diagnostics.append(_problem(shown, exc.message, exc.line, exc.column))
                continue
            if decoded is None:
                continue
            result.files_parsed += 1
            work = partial(_fix_one, path, shown, decoded, kind, settings, fix, result)
            result.diagnostics.extend(_kept(_guarded(shown, work), parse_enabled))
            continue
        probe = None if cache is None else _quietly(partial(cache.probe, path, shown, settings))
        if probe is not None and probe.hit:  # unchanged since a run that stored it
            if probe.diagnostics is not None:
                result.files_parsed += 1
                result.diagnostics.extend(probe.diagnostics)
            continue
        expected = probe.entry[3] if probe is not None and probe.entry is not None else None
        jobs.append(
            ReadJob(path, shown, kind, settings, parse_enabled, probe is not None, expected)
        )
        probes.append(probe)
    for job, probe, outcome in zip(jobs, probes, _check_all(jobs), strict=True):
        if cache is not None and probe is not None and outcome.facts is not None:
            if _quietly(partial(cache.confirm_facts, probe, *outcome.facts)) is None:
                probe = None
        if outcome.same:  # the bytes are the stored ones: the stored findings stand
            if probe is not None and probe.hit:
                if probe.diagnostics is not None:
                    result.files_parsed += 1
                    result.diagnostics.extend(probe.diagnostics)
                continue
            outcome = _check_job(replace(job, expected=None))  # a dependency changed
        result.files_parsed += outcome.parsed
        result.diagnostics.extend(outcome.diagnostics)
        if cache is not None and probe is not None and outcome.cacheable:
            stored = outcome.diagnostics if outcome.parsed else None
            _quietly(partial(cache.store, probe, stored, outcome.dependencies or ()))
    if cache is not None:
        _quietly(cache.save)
    # a finding about a value in file A can come from linting A and from a script that
    # merges A: report it once
    seen: set[tuple[str, str, int, int]] = set()
    unique = []
    for d in sorted(result.diagnostics, key=lambda d: (len(d.message), d.sort_key())):
        ident = (d.code, d.path, d.line, d.column)
        if ident not in seen:
            seen.add(ident)
            unique.append(d)
    result.diagnostics = sorted(unique, key=Diagnostic.sort_key)
    return result


POOL_MIN_FILES = 16  # below this, starting worker processes costs more than it saves
# from this many files on, worker processes read and prefilter too, not only parse
READ_POOL_MIN_FILES = 256


@dataclass(frozen=True)
class ReadJob:
    """One file for `check`: read, prefilter, lint.  `record`: report the bytes' fingerprint
    and hash and the files linting read, for the cache; `expected`: the hash the cache holds
    (equal bytes are not linted again)."""

    path: str
    shown: str
    kind: str
    settings: RunSettings
    parse_enabled: bool
    record: bool = False
    expected: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What checking one file gave: findings, whether it passed the prefilter, and for the
    cache the file's facts (fingerprint, trusted, sha256) and the files it read (None: not to
    be cached, e.g. a timeout)."""

    diagnostics: list[Diagnostic]
    parsed: bool = False
    facts: tuple[list[int], bool, str] | None = None
    dependencies: list[Dependency] | None = None
    same: bool = False

    @property
    def cacheable(self) -> bool:
        return self.dependencies is not None


def _check_job(job: ReadJob) -> Outcome:
    """Read, prefilter and lint one file; any problem is an FP8001 for that file."""
    read = _read_job(job)
    if isinstance(read, Outcome):
        return read
    decoded, facts = read
    diags, deps = _lint_job(
        (job.shown, decoded.text, job.kind, job.settings, job.parse_enabled, job.record)
    )
    return Outcome(diags, True, facts, deps)


def _read_job(
    job: ReadJob,
) -> Outcome | tuple[Decoded, tuple[list[int], bool, str] | None]:
    """The decoded file (and the cache's facts about it), or the outcome that ends it here:
    unreadable, no FP8 words, or the bytes the cache already holds."""
    facts: tuple[list[int], bool, str] | None = None
    try:
        read_at = time.time_ns()
        data, info = read_bytes(job.path, job.settings.max_bytes)
        if job.record:
            from fp8lint.cache import fingerprint, sha256, trusted

            facts = (fingerprint(info), trusted(info, read_at), sha256(data))
            if job.expected is not None and facts[2] == job.expected:
                return Outcome([], facts=facts, same=True)
        decoded = decode(data)
    except FileProblem as exc:
        problem = [_problem(job.shown, exc.message, exc.line, exc.column)]
        return Outcome(problem if job.parse_enabled else [], facts=facts)
    if decoded is None:
        return Outcome([], facts=facts, dependencies=[])
    return decoded, facts


def _workers() -> int:
    return int(os.environ.get("FP8LINT_WORKERS") or min(os.cpu_count() or 1, 8))


def _check_all(jobs: list[ReadJob]) -> list[Outcome]:
    """Check every file, in job order.  Many files: worker processes read, prefilter and lint
    them (the prefilter's scan is most of a large run).  Fewer: this process reads them, and
    the ones that pass the prefilter go to workers when there are enough (`_lint_all`)."""
    workers = _workers()
    if workers > 1 and len(jobs) >= READ_POOL_MIN_FILES:
        from concurrent.futures import ProcessPoolExecutor

        chunk = max(1, min(64, len(jobs) // (workers * 4)))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(_check_job, jobs, chunksize=chunk))
    reads = [_read_job(job) for job in jobs]
    todo = [
        (i, job, r)
        for i, (job, r) in enumerate(zip(jobs, reads, strict=True))
        if not isinstance(r, Outcome)
    ]
    lint_jobs = [
        (job.shown, r[0].text, job.kind, job.settings, job.parse_enabled, job.record)
        for _i, job, r in todo
    ]
    out: list[Outcome] = [r if isinstance(r, Outcome) else Outcome([]) for r in reads]
    for (i, _job, r), (diags, deps) in zip(todo, _lint_all(lint_jobs), strict=True):
        out[i] = Outcome(diags, True, r[1], deps)
    return out


class _DisplayPaths:
    """`display_path` for files found by walking a directory, computed once per directory
    (a `relpath` per file is measurable on a 20,000-file tree)."""

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        head, tail = os.path.split(path)
        shown_dir = self._dirs.get(head)
        if shown_dir is None:
            shown_dir = self._dirs[head] = display_path(head) if head else "."
        return tail if shown_dir == "." else os.path.join(shown_dir, tail)


# one file for `_lint_job`: shown path, text, kind, settings, FP8001 enabled, record what it
# reads besides itself (for the cache)
Job = tuple[str, str, str, RunSettings, bool, bool]


def _quietly(work: Callable[[], _T]) -> _T | None:
    """A cache operation: whatever goes wrong there is a miss, never a failed run."""
    try:
        return work()
    except Exception:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return None


def _guarded(shown: str, work: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """A bug in fp8lint on one file becomes an FP8001 for that file, not a stopped run."""
    try:
        return work()
    except Exception as exc:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return [_internal_error(shown, exc)]


def _internal_error(shown: str, exc: Exception) -> Diagnostic:
    return _problem(shown, f"internal error while checking this file: {type(exc).__name__}: {exc}")


class _Timeout(BaseException):
    """Raised by SIGALRM inside a file's parse and rules.  A BaseException, so that no
    `except Exception` on the way can swallow it."""


def timeout_message(seconds: float) -> str:
    return f"checking this file took longer than {seconds:g} s; skipped (raise --file-timeout)"


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _Timeout in the block after `seconds` (0: no limit), with a real-time interval
    timer; a no-op where there is no SIGALRM or outside the main thread.  The previous
    handler comes back afterwards, and a timer that was running gets the time it had left."""
    import signal

    if seconds <= 0 or not hasattr(signal, "setitimer") or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Timeout

    try:
        previous = signal.signal(signal.SIGALRM, expire)
    except ValueError:  # not the main thread of the main interpreter
        yield
        return
    started = time.monotonic()
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
        if old_delay > 0:
            left = old_delay - (time.monotonic() - started)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-6), old_interval)


def _bounded(
    shown: str, seconds: float, work: Callable[[], list[Diagnostic]]
) -> tuple[list[Diagnostic], bool]:
    """(findings, complete): `work` under the time limit, a timeout or an internal error
    becoming an FP8001 (and `complete` False: such a result is not cached)."""
    try:
        with _time_limit(seconds):
            return work(), True
    except _Timeout:
        return [_problem(shown, timeout_message(seconds))], False
    except Exception as exc:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return [_internal_error(shown, exc)], False


def _kept(diags: list[Diagnostic], parse_enabled: bool) -> list[Diagnostic]:
    return [d for d in diags if d.code != PARSE_ERROR[0] or parse_enabled]


def _lint_job(job: Job) -> tuple[list[Diagnostic], list[Dependency] | None]:
    """One file's findings, and the files it read besides itself when recording was asked
    (None when it was not, or when the result must not be cached)."""
    from fp8lint.cache import recording

    shown, text, kind, settings, parse_enabled, record = job
    _preload(kind)
    work = partial(_first, lint_text, shown, text, kind, settings)
    with recording(record) as read:
        diags, complete = _bounded(shown, settings.file_timeout, work)
    return _kept(diags, parse_enabled), (list(read) if complete and read is not None else None)


def _first(fn: Callable[..., tuple[list[Diagnostic], Any]], *args: Any) -> list[Diagnostic]:
    return fn(*args)[0]


def _lint_all(jobs: list[Job]) -> Iterator[tuple[list[Diagnostic], list[Dependency] | None]]:
    """Lint the files that passed the prefilter: in worker processes when there are many and
    more than one core (`FP8LINT_WORKERS` sets the number; 1 keeps everything in-process)."""
    workers = _workers()
    if workers <= 1 or len(jobs) < POOL_MIN_FILES:
        for job in jobs:
            yield _lint_job(job)
        return
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, len(jobs) // (workers * 4))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        yield from pool.map(_lint_job, jobs, chunksize=chunk)


class SettingsCache:
    """Per-file settings: configuration (closest file) merged with the command line."""

    def __init__(self, cli: RunSettings, configs: Resolver | None) -> None:
        self.cli = cli
        self.configs = configs
        self._cache: dict[tuple[int, tuple[str, ...]], RunSettings] = {}

    def excluded(self, path: str, explicit: bool) -> bool:
        from fp8lint.config import matches

        assert self.configs is not None
        cfg = self.configs.for_path(path)
        return matches(cfg.exclude + cfg.extend_exclude, path, cfg.root)

    def _selection(self, cfg: Any, ignored: tuple[str, ...]) -> Selection:
        """Layers as in ruff: a `select` on the command line starts the set afresh, so the
        file's select/extend-select/ignore drop out; per-file ignores always apply."""
        cli = self.cli.selection
        if cli.select is not None:
            return Selection(cli.select, cli.extend_select, cli.ignore + ignored)
        return Selection(
            cfg.select, cfg.extend_select + cli.extend_select, cfg.ignore + ignored + cli.ignore
        )

    def settings(self, path: str, explicit: bool = True) -> RunSettings:
        """The settings for `path`; `explicit` False: a file found by walking a folder."""
        if self.configs is None:
            return self.cli
        from fp8lint.config import matches

        cfg = self.configs.for_file(path) if not explicit else self.configs.for_path(path)
        ignored = tuple(
            code
            for pattern, codes in cfg.per_file_ignores
            if matches((pattern,), path, cfg.root)
            for code in codes
        )
        key = (id(cfg), ignored)
        if key not in self._cache:
            cli = self.cli
            options = {c: dict(o) for c, o in cfg.options.items()}
            for code, values in cli.options.items():
                options.setdefault(code, {}).update(values)
            given = cli.command_line
            self._cache[key] = RunSettings(
                selection=self._selection(cfg, ignored),
                options=options,
                max_bytes=cli.max_bytes
                if "max_bytes" in given or cfg.max_file_size is None
                else cfg.max_file_size,
                severity={**cfg.severity, **cli.severity},
                file_timeout=cli.file_timeout
                if "file_timeout" in given or cfg.file_timeout is None
                else cfg.file_timeout,
                command_line=given,
            )
        return self._cache[key]


def _fix_one(
    path: str,
    shown: str,
    decoded: Decoded,
    kind: str,
    settings: RunSettings,
    mode: FixMode,
    result: RunResult,
) -> list[Diagnostic]:
    """Fix one file (or diff it); returns the findings that remain."""
    import difflib

    from fp8lint.fixes import fix_text, write_atomic

    _preload(kind)
    try:
        with _time_limit(settings.file_timeout):  # the file is written after, never during
            outcome = fix_text(shown, decoded.text, kind, settings, mode.unsafe)
    except _Timeout:
        return [_problem(shown, timeout_message(settings.file_timeout))]
    if outcome.failure is not None:
        result.fix_failures.append((shown, outcome.failure))
    if outcome.changed:
        if mode.write:
            try:
                write_atomic(path, outcome.text, decoded.encoding, decoded.bom)
            except OSError as exc:
                result.fix_failures.append((shown, f"cannot write the fixed file: {exc}"))
                try:
                    with _time_limit(settings.file_timeout):
                        return lint_text(shown, decoded.text, kind, settings)[0]
                except _Timeout:
                    return [_problem(shown, timeout_message(settings.file_timeout))]
        else:
            diff = difflib.unified_diff(
                decoded.text.splitlines(keepends=True),
                outcome.text.splitlines(keepends=True),
                fromfile=shown if os.path.isabs(shown) else f"a/{shown}",
                tofile=shown if os.path.isabs(shown) else f"b/{shown}",
            )
            result.diffs.append("".join(_ensure_newlines(diff)))
        result.fixed.extend(outcome.fixed)
    return outcome.remaining


def _ensure_newlines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        yield line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
