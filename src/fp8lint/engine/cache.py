"""The on-disk cache of `fp8lint check`, after ruff's `.ruff_cache`.

Layout: `<dir>/CACHEDIR.TAG`, `<dir>/.gitignore` (`*`, so that git never sees the cache) and
`<dir>/<fp8lint version>/<scope>/<NN>.json`, where a scope is one working directory (the
paths in findings are relative to it) and a file's entry lives in one of 256 shards chosen by
a CRC of its path: a pre-commit call on a few files reads a few small shards, a run over a
whole tree reads each shard once, and a cold run writes 256 files, not one per linted file.

An entry is keyed on the path shown in findings and holds
- the file's effective settings (selection, rule options, severities, size limit), as
  canonical JSON kept once per shard: other settings are a miss;
- the file's stat fingerprint (size, mtime_ns, ctime_ns, inode) and the SHA-256 of its bytes.
  The fingerprint is the fast path; the hash is the truth: when the fingerprint differs, or the
  file had been changed less than 2 s before it was read (a later change could keep the same
  mtime, git's "racily clean" case), the bytes are read and hashed and the hash decides;
- every other file the result read (Hydra `defaults:` parents, the config a launch script
  names with `--config-name`, through `fp8lint.sources.hydra.load_file`) with its fingerprint
  and hash, or a note that it could not be read; a dependency that changed, vanished or
  became readable makes the entry stale;
- the findings (see `encode_diagnostic`), or null for a file in which the prefilter found
  nothing: skipping such a file costs a stat instead of a read and a scan of its bytes.
Each shard records the format, the fp8lint version and a fingerprint of fp8lint's own files
(names, sizes and mtimes), so an upgrade or an edited checkout starts afresh.

The cache never fails a run: a missing, unreadable, corrupt or foreign shard or entry is a
miss, and a cache that cannot be written is skipped.  Shards are written to a temporary file
and renamed over the old one (`os.replace`), merged with what another run wrote meanwhile.
Entries not used for 30 days are dropped.  Internal errors and timeouts are never stored
(the engine does not hand them over).  `<dir>/<version>/configs/` holds the configuration
files that validated (`ConfigMemo`, used by `config.Resolver`).  Only json, zlib, os and time
are imported here; hashlib only once a file's bytes must be hashed.
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
from fp8lint.diagnostics import (
    Applicability,
    Diagnostic,
    Fix,
    Related,
    Severity,
    TextEdit,
)
from fp8lint.records import field, record

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

    from fp8lint.settings import RunSettings

FORMAT = 2  # of shards and of encoded diagnostics; bump on any change to either
DIR_NAME = ".fp8lint_cache"
SHARDS = 256
RACY_NS = 2_000_000_000  # a file changed this close to its read is re-hashed next time
MAX_AGE_DAYS = 30
DEPENDENCY_LIMIT = 4 * 4 * 1024 * 1024 + 4  # bytes: 4 Mi characters of UTF-8 and a BOM
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by fp8lint.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n"
)
GITIGNORE = "# Automatically created by fp8lint.\n*\n"

Fingerprint = list[int]  # size, mtime_ns, ctime_ns, inode
# a file read besides the linted one: absolute path, fingerprint, trusted, sha256 (None for
# both when it could not be read)
Dependency = tuple[str, list[int] | None, bool, str | None]


class CorruptEntry(Exception):
    """A cache record that does not have the expected shape: treated as a miss."""


# --------------------------------------------------------------------------- where


def disabled_by_environment() -> bool:
    value = os.environ.get("FP8LINT_NO_CACHE", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def default_directory(root: str) -> str:
    """`.fp8lint_cache` in the project root (the folder of the configuration that applies to
    the working directory, else the working directory), as ruff does with `.ruff_cache`."""
    return os.path.join(os.path.abspath(root), DIR_NAME)


def location(root: str, cache_dir: str | None, explicit: str | None = None) -> str:
    """The cache directory: `explicit` (the command line, FP8LINT_CACHE_DIR), else `cache_dir`
    from the project configuration (relative to `root`, its folder), else `.fp8lint_cache`
    in `root`."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    if cache_dir:
        folder = os.path.expanduser(cache_dir)
        return os.path.normpath(os.path.join(os.path.abspath(root), folder))
    return default_directory(root)


