"""The run: walk the paths, pick each file's settings, serve what the cache holds, read,
prefilter and lint the rest (in worker processes when there are many), or fix them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from itertools import islice

from fp8lint.diagnostics import PARSE_ERROR, Diagnostic
from fp8lint.documents import HEAD_BYTES, KINDS, kind_for
from fp8lint.engine.files import (
    Decoded,
    DisplayPaths,
    FileProblem,
    decode,
    discover,
    display_path,
    file_kind,
    read_bytes,
    too_large,
)
from fp8lint.engine.limits import (
    Timeout,
    bounded,
    internal_error,
    quietly,
    time_limit,
    timeout_message,
)
from fp8lint.engine.lint import fix_text, lint_checked, lint_text, preload, problem
from fp8lint.engine.per_file import SettingsCache
from fp8lint.engine.workers import Progress, Terminated, WorkerPool, in_workers, worker_count
from fp8lint.records import field, record, replace
from fp8lint.settings import FixMode, PathRules, RunSettings

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

    from fp8lint.engine.cache import Cache, Probe
    from fp8lint.engine.cache_keys import Dependency
    from fp8lint.engine.config import Resolver
    from fp8lint.fixes import FixResult


@record
class RunResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files_seen: int = 0
    files_parsed: int = 0
    fixed: list[Diagnostic] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    fix_failures: list[tuple[str, str]] = field(default_factory=list)
    # files named on the command line that fp8lint does not read: (shown path, why)
    not_read: list[tuple[str, str]] = field(default_factory=list)
    written: list[str] = field(default_factory=list)  # files `--fix` changed, in order
    interrupted: bool = False  # Ctrl-C: the findings are those of the files done so far
    terminated: bool = False  # the interrupt was SIGTERM (exit 143, not 130)
    files_done: int = 0  # files whose result is in (all of them unless interrupted)


UNKNOWN_STDIN = "not checked: its syntax is none fp8lint reads; name the file with --stdin-filename"
NOT_A_CONFIG = (
    "not checked: fp8lint reads only "
    + ", ".join(sorted(KINDS))
    + " files and shell scripts without an extension"
)


def selected_files(
    paths: Iterable[str],
    configs: Resolver | None = None,
    force_exclude: bool = False,
    rules: PathRules | None = None,
) -> tuple[list[str], list[tuple[str, str]]]:
    """What `check` would read under `paths` (shown paths, in its order) and the files named
    on the command line that it would not: `fp8lint check --show-files`, which the GitHub
    Action uses to pick the changed files to lint."""
    per_file = SettingsCache(RunSettings(), configs, rules)
    excluded = per_file.excluded if configs is not None or per_file.paths.given else None
    shown_of = DisplayPaths()
    chosen: list[str] = []
    skipped: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    for path, explicit in discover(paths, excluded, force_exclude, links):
        shown = display_path(path) if explicit else shown_of(path)
        if explicit and not os.path.exists(path):
            skipped.append((shown, "no such file or directory"))
        elif file_kind(path) is not None:
            chosen.append(shown)
        elif explicit:
            skipped.append((shown, NOT_A_CONFIG))
    skipped += [(display_path(path), why) for path, why in links]
    return chosen, skipped


def run(
    paths: Iterable[str],
    cli: RunSettings,
    fix: FixMode | None = None,
    configs: Resolver | None = None,
    force_exclude: bool = False,
    cache: Cache | None = None,
    rules: PathRules | None = None,
) -> RunResult:
    """Lint (or fix) every file under `paths`.  `cli` holds what the command line said; each
    file's settings are its closest configuration file's, with the command line on top.
    `cache` (when checking, never when fixing) serves and stores per-file results."""
    if fix is not None:
        cache = None
    result = RunResult()
    try:
        _run(result, paths, cli, fix, configs, force_exclude, cache, rules)
    except KeyboardInterrupt as exc:
        result.interrupted = True
        result.terminated = isinstance(exc, Terminated)
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


def _run(
    result: RunResult,
    paths: Iterable[str],
    cli: RunSettings,
    fix: FixMode | None,
    configs: Resolver | None,
    force_exclude: bool,
    cache: Cache | None,
    rules: PathRules | None,
) -> None:
    per_file = SettingsCache(cli, configs, rules)
    excluded = per_file.excluded if configs is not None or per_file.paths.given else None
    links: list[tuple[str, str]] = []
    try:
        _run_found(result, discover(paths, excluded, force_exclude, links), per_file, fix, cache)
    finally:  # a link out of the repository is said once, like a file named but not read
        result.not_read += [(display_path(path), why) for path, why in links]


def _run_found(
    result: RunResult,
    found: Iterable[tuple[str, bool]],
    per_file: SettingsCache,
    fix: FixMode | None,
    cache: Cache | None,
) -> None:
    fix_jobs: list[FixJob] = []
    stream = _jobs(result, found, per_file, fix, cache, fix_jobs)
    if fix is not None:
        for _ in stream:  # every file's bytes are in `fix_jobs` (only files that mention FP8)
            pass
        _fix_all(fix_jobs, fix, result)
        return
    for job, probe, outcome in _check_all(stream):
        result.files_done += 1
        if cache is not None and probe is not None and outcome.facts is not None:
            if quietly(partial(cache.confirm_facts, probe, *outcome.facts)) is None:
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
            quietly(partial(cache.store, probe, stored, outcome.dependencies or ()))
    if cache is not None:
        quietly(cache.save)


Checked = tuple["ReadJob", "Probe | None"]


def _jobs(
    result: RunResult,
    found: Iterable[tuple[str, bool]],
    per_file: SettingsCache,
    fix: FixMode | None,
    cache: Cache | None,
    fix_jobs: list[FixJob],
) -> Iterator[Checked]:
    """Each discovered file, as it is found: what ends here (a missing path, a directory, a
    cache hit, a file to fix) goes into `result` or `fix_jobs`; a file to read and lint is
    yielded with its cache probe.  Nothing here holds the whole tree."""
    shown_of = DisplayPaths()
    for path, explicit in found:
        settings = per_file.settings(path, explicit)
        parse_enabled = settings.selection.enabled(PARSE_ERROR[0], PARSE_ERROR[1], True)
        shown = display_path(path) if explicit else shown_of(path)
        kind = file_kind(path)
        if kind is None:
            if explicit and not os.path.exists(path):
                kind = "missing"
            elif explicit and os.path.isdir(path):
                kind = "dir"
            else:
                if explicit:
                    result.not_read.append((shown, NOT_A_CONFIG))
                continue
        result.files_seen += 1
        if kind in ("missing", "dir"):
            result.files_done += 1
            if parse_enabled:
                message = (
                    "no such file or directory"
                    if kind == "missing"
                    else ("is a directory, not a file")
                )
                result.diagnostics.append(problem(shown, message))
            continue
        if fix is not None:
            try:
                data, info = read_bytes(path, settings.max_bytes)
                decoded = decode(data)
            except FileProblem as exc:
                result.files_done += 1
                if parse_enabled:
                    result.diagnostics.append(problem(shown, exc.message, exc.line, exc.column))
                continue
            if decoded is None:
                result.files_done += 1
                continue
            result.files_parsed += 1
            from fp8lint.fixes import stamp

            fix_jobs.append(
                FixJob(path, shown, data, decoded, kind, settings, parse_enabled, stamp(info))
            )
            continue
        probe = None if cache is None else quietly(partial(cache.probe, path, shown, settings))
        if probe is not None and probe.hit:  # unchanged since a run that stored it
            result.files_done += 1
            if probe.diagnostics is not None:
                result.files_parsed += 1
                result.diagnostics.extend(probe.diagnostics)
            continue
        expected = probe.entry[3] if probe is not None and probe.entry is not None else None
        job = ReadJob(path, shown, kind, settings, parse_enabled, probe is not None, expected)
        yield job, probe


POOL_MIN_FILES = 16  # below this, starting worker processes costs more than it saves
# from this many files on, worker processes read and prefilter too, not only parse
READ_POOL_MIN_FILES = 256


def run_stdin(
    data: bytes,
    name: str | None,
    cli: RunSettings,
    fix: FixMode | None = None,
    configs: Resolver | None = None,
    force_exclude: bool = False,
    rules: PathRules | None = None,
) -> tuple[RunResult, bytes | None]:
    """`check -` with `--stdin-filename NAME`: the text on standard input, linted as the file
    NAME would be (its kind, its settings, NAME in the findings); without a NAME (None), as
    `-` in the working directory, its kind guessed from the text (`documents.guess`).  With
    a fix mode, the second value is the fixed text (the input itself when nothing changed),
    to go to stdout as ruff does; None when the input was not checked."""
    result = RunResult()
    per_file = SettingsCache(cli, configs, rules)
    if name is None:
        from fp8lint.documents.guess import guess_kind

        name, kind = "-", guess_kind(data[: cli.max_bytes])
        why = UNKNOWN_STDIN
    else:
        kind, why = kind_for(name, data[:HEAD_BYTES]), NOT_A_CONFIG
    shown = display_path(name)
    if force_exclude and per_file.excluded(name, True):
        return result, data
    if kind is None:
        result.not_read.append((shown, why))
        return result, None
    settings = per_file.settings(name, True)
    parse_enabled = settings.selection.enabled(PARSE_ERROR[0], PARSE_ERROR[1], True)
    result.files_seen = 1
    try:
        if len(data) > settings.max_bytes:
            raise FileProblem(too_large(settings.max_bytes))
        decoded = decode(data)
    except FileProblem as exc:
        found = [problem(shown, exc.message, exc.line, exc.column)]
        result.diagnostics = _kept(found, parse_enabled)
        return result, None
    if decoded is None:
        return result, data
    result.files_parsed = 1
    preload(kind)
    if fix is None:
        work = partial(_first, lint_checked, shown, decoded.text, kind, settings)
        result.diagnostics = _kept(bounded(shown, settings.file_timeout, work)[0], parse_enabled)
        return result, None
    try:
        with time_limit(settings.file_timeout):
            outcome = fix_text(shown, decoded.text, kind, settings, fix.unsafe)
    except Timeout:
        result.diagnostics = [problem(shown, timeout_message(settings.file_timeout))]
        return result, data
    if outcome.failure is not None:
        result.fix_failures.append((shown, outcome.failure))
    result.fixed = list(outcome.fixed)
    result.diagnostics = _kept(outcome.remaining, parse_enabled)
    if outcome.changed and not fix.write:
        result.diffs.append(_diff(shown, decoded.text, outcome.text))
    return result, decoded.bom + outcome.text.encode(decoded.encoding)


@record(frozen=True)
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


@record(frozen=True)
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
            from fp8lint.engine.cache_keys import fingerprint, sha256, trusted

            facts = (fingerprint(info), trusted(info, read_at), sha256(data))
            if job.expected is not None and facts[2] == job.expected:
                return Outcome([], facts=facts, same=True)
        decoded = decode(data)
    except FileProblem as exc:
        found = [problem(job.shown, exc.message, exc.line, exc.column)]
        return Outcome(found if job.parse_enabled else [], facts=facts)
    if decoded is None:
        return Outcome([], facts=facts, dependencies=[])
    return decoded, facts


# files discovered ahead of the workers: enough to keep them busy, few enough that memory
# does not grow with the tree (each waiting job is a path, its display path and settings)
BATCH_FILES = 4096


def _check_all(stream: Iterator[Checked]) -> Iterator[tuple[ReadJob, Probe | None, Outcome]]:
    """Check every file, in discovery order, in batches of `BATCH_FILES`.  Many files: worker
    processes read, prefilter and lint them (the prefilter's scan is most of a large run), one
    pool for all batches.  Fewer: this process reads them, and the ones that pass the
    prefilter go to workers when there are enough (`_read_then_lint`, `_lint_all`)."""
    workers = worker_count()
    batch = list(islice(stream, BATCH_FILES))
    with Progress(len(batch)) as progress:
        if workers > 1 and len(batch) >= READ_POOL_MIN_FILES:
            with WorkerPool(workers) as pool:

                def submit(batch: list[Checked]) -> Iterator[Outcome]:
                    chunk = max(1, min(64, len(batch) // (workers * 4)))
                    return pool.imap(_check_job, [job for job, _ in batch], chunk)  # type: ignore[no-any-return]

                outcomes = submit(batch)
                while batch:
                    # the next batch is found and queued while the workers check this one, so
                    # they never wait for discovery; at most two batches are held
                    following = list(islice(stream, BATCH_FILES))
                    progress.grow(len(following))
                    queued = submit(following) if following else iter(())
                    for (job, probe), outcome in zip(batch, outcomes, strict=True):
                        progress.update()
                        yield job, probe, outcome
                    batch, outcomes = following, queued
            return
        while batch:
            done = _read_then_lint([job for job, _ in batch], progress)
            for (job, probe), outcome in zip(batch, done, strict=True):
                yield job, probe, outcome
            batch = list(islice(stream, BATCH_FILES))
            progress.grow(len(batch))


def _read_then_lint(jobs: list[ReadJob], progress: Progress) -> list[Outcome]:
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
    progress.update(len(jobs) - len(todo))
    for (i, _job, r), (diags, deps) in zip(todo, _lint_all(lint_jobs), strict=True):
        out[i] = Outcome(diags, True, r[1], deps)
        progress.update()
    return out


Job = tuple[str, str, str, RunSettings, bool, bool]


def _kept(diags: list[Diagnostic], parse_enabled: bool) -> list[Diagnostic]:
    return [d for d in diags if d.code != PARSE_ERROR[0] or parse_enabled]


def _lint_job(job: Job) -> tuple[list[Diagnostic], list[Dependency] | None]:
    """One file's findings, and the files it read besides itself when recording was asked
    (None when it was not, or when the result must not be cached)."""
    from fp8lint.engine.cache_keys import recording

    shown, text, kind, settings, parse_enabled, record = job
    preload(kind)
    work = partial(_first, lint_checked, shown, text, kind, settings)
    with recording(record) as read:
        diags, complete = bounded(shown, settings.file_timeout, work)
    return _kept(diags, parse_enabled), (list(read) if complete and read is not None else None)


def _first(fn: Callable[..., tuple[list[Diagnostic], Any]], *args: Any) -> list[Diagnostic]:
    return fn(*args)[0]


def _lint_all(jobs: list[Job]) -> Iterator[tuple[list[Diagnostic], list[Dependency] | None]]:
    """Lint the files that passed the prefilter: in worker processes when there are many and
    more than one core (`FP8LINT_WORKERS` sets the number; 1 keeps everything in-process)."""
    workers = worker_count()
    if workers <= 1 or len(jobs) < POOL_MIN_FILES:
        for job in jobs:
            yield _lint_job(job)
        return
    yield from in_workers(_lint_job, jobs, max(1, len(jobs) // (workers * 4)), workers)


@record(frozen=True)
class FixJob:
    """One file for `--fix`/`--diff`: its bytes as read (a file that no longer holds them is
    never written), decoded, and its settings."""

    path: str
    shown: str
    data: bytes
    decoded: Decoded
    kind: str
    settings: RunSettings
    parse_enabled: bool
    read_as: tuple[int, int, int] | None = None  # `fixes.stamp` of the file when read


FixComputed = tuple["FixResult | None", list[Diagnostic]]


def _compute_fix(job: FixJob, unsafe: bool) -> FixComputed:
    """The verified fix loop on one file, under its time limit (in a worker when there are
    many files); a timeout or an internal error is an FP8001 and nothing to write."""
    preload(job.kind)
    try:
        with time_limit(job.settings.file_timeout):  # the file is written after, never during
            return fix_text(job.shown, job.decoded.text, job.kind, job.settings, unsafe), []
    except Timeout:
        return None, [problem(job.shown, timeout_message(job.settings.file_timeout))]
    except Exception as exc:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return None, [internal_error(job.shown, exc)]


def _fix_all(jobs: list[FixJob], mode: FixMode, result: RunResult) -> None:
    """Compute every file's fixes (in worker processes when there are many) and write or
    diff them here, in job order, as each comes back: an interrupt leaves `result.written`
    naming exactly the files already changed."""
    work = partial(_compute_fix, unsafe=mode.unsafe)
    workers = worker_count()
    with Progress(len(jobs), "fixing") as progress:
        if workers > 1 and len(jobs) >= POOL_MIN_FILES:
            computed: Iterable[FixComputed] = in_workers(
                work, jobs, max(1, len(jobs) // (workers * 4)), workers
            )
        else:
            computed = map(work, jobs)
        for job, (outcome, problems) in zip(jobs, computed, strict=False):
            found = problems if outcome is None else _apply_fix(job, outcome, mode, result)
            result.diagnostics.extend(_kept(found, job.parse_enabled))
            result.files_done += 1
            progress.update()


def _apply_fix(
    job: FixJob, outcome: FixResult, mode: FixMode, result: RunResult
) -> list[Diagnostic]:
    """Write (or diff) one file's verified fixes; returns the findings that remain."""
    from fp8lint.fixes import FileChanged, write_atomic

    shown, decoded = job.shown, job.decoded
    if outcome.failure is not None:
        result.fix_failures.append((shown, outcome.failure))
    if not outcome.changed:
        return outcome.remaining
    if mode.write:
        try:
            write_atomic(
                job.path, outcome.text, decoded.encoding, decoded.bom, job.data, job.read_as
            )
        except (OSError, FileChanged) as exc:
            why = (
                "the file changed while it was being fixed; nothing was written (run fp8lint again)"
                if isinstance(exc, FileChanged)
                else f"cannot write the fixed file: {exc}"
            )
            result.fix_failures.append((shown, why))
            try:
                with time_limit(job.settings.file_timeout):
                    return lint_text(shown, decoded.text, job.kind, job.settings)[0]
            except Timeout:
                return [problem(shown, timeout_message(job.settings.file_timeout))]
        result.written.append(shown)
    else:
        result.diffs.append(_diff(shown, decoded.text, outcome.text))
    result.fixed.extend(outcome.fixed)
    return outcome.remaining


def _diff(shown: str, before: str, after: str) -> str:
    import difflib

    diff = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=shown if os.path.isabs(shown) else f"a/{shown}",
        tofile=shown if os.path.isabs(shown) else f"b/{shown}",
    )
    return "".join(_ensure_newlines(diff))


def _ensure_newlines(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        yield line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
