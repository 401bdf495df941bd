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
  nothing: skipping such a file costs a stat instead of a read and a scan of its bytes;
- whether the findings carry their fixes: a run that planned none (`RunSettings.plan_fixes`)
  stores findings without them, which do not serve a run that plans fixes.
Each shard records the format, the fp8lint version and a fingerprint of fp8lint's own files
(names, sizes and mtimes), so an upgrade or an edited checkout starts afresh.

The cache never fails a run: a missing, unreadable, corrupt or foreign shard or entry is a
miss, and a cache that cannot be written is skipped.  Nothing in it is believed that this
user did not write: every file is sealed (`cache_files.Seal`: an HMAC under a secret kept
outside the repository), and a cache directory git tracks is not used.  Shards are written
to a temporary file and renamed over the old one (`os.replace`), merged with what another
run wrote meanwhile.
Entries not used for 30 days are dropped.  Internal errors and timeouts are never stored
(the engine does not hand them over).  `<dir>/<version>/configs/` holds the configuration
files that validated (`ConfigMemo`, used by `config.Resolver`).

This module is the store (`Cache`, `Probe`); `cache_keys` has the fingerprints, hashes and
dependencies, `cache_codec` the findings' JSON, `cache_shards` the shard files, `cache_files`
the directory, its markers and the configuration memo.  Only json, zlib, os and time are
imported; hashlib only once a file's bytes must be hashed.
"""

from __future__ import annotations

import json
import os
import time
import zlib

from fp8lint import __version__
from fp8lint.diagnostics import Diagnostic
from fp8lint.engine.cache_codec import (
    CorruptEntry,
    decode_diagnostic,
    decode_findings,
    encode_diagnostic,
)
from fp8lint.engine.cache_files import (
    CACHEDIR_TAG,
    DIR_NAME,
    GITIGNORE,
    MAX_AGE_DAYS,
    ConfigMemo,
    clean,
    default_directory,
    disabled_by_environment,
    is_cache_directory,
    location,
    prepare,
    seal_for,
)
from fp8lint.engine.cache_keys import (
    DEPENDENCY_LIMIT,
    FORMAT,
    OVER,
    RACY_NS,
    Dependency,
    Fingerprint,
    code_fingerprint,
    dependency_holds,
    fingerprint,
    is_int,
    read_dependency,
    recording,
    settings_text,
    sha256,
    trusted,
    valid_dependency,
    valid_fingerprint,
)
from fp8lint.engine.cache_shards import (
    ENTRY_LENGTH,
    SHARDS,
    Shard,
    read_shard,
    save_shard,
    shard_index,
    shard_path,
)
from fp8lint.records import record

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

    from fp8lint.settings import RunSettings

__all__ = [  # what the engine and the CLI use, wherever it lives
    "CACHEDIR_TAG",
    "DEPENDENCY_LIMIT",
    "DIR_NAME",
    "FORMAT",
    "GITIGNORE",
    "MAX_AGE_DAYS",
    "OVER",
    "RACY_NS",
    "SHARDS",
    "Cache",
    "ConfigMemo",
    "CorruptEntry",
    "Dependency",
    "Fingerprint",
    "Probe",
    "clean",
    "decode_diagnostic",
    "default_directory",
    "disabled_by_environment",
    "encode_diagnostic",
    "fingerprint",
    "is_cache_directory",
    "location",
    "read_dependency",
    "recording",
    "settings_text",
    "sha256",
    "trusted",
]


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
    fixes: bool = True  # the run plans fixes: only findings that carry them serve it


class Cache:
    """Per-file results under `directory` for one working directory.  Lookups and stores
    happen in the parent process; `save` writes the shards that changed."""

    def __init__(self, directory: str) -> None:
        self.directory = os.path.abspath(directory)
        self.cwd = os.getcwd()
        scope = f"{zlib.crc32(self.cwd.encode('utf-8', 'surrogateescape')):08x}"
        self.folder = os.path.join(self.directory, __version__, scope)
        self.code = code_fingerprint()
        self.today = int(time.time() // 86400)
        # what a shard must say of itself to be read (and says when written)
        self.header = {"format": FORMAT, "fp8lint": __version__, "code": self.code, "cwd": self.cwd}
        self._shards: dict[int, Shard] = {}
        self._settings: dict[int, tuple[RunSettings, str]] = {}
        # None: the cache is off this run (nothing read, nothing written)
        self.seal = seal_for(self.directory)

    # ------------------------------------------------------------------ reading

    def _settings_text(self, settings: RunSettings) -> str:
        memo = self._settings.get(id(settings))
        if memo is None or memo[0] is not settings:
            memo = (settings, settings_text(settings))
            self._settings[id(settings)] = memo
        return memo[1]

    def _shard(self, index: int) -> Shard:
        shard = self._shards.get(index)
        if shard is None:
            path = shard_path(self.folder, index)
            seal = self.seal
            shard = Shard() if seal is None else read_shard(path, self.header, seal)
            self._shards[index] = shard
        return shard

    def probe(self, path: str, shown: str, settings: RunSettings) -> Probe:
        """A hit when the stored entry has these settings, the file's fingerprint matches a
        trusted one, and every dependency holds; otherwise a probe to `confirm_facts` with the
        file's bytes."""
        text = self._settings_text(settings)
        found = Probe(shown, text, fixes=settings.plan_fixes)
        shard = self._shard(shard_index(shown))
        entry = shard.entries.get(shown)
        # entry: [settings index, fingerprint, trusted, sha256, day, dependencies, findings,
        # whether the findings carry their fixes]
        if (
            not isinstance(entry, list)
            or len(entry) != ENTRY_LENGTH
            or not is_int(entry[0])
            or not 0 <= entry[0] < len(shard.settings)
            or shard.settings[entry[0]] != text
            or not valid_fingerprint(entry[1])
            or not isinstance(entry[3], str)
            or not isinstance(entry[5], list)
            or not all(valid_dependency(d) for d in entry[5])
            or (found.fixes and entry[7] is not True)
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
        if not all(dependency_holds(d) for d in entry[5]):
            return
        findings = entry[6]
        if findings is None:
            diags = None
        else:
            try:
                diags = decode_findings(findings)
            except CorruptEntry:
                return
        found.hit, found.diagnostics = True, diags
        stale_day = entry[4] != self.today
        if refresh and (found.fingerprint != entry[1] or found.trusted != entry[2]):
            entry = [entry[0], found.fingerprint, found.trusted, *entry[3:]]
            stale_day = True
        if stale_day:  # keep it from being pruned; at most one rewrite a day
            entry = [*entry[:4], self.today, *entry[5:]]
            shard = self._shard(shard_index(found.shown))
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
        not survive encoding unchanged; without planned fixes, only no findings are whole."""
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
        whole = found.fixes or not diagnostics
        entry = [
            -1,
            found.fingerprint,
            found.trusted,
            found.digest,
            self.today,
            deps,
            encoded,
            whole,
        ]
        shard = self._shard(shard_index(found.shown))
        shard.entries[found.shown] = entry
        shard.changed[found.shown] = (found.settings, entry)

    def save(self) -> None:
        """Write the shards that changed (merged with the stored ones); any failure to write
        leaves the cache as it was."""
        dirty = [(i, s) for i, s in sorted(self._shards.items()) if s.changed]
        seal = self.seal
        if not dirty or seal is None or not prepare(self.directory, self.folder):
            return
        oldest = self.today - MAX_AGE_DAYS
        for index, shard in dirty:
            path = shard_path(self.folder, index)
            if not save_shard(path, shard, self.header, oldest, seal):
                return