def is_cache_directory(path: str) -> bool:
    """Whether `path` holds the CACHEDIR.TAG fp8lint writes (what `fp8lint clean` removes)."""
    try:
        with open(os.path.join(path, "CACHEDIR.TAG"), encoding="utf-8") as fh:
            return fh.read(len(CACHEDIR_TAG)) == CACHEDIR_TAG
    except (OSError, UnicodeDecodeError):
        return False


# --------------------------------------------------------------------------- fingerprints


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
def _code_fingerprint() -> str:
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


def _dependency_holds(dep: Any) -> bool:
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


def _valid_dependency(dep: Any) -> bool:
    ok = (
        isinstance(dep, list)
        and len(dep) == 4
        and isinstance(dep[0], str)
        and isinstance(dep[2], bool)
        and (dep[3] is None or isinstance(dep[3], str))
    )
    return ok and (dep[1] is None or _valid_fingerprint(dep[1]))


def _valid_fingerprint(fp: Any) -> bool:
    return isinstance(fp, list) and len(fp) == 4 and all(_is_int(v) for v in fp)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# --------------------------------------------------------------------------- diagnostics


def encode_diagnostic(d: Diagnostic) -> dict[str, Any]:
    """A Diagnostic as JSON (format `FORMAT`); `decode_diagnostic` gives back an equal one."""
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "message": d.message,
        "path": d.path,
        "line": d.line,
        "column": d.column,
        "end_line": d.end_line,
        "end_column": d.end_column,
        "related": [[r.path, r.line, r.column, r.message] for r in d.related],
        "headroom_binades": d.headroom_binades,
        "fix": _encode_fix(d.fix) if d.fix is not None else None,
        "source_line": d.source_line,
        "key": d.key,
        "note": d.note,
    }


def _encode_fix(fix: Fix) -> dict[str, Any]:
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            [e.content, e.line, e.column, e.end_line, e.end_column, e.start, e.end]
            for e in fix.edits
        ],
        "site": fix.site,
        "intent": [[name, _encode_value(value)] for name, value in fix.intent],
    }


