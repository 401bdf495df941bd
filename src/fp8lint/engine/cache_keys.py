"""What a cache entry is keyed on and checked against: the stat fingerprint and hash of a
file's bytes, the canonical text of its settings, fp8lint's own files, and the other files a
result read (noted while linting, checked before the result is served).

Only os, stat, time, zlib and json are imported here; hashlib only once bytes are hashed.
"""

from __future__ import annotations

import json
import os
import stat
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from fp8lint import __version__

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

    from fp8lint.settings import RunSettings

FORMAT = 3  # of shards and of encoded diagnostics; bump on any change to either
RACY_NS = 2_000_000_000  # a file changed this close to its read is re-hashed next time
DEPENDENCY_LIMIT = 4 * 4 * 1024 * 1024 + 4  # bytes: 4 Mi characters of UTF-8 and a BOM

Fingerprint = list[int]  # size, mtime_ns, ctime_ns, inode
# a file read besides the linted one: absolute path, fingerprint, trusted, sha256 (None for
# both when it could not be read)
Dependency = tuple[str, list[int] | None, bool, str | None]


def fingerprint(st: os.stat_result) -> Fingerprint:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def trusted(st: os.stat_result, read_at_ns: int) -> bool:
    """Whether a matching fingerprint alone may vouch for the bytes read at `read_at_ns`:
    not when the file was changed shortly before (or after: clock skew) that read."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < read_at_ns - RACY_NS


def sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Names, sizes and mtimes of fp8lint's own files: an edited checkout is a new cache.
    The whole package (frameworks, rules through their link, documents), not only `engine`."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts: list[str] = [__version__]
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if entry.name == "__pycache__":
                continue
            try:
                if entry.is_dir():
                    stack.append(entry.path)
                elif entry.name.endswith((".py", ".md")):
                    st = entry.stat()
                    rel = os.path.relpath(entry.path, top)
                    parts.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                continue
    blob = "\n".join(parts).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(blob):08x}{zlib.adler32(blob):08x}{len(parts):x}"


def settings_text(settings: RunSettings) -> str:
    """Canonical JSON of everything in a file's settings that can change its findings.  The
    time limit is not part of it: a result that finished in time does not depend on it."""
    sel = settings.selection
    return json.dumps(
        {
            "select": list(sel.select) if sel.select is not None else None,
            "extend-select": list(sel.extend_select),
            "ignore": list(sel.ignore),
            "options": settings.options,
            "severity": {code: level.value for code, level in settings.severity.items()},
            "max-bytes": settings.max_bytes,
            "target-versions": settings.targets.resolved(),
        },
        sort_keys=True,
        default=repr,
    )


# --------------------------------------------------------------------------- dependencies

_recorded: list[Dependency] | None = None


@contextmanager
def recording(active: bool = True) -> Iterator[list[Dependency] | None]:
    """Collect the files `read_dependency` reads meanwhile (in this process)."""
    global _recorded
    if not active:
        yield None
        return
    previous, _recorded = _recorded, []
    try:
        yield _recorded
    finally:
        _recorded = previous


def read_dependency(path: str, limit: int = DEPENDENCY_LIMIT) -> bytes | None:
    """The bytes of a file that one linted file pulls in (None when it cannot be read, is not
    a regular file, or is over `limit`: the linted file's own size limit); while
    `recording`, the file is noted with its fingerprint and hash."""
    from fp8lint.engine.files import read_regular

    read_at = time.time_ns()
    try:
        data, st = read_regular(path, limit)
    except OSError:
        if _recorded is not None:
            _recorded.append((os.path.abspath(path), None, False, None))
        return None
    over = len(data) > limit
    if _recorded is not None:
        digest = f"{OVER}{limit}" if over else sha256(data)
        _recorded.append((os.path.abspath(path), fingerprint(st), trusted(st, read_at), digest))
    return None if over else data


OVER = "over:"  # the digest of a dependency that was over the size limit: `over:<limit>`


def dependency_holds(dep: Any) -> bool:
    """Whether a file a result read is still as it was: unreadable, over the same limit, or
    the same bytes.  Checked with the same bounds as the read (a FIFO never blocks here)."""
    from fp8lint.engine.files import read_regular

    path, fp, trust, digest = dep
    if digest is None:  # it could not be read: it must still not be readable
        try:
            read_regular(path, 0)
        except OSError:
            return True
        return False
    if digest.startswith(OVER):
        try:
            limit = int(digest[len(OVER) :])
            st = os.stat(path)
        except (OSError, ValueError):
            return False
        return stat.S_ISREG(st.st_mode) and st.st_size > limit
    try:
        st = os.stat(path)
    except OSError:
        return False
    if trust and fingerprint(st) == fp:
        return True
    try:
        data, _ = read_regular(path, DEPENDENCY_LIMIT)
    except OSError:
        return False
    return bool(sha256(data[:DEPENDENCY_LIMIT]) == digest)


def valid_dependency(dep: Any) -> bool:
    ok = (
        isinstance(dep, list)
        and len(dep) == 4
        and isinstance(dep[0], str)
        and isinstance(dep[2], bool)
        and (dep[3] is None or isinstance(dep[3], str))
    )
    return ok and (dep[1] is None or valid_fingerprint(dep[1]))


def valid_fingerprint(fp: Any) -> bool:
    return isinstance(fp, list) and len(fp) == 4 and all(is_int(v) for v in fp)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
