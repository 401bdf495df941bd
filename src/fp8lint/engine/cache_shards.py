"""The cache's shards: one JSON file per 256th of the paths, read whole (a shard that is
missing, unreadable, corrupt or foreign reads as empty), merged with what another run wrote
meanwhile, and written atomically.  A shard's header (format, fp8lint version, code
fingerprint, working directory) must match for its entries to count."""

from __future__ import annotations

import json
import os
import zlib

from fp8lint.engine.cache_files import Seal, write_atomic
from fp8lint.engine.cache_keys import is_int
from fp8lint.records import field, record

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

SHARDS = 256
# an entry: [settings index, fingerprint, trusted, sha256, day, dependencies, findings,
# whether the findings carry their fixes]
ENTRY_LENGTH = 8


@record
class Shard:
    settings: list[str] = field(default_factory=list)
    entries: dict[str, list[Any]] = field(default_factory=dict)
    changed: dict[str, tuple[str, list[Any]]] = field(default_factory=dict)  # key -> settings
    stamp: tuple[int, int] | None = None  # (mtime_ns, size) of the file it was read from


def shard_index(shown: str) -> int:
    return zlib.crc32(shown.encode("utf-8", "surrogateescape")) % SHARDS


def shard_path(folder: str, index: int) -> str:
    return os.path.join(folder, f"{index:02x}.json")


def read_shard(path: str, header: dict[str, Any], seal: Seal) -> Shard:
    """The shard as stored; empty when it is missing, unreadable, corrupt, foreign or not
    sealed by this user (`Seal.open` bounds the read)."""
    opened = seal.open(path)
    if opened is None:
        return Shard()
    data, st = opened
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):
        return Shard()
    ok = (
        isinstance(raw, dict)
        and all(raw.get(name) == value for name, value in header.items())
        and isinstance(raw.get("settings"), list)
        and all(isinstance(s, str) for s in raw["settings"])
        and isinstance(raw.get("entries"), dict)
    )
    if not ok:
        return Shard()
    return Shard(raw["settings"], raw["entries"], stamp=(st.st_mtime_ns, st.st_size))


def save_shard(path: str, mine: Shard, header: dict[str, Any], oldest: int, seal: Seal) -> bool:
    """Write `mine`'s changes over the stored shard (read again when another run wrote it
    since), dropping entries last used before day `oldest`; False when it cannot be
    written."""
    on_disk = mine
    try:
        st = os.stat(path)
        if mine.stamp != (st.st_mtime_ns, st.st_size):  # another run wrote it
            on_disk = read_shard(path, header, seal)
    except OSError:
        pass
    data = json.dumps(merged(on_disk, mine, header, oldest), separators=(",", ":"))
    try:
        write_atomic(path, seal.seal(data.encode("ascii")))
    except OSError:
        return False
    return True


def merged(on_disk: Shard, mine: Shard, header: dict[str, Any], oldest: int) -> dict[str, Any]:
    settings: list[str] = []
    numbers: dict[str, int] = {}
    entries: dict[str, list[Any]] = {}

    def number(text: str) -> int:
        if text not in numbers:
            numbers[text] = len(settings)
            settings.append(text)
        return numbers[text]

    for key, entry in on_disk.entries.items():
        if key in mine.changed:
            continue
        ok = isinstance(entry, list) and len(entry) == ENTRY_LENGTH and is_int(entry[0])
        if not ok or not 0 <= entry[0] < len(on_disk.settings):
            continue
        if not is_int(entry[4]) or entry[4] < oldest:
            continue
        entries[key] = [number(on_disk.settings[entry[0]]), *entry[1:]]
    for key, (text, entry) in mine.changed.items():
        entries[key] = [number(text), *entry[1:]]
    return {**header, "settings": settings, "entries": entries}