def _encode_value(value: object) -> Any:
    """JSON for an intended value, keeping tuples, lists and dicts apart (tagged)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"t": [_encode_value(v) for v in value]}
    if isinstance(value, list):
        return {"l": [_encode_value(v) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"d": {k: _encode_value(v) for k, v in value.items()}}
    raise CorruptEntry(f"cannot encode {type(value).__name__}")


def _decode_value(raw: Any) -> object:
    if isinstance(raw, dict):
        if len(raw) != 1:
            raise CorruptEntry("bad tagged value")
        ((tag, inner),) = raw.items()
        if tag == "t" and isinstance(inner, list):
            return tuple(_decode_value(v) for v in inner)
        if tag == "l" and isinstance(inner, list):
            return [_decode_value(v) for v in inner]
        if tag == "d" and isinstance(inner, dict):
            return {k: _decode_value(v) for k, v in inner.items()}
        raise CorruptEntry("bad tagged value")
    if isinstance(raw, list):
        raise CorruptEntry("bare list")
    return raw


def _str(raw: Any) -> str:
    if not isinstance(raw, str):
        raise CorruptEntry("expected a string")
    return raw


def _int(raw: Any) -> int:
    if not _is_int(raw):
        raise CorruptEntry("expected an integer")
    return int(raw)


def _list(raw: Any, length: int | None = None) -> list[Any]:
    if not isinstance(raw, list) or (length is not None and len(raw) != length):
        raise CorruptEntry("expected a list")
    return raw


def decode_diagnostic(raw: Any) -> Diagnostic:
    """The Diagnostic `encode_diagnostic` wrote; CorruptEntry for anything else."""
    if not isinstance(raw, dict):
        raise CorruptEntry("expected an object")
    try:
        headroom = raw["headroom_binades"]
        if headroom is not None and (not isinstance(headroom, (int, float)) or headroom is True):
            raise CorruptEntry("bad headroom")
        fix = raw["fix"]
        return Diagnostic(
            code=_str(raw["code"]),
            name=_str(raw["name"]),
            severity=Severity(raw["severity"]),
            message=_str(raw["message"]),
            path=_str(raw["path"]),
            line=_int(raw["line"]),
            column=_int(raw["column"]),
            end_line=_int(raw["end_line"]),
            end_column=_int(raw["end_column"]),
            related=tuple(
                Related(_str(p), _int(line), _int(col), _str(m))
                for p, line, col, m in (_list(r, 4) for r in _list(raw["related"]))
            ),
            headroom_binades=float(headroom) if headroom is not None else None,
            fix=_decode_fix(fix) if fix is not None else None,
            source_line=_str(raw["source_line"]),
            key=_str(raw["key"]),
            note=_str(raw["note"]),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise CorruptEntry(str(exc)) from None


def _decode_fix(raw: Any) -> Fix:
    if not isinstance(raw, dict):
        raise CorruptEntry("expected an object")
    edits = []
    for e in _list(raw["edits"]):
        content, *numbers = _list(e, 7)
        edits.append(TextEdit(_str(content), *(_int(n) for n in numbers)))
    return Fix(
        applicability=Applicability(raw["applicability"]),
        message=_str(raw["message"]),
        edits=tuple(edits),
        site=_int(raw["site"]),
        intent=tuple(
            (_str(name), _decode_value(value))
            for name, value in (_list(i, 2) for i in _list(raw["intent"]))
        ),
    )


# --------------------------------------------------------------------------- the cache


@record
class Probe:
    """One file's lookup: a hit's findings, or what to store once the file is linted."""

    shown: str
    settings: str
    entry: list[Any] | None = None  # the stored entry whose settings match, if any
    hit: bool = False
    diagnostics: list[Diagnostic] | None = None  # a hit's findings; None: nothing here
    fingerprint: Fingerprint | None = None
    trusted: bool = False
    digest: str | None = None


@record
class _Shard:
    settings: list[str] = field(default_factory=list)
    entries: dict[str, list[Any]] = field(default_factory=dict)
    changed: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)  # key -> settings
    stamp: tuple[int, int] | None = None  # (mtime_ns, size) of the file it was read from


class Cache:
    """Per-file results under `directory` for one working directory.  Lookups and stores
    happen in the parent process; `save` writes the shards that changed."""

    def __init__(self, directory: str) -> None:
        self.directory = os.path.abspath(directory)
        self.cwd = os.getcwd()
        scope = f"{zlib.crc32(self.cwd.encode('utf-8', 'surrogateescape')):08x}"
        self.folder = os.path.join(self.directory, __version__, scope)
        self.code = _code_fingerprint()
        self.today = int(time.time() // 86400)
        self._shards: dict[int, _Shard] = {}
        self._settings: dict[int, tuple[RunSettings, str]] = {}

    # ------------------------------------------------------------------ reading

    def _settings_text(self, settings: RunSettings) -> str:
        memo = self._settings.get(id(settings))
        if memo is None or memo[0] is not settings:
            memo = (settings, settings_text(settings))
            self._settings[id(settings)] = memo
        return memo[1]

    @staticmethod
    def _index(shown: str) -> int:
        return zlib.crc32(shown.encode("utf-8", "surrogateescape")) % SHARDS

    def _shard_path(self, index: int) -> str:
        return os.path.join(self.folder, f"{index:02x}.json")

    def _read_shard(self, index: int) -> _Shard:
        """The shard as stored; empty when it is missing, unreadable, corrupt or foreign."""
        try:
            with open(self._shard_path(index), "rb") as fh:
                st = os.fstat(fh.fileno())
                raw = json.loads(fh.read())
        except (OSError, ValueError, RecursionError):
            return _Shard()
        ok = (
            isinstance(raw, dict)
            and raw.get("format") == FORMAT
            and raw.get("fp8lint") == __version__
            and raw.get("code") == self.code
            and raw.get("cwd") == self.cwd
            and isinstance(raw.get("settings"), list)
            and all(isinstance(s, str) for s in raw["settings"])
            and isinstance(raw.get("entries"), dict)
        )
        if not ok:
            return _Shard()
        return _Shard(raw["settings"], raw["entries"], stamp=(st.st_mtime_ns, st.st_size))

    def _shard(self, index: int) -> _Shard:
        shard = self._shards.get(index)
        if shard is None:
            shard = self._shards[index] = self._read_shard(index)
        return shard

    def probe(self, path: str, shown: str, settings: RunSettings) -> Probe:
        """A hit when the stored entry has these settings, the file's fingerprint matches a
        trusted one, and every dependency holds; otherwise a probe to `confirm_facts` with the
        file's bytes."""
        text = self._settings_text(settings)
        found = Probe(shown, text)
        shard = self._shard(self._index(shown))
        entry = shard.entries.get(shown)
        # entry: [settings index, fingerprint, trusted, sha256, day, dependencies, findings]
        if (
            not isinstance(entry, list)
            or len(entry) != 7
            or not _is_int(entry[0])
            or not 0 <= entry[0] < len(shard.settings)
            or shard.settings[entry[0]] != text
            or not _valid_fingerprint(entry[1])
            or not isinstance(entry[3], str)
            or not isinstance(entry[5], list)
            or not all(_valid_dependency(d) for d in entry[5])
        ):
            return found
        found.entry = entry
        if entry[2] is True:
            try:
                st = os.stat(path)
            except OSError:
                return found
            if fingerprint(st) == entry[1]:
                self._finish(found, refresh=False)
        return found

    def confirm_facts(
        self, found: Probe, print_: Fingerprint, is_trusted: bool, digest: str
    ) -> bool:
        """With the facts of the bytes just read (computed where they were read, maybe in a
        worker process): a hit when their hash is the stored one (the entry's fingerprint is
        refreshed).  Either way the probe keeps what a store needs."""
        found.fingerprint = print_
        found.trusted = is_trusted
        found.digest = digest
        if found.entry is not None and found.entry[3] == found.digest:
            self._finish(found, refresh=True)
        return found.hit

    def _finish(self, found: Probe, refresh: bool) -> None:
        entry = found.entry
        assert entry is not None
        if not all(_dependency_holds(d) for d in entry[5]):
            return
        findings = entry[6]
        if findings is None:
            diags = None
        else:
            try:
                diags = [decode_diagnostic(d) for d in _list(findings)]
            except CorruptEntry:
                return
        found.hit, found.diagnostics = True, diags
        stale_day = entry[4] != self.today
        if refresh and (found.fingerprint != entry[1] or found.trusted != entry[2]):
            entry = [entry[0], found.fingerprint, found.trusted, *entry[3:]]
            stale_day = True
        if stale_day:  # keep it from being pruned; at most one rewrite a day
            entry = [*entry[:4], self.today, *entry[5:]]
            shard = self._shard(self._index(found.shown))
            shard.entries[found.shown] = entry
            shard.changed[found.shown] = (found.settings, entry)

    # ------------------------------------------------------------------ writing

    def store(
        self,
        found: Probe,
        diagnostics: list[Diagnostic] | None,
        dependencies: list[Dependency] | tuple[Dependency, ...] = (),
    ) -> None:
        """Remember a file's findings (None: the prefilter found nothing), unless they do
        not survive encoding unchanged."""
        if found.fingerprint is None or found.digest is None:
            return
        encoded: list[dict[str, Any]] | None = None
        if diagnostics is not None:
            try:
                encoded = [encode_diagnostic(d) for d in diagnostics]
                again = [decode_diagnostic(json.loads(json.dumps(e))) for e in encoded]
            except (CorruptEntry, ValueError, TypeError):
                return
            if again != diagnostics:
                return
        deps: list[list[Any]] = []
        seen: set[str] = set()
        for path, fp, trust, digest in dependencies:
            if path not in seen:
                seen.add(path)
                deps.append([path, fp, trust, digest])
        entry = [-1, found.fingerprint, found.trusted, found.digest, self.today, deps, encoded]
        shard = self._shard(self._index(found.shown))
        shard.entries[found.shown] = entry
        shard.changed[found.shown] = (found.settings, entry)

    def save(self) -> None:
        """Write the shards that changed (merged with the stored ones); any failure to write
        leaves the cache as it was."""
        dirty = [(i, s) for i, s in sorted(self._shards.items()) if s.changed]
        if not dirty or not self._prepare():
            return
        for index, shard in dirty:
            on_disk = shard
            try:
                st = os.stat(self._shard_path(index))
                if shard.stamp != (st.st_mtime_ns, st.st_size):  # another run wrote it
                    on_disk = self._read_shard(index)
            except OSError:
                pass
            if not self._write(index, self._merged(on_disk, shard)):
                return

    def _merged(self, on_disk: _Shard, mine: _Shard) -> dict[str, Any]:
        settings: list[str] = []
        numbers: dict[str, int] = {}
        entries: dict[str, list[Any]] = {}

        def number(text: str) -> int:
            if text not in numbers:
                numbers[text] = len(settings)
                settings.append(text)
            return numbers[text]

        oldest = self.today - MAX_AGE_DAYS
        for key, entry in on_disk.entries.items():
            if key in mine.changed:
                continue
            ok = isinstance(entry, list) and len(entry) == 7 and _is_int(entry[0])
            if not ok or not 0 <= entry[0] < len(on_disk.settings):
                continue
            if not _is_int(entry[4]) or entry[4] < oldest:
                continue
            entries[key] = [number(on_disk.settings[entry[0]]), *entry[1:]]
        for key, (text, entry) in mine.changed.items():
            entries[key] = [number(text), *entry[1:]]
        return {
            "format": FORMAT,
            "fp8lint": __version__,
            "code": self.code,
            "cwd": self.cwd,
            "settings": settings,
            "entries": entries,
        }

    def _prepare(self) -> bool:
        return _prepare(self.directory, self.folder)

    def _write(self, index: int, shard: dict[str, Any]) -> bool:
        data = json.dumps(shard, separators=(",", ":")).encode("ascii")
        try:
            _write_atomic(self._shard_path(index), data)
        except OSError:
            return False
        return True


