"""Per-file bounds and guards: the time limit (SIGALRM interval timer), and the wrappers that
turn a timeout or a bug on one file into an FP8001 finding for that file, never a stopped run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from fp8lint.diagnostics import Diagnostic
from fp8lint.engine.lint import problem

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _T = TypeVar("_T")


def quietly(work: Callable[[], _T]) -> _T | None:
    """A cache operation: whatever goes wrong there is a miss, never a failed run."""
    try:
        return work()
    except Exception:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return None


def guarded(shown: str, work: Callable[[], list[Diagnostic]]) -> list[Diagnostic]:
    """A bug in fp8lint on one file becomes an FP8001 for that file, not a stopped run."""
    try:
        return work()
    except Exception as exc:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return [internal_error(shown, exc)]


def internal_error(shown: str, exc: Exception) -> Diagnostic:
    return problem(shown, f"internal error while checking this file: {type(exc).__name__}: {exc}")


class Timeout(BaseException):
    """Raised by SIGALRM inside a file's parse and rules.  A BaseException, so that no
    `except Exception` on the way can swallow it."""


def timeout_message(seconds: float) -> str:
    return f"checking this file took longer than {seconds:g} s; skipped (raise --file-timeout)"


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Timeout in the block after `seconds` (0: no limit), with a real-time interval
    timer; a no-op where there is no SIGALRM or outside the main thread.  The previous
    handler comes back afterwards, and a timer that was running gets the time it had left."""
    import signal

    if seconds <= 0 or not hasattr(signal, "setitimer") or not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise Timeout

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


def bounded(
    shown: str, seconds: float, work: Callable[[], list[Diagnostic]]
) -> tuple[list[Diagnostic], bool]:
    """(findings, complete): `work` under the time limit, a timeout or an internal error
    becoming an FP8001 (and `complete` False: such a result is not cached)."""
    try:
        with time_limit(seconds):
            return work(), True
    except Timeout:
        return [problem(shown, timeout_message(seconds))], False
    except Exception as exc:
        if os.environ.get("FP8LINT_DEBUG"):
            raise
        return [internal_error(shown, exc)], False
