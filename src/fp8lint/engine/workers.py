"""Worker processes for large runs, and what a person at the terminal sees meanwhile.

- Results come back in job order, so output never depends on how work was split.
- Ctrl-C stops a run within a second: workers ignore SIGINT (only this process handles it),
  and on an interrupt the pool is terminated rather than drained (a drained pool finished
  every queued file first: 13-30 s on a large tree).  SIGTERM to this process does the same
  while workers run (`Terminated`), with exit status 143.
- Progress on a terminal: a bar on stderr once a run has taken more than 2 s, from tqdm,
  imported only when stderr is a terminal and `CI` is not set, never in piped or CI output.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any, TypeVar

    J = TypeVar("J")
    R = TypeVar("R")

PROGRESS_DELAY_S = 2.0


def worker_count() -> int:
    """`FP8LINT_WORKERS`, else one per core, at most 8."""
    return int(os.environ.get("FP8LINT_WORKERS") or min(os.cpu_count() or 1, 8))


class Terminated(KeyboardInterrupt):
    """SIGTERM while worker processes run: it unwinds like Ctrl-C, so the pool is terminated
    and the run reports what it did.  (Killed by the default action instead, the parent left
    its workers running for the rest of their files, each ending in a BrokenPipeError.)"""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated


def _ignore_interrupts() -> None:
    """A worker: Ctrl-C is the parent's to handle; SIGTERM (the parent's terminate) ends it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):  # and a parent killed outright takes it along
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def in_workers(
    fn: Callable[[J], R], jobs: Iterable[J], chunksize: int, workers: int | None = None
) -> Iterator[R]:
    """`fn` over `jobs` in worker processes, results in job order.  An exception in this
    process while results are awaited (KeyboardInterrupt above all) terminates the workers at
    once, then propagates."""
    with WorkerPool(workers) as pool:
        yield from pool.imap(fn, jobs, chunksize)


class WorkerPool:
    """A process pool that several batches of work can share (`imap` on it keeps job order).
    Leaving normally waits for the workers; leaving by an exception, or abandoning a generator
    suspended inside, terminates them first.  (A class: contextlib is not imported on the
    start-up path.)"""

    def __init__(self, workers: int | None = None) -> None:
        self._workers = workers or worker_count()
        self._pool: Any = None
        self._previous: Any = None  # the SIGTERM handler while the pool is not running

    def __enter__(self) -> Any:
        import multiprocessing

        self._pool = multiprocessing.get_context().Pool(
            self._workers, initializer=_ignore_interrupts
        )
        self._previous = _on_sigterm(_terminated)
        return self._pool

    def __exit__(self, exc_type: object, *rest: object) -> None:
        _on_sigterm(self._previous)
        if exc_type is None:
            self._pool.close()
        else:
            self._pool.terminate()
        self._pool.join()


def _on_sigterm(handler: Any) -> Any:
    """Set the SIGTERM handler, returning the one before; nothing off the main thread (where
    Python cannot set one) or where there is no SIGTERM."""
    import signal
    import threading

    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError, AttributeError):
        return None


class Progress:
    """A progress bar on stderr for `total` files, shown only on a terminal (never when piped
    or under CI), and only once the run has taken more than `PROGRESS_DELAY_S`."""

    def __init__(self, total: int, what: str = "checking", unit: str = "file") -> None:
        self._bar: Any = None
        if total <= 0 or not _interactive():
            return
        try:
            from tqdm import tqdm
        except ImportError:  # a progress bar is a nicety, never a reason to fail
            return
        self._bar = tqdm(
            total=total,
            desc=what,
            unit=unit,
            unit_scale=unit != "file",
            file=sys.stderr,
            delay=PROGRESS_DELAY_S,
            leave=False,
            dynamic_ncols=True,
        )

    def update(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def grow(self, n: int) -> None:
        """`n` more files found: a run that streams its tree learns the total as it goes."""
        if self._bar is not None and n:
            self._bar.total += n
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _interactive() -> bool:
    if os.environ.get("CI") or os.environ.get("FP8LINT_NO_PROGRESS"):
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())