def _prepare(directory: str, folder: str) -> bool:
    """Create `folder` inside the cache `directory` (with CACHEDIR.TAG and a `*` .gitignore
    on first use)."""
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", GITIGNORE)):
            marker = os.path.join(directory, name)
            if not os.path.exists(marker):
                _write_atomic(marker, text.encode("utf-8"))
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return True


# --------------------------------------------------------------------------- configurations


class ConfigMemo:
    """Configuration files that validated, so that an unchanged one needs no pydantic.

    `<dir>/<version>/configs/<key>.json`, where the key is the SHA-256 of the file's bytes and
    of whether it is a pyproject.toml (the same bytes mean another table there); an entry
    holds the validated data (`config_model.validate`) with the format, the fp8lint version
    and the fingerprint of fp8lint's files (its rules decide what is valid).  Only valid files
    are stored; an entry that is missing, unreadable, corrupt, foreign or stale is a miss.
    Entries not used for 30 days are dropped when another is written."""

    def __init__(self, directory: str) -> None:
        self.directory = os.path.abspath(directory)
        self.folder = os.path.join(self.directory, __version__, "configs")

    @staticmethod
    def key(pyproject: bool, data: bytes) -> str:
        return sha256((b"pyproject\0" if pyproject else b"fp8lint\0") + data)

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, f"{key}.json")

    def get(self, key: str) -> Any:
        """The stored data for `key`, or None."""
        path = self._path(key)
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                raw = json.loads(fh.read())
        except (OSError, ValueError, RecursionError):
            return None
        ok = (
            isinstance(raw, dict)
            and raw.get("format") == FORMAT
            and raw.get("fp8lint") == __version__
            and raw.get("code") == _code_fingerprint()
            and raw.get("key") == key
            and "config" in raw
        )
        if not ok:
            return None
        if time.time() - st.st_mtime > 86400:  # in use: keep it from being pruned
            try:
                os.utime(path)
            except OSError:
                pass
        return raw["config"]

    def put(self, key: str, config: Any) -> None:
        """Remember valid data for `key` (a cache that cannot be written is skipped)."""
        if not _prepare(self.directory, self.folder):
            return
        entry = {
            "format": FORMAT,
            "fp8lint": __version__,
            "code": _code_fingerprint(),
            "key": key,
            "config": config,
        }
        try:
            _write_atomic(self._path(key), json.dumps(entry, sort_keys=True).encode("ascii"))
        except OSError:
            return
        self._prune()

    def _prune(self) -> None:
        oldest = time.time() - MAX_AGE_DAYS * 86400
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.name.endswith(".json") and entry.stat().st_mtime < oldest:
                    os.unlink(entry.path)
            except OSError:
                continue


def _write_atomic(path: str, data: bytes) -> None:
    """Write a temporary file next to `path` (mode 0666 less the umask), then rename it."""
    tmp = os.path.join(os.path.dirname(path), f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def clean(directory: str) -> tuple[bool, str]:
    """Remove a cache directory: (removed, what to print)."""
    import shutil

    directory = os.path.abspath(directory)
    if not os.path.lexists(directory):
        return False, f"No cache at {directory}."
    if not os.path.isdir(directory) or os.path.islink(directory):
        raise OSError(f"{directory} is not a cache directory")
    if not is_cache_directory(directory):
        raise OSError(f"{directory} has no CACHEDIR.TAG written by fp8lint; not removing it")
    shutil.rmtree(directory)
    return True, f"Removed cache directory {directory}."
