"""The thread libcst's work runs on: legal Python may nest deeper than the default limits (an
8000-term `and`, 99 nested `if`s), and libcst's native parser and its visitors recurse once
per level of the tree."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

_STACK = 256 * 1024 * 1024  # bytes of stack for the thread that runs libcst
_RECURSION = 100_000


def deep(work: Callable[[], _T]) -> _T:
    """`work()` on a thread with a large stack and a raised recursion limit: libcst's native
    parser and its visitors recurse once per level of the tree.  One such thread per process
    serves every file: a thread per file left each one's malloc arena behind, and a worker's
    memory grew with the number of files it parsed.  Falls back to the calling thread when no
    such thread can be made."""
    if getattr(_local, "inside", False):
        return work()
    runner = _deep_thread()
    if runner is None:
        return work()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION))
    try:
        ok, value = runner.call(work)
    finally:
        sys.setrecursionlimit(limit)
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


class _DeepThread:
    """The long-lived thread behind `deep`: it takes one piece of work at a time."""

    def __init__(self) -> None:
        import queue

        self.pid = os.getpid()  # a forked worker makes its own: threads do not survive fork
        self.abandoned = False  # its caller stopped waiting (a timeout, Ctrl-C): never reused
        self._todo: queue.SimpleQueue[Callable[[], Any]] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        old_size = threading.stack_size(_STACK)
        try:
            thread = threading.Thread(target=self._serve, name="fp8lint-libcst", daemon=True)
            thread.start()
        finally:
            threading.stack_size(old_size)

    def _serve(self) -> None:
        _local.inside = True
        while True:
            work = self._todo.get()
            try:
                self._done.put((True, work()))
            except BaseException as exc:  # handed to the calling thread
                self._done.put((False, exc))
            if self.abandoned:
                return

    def call(self, work: Callable[[], Any]) -> tuple[bool, Any]:
        """`work`'s result on this thread.  An exception while waiting (the file's time limit,
        Ctrl-C) leaves the work running there with nobody to take its result: the thread is
        abandoned and the next call makes a new one."""
        self._todo.put(work)
        try:
            return self._done.get()
        except BaseException:
            self.abandoned = True
            raise


_deep: list[_DeepThread] = []  # this process's deep thread, once made
_deep_unavailable: list[bool] = []


def _deep_thread() -> _DeepThread | None:
    if _deep and _deep[0].pid == os.getpid() and not _deep[0].abandoned:
        return _deep[0]
    if _deep_unavailable:
        return None
    try:
        made = _DeepThread()
    except (ValueError, RuntimeError, MemoryError):
        _deep_unavailable.append(True)
        return None
    _deep[:] = [made]
    return made


_local = threading.local()
