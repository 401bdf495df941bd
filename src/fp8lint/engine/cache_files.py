"""The cache directory: where it is, the markers that make it one (CACHEDIR.TAG, a `*`
.gitignore), atomic writes into it, its removal (`fp8lint clean`), the memo of
configuration files that validated (`ConfigMemo`), and the seal that makes its files
trustworthy (`Seal`).

The cache lives in the working tree (`.fp8lint_cache`, as ruff's does), where a pull request
can commit one.  So nothing in it is believed unless this user wrote it: every file starts
with an HMAC-SHA256 of its bytes under a secret kept outside the repository
(`$XDG_CACHE_HOME/fp8lint/key`, else `~/.cache/fp8lint/key`, made 0600 on first use).  A
file whose seal does not verify is a miss.  A cache directory that git tracks is not used at
all, and neither is a key that lies inside the repository.  Every read is bounded (a regular
file, not a link, at most MAX_CACHE_FILE bytes)."""

from __future__ import annotations

import json
import os
import time
from functools import lru_cache

from fp8lint import __version__
from fp8lint.engine.cache_keys import FORMAT, code_fingerprint, sha256

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

DIR_NAME = ".fp8lint_cache"
MAX_AGE_DAYS = 30  # entries not used for this long are dropped
CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by fp8lint.\n"
    "# For information about cache directory tags, see:\n"
    "#\thttps://bford.info/cachedir/\n"
)
GITIGNORE = "# Automatically created by fp8lint.\n*\n"
MAX_CACHE_FILE = 64 << 20  # bytes of one shard or memo entry; a larger one is a miss
MAX_INDEX_BYTES = 64 << 20  # of `.git/index`, read to see whether git tracks the cache
KEY_BYTES = 32


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
    from fp8lint.engine.files import read_regular

    try:
        data, _ = read_regular(os.path.join(path, "CACHEDIR.TAG"), len(CACHEDIR_TAG))
    except OSError:
        return False
    return data[: len(CACHEDIR_TAG)] == CACHEDIR_TAG.encode("utf-8")


# ------------------------------------------------------------------------ the seal


def key_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(base), "fp8lint", "key")


class Seal:
    """Seals and opens the files of one cache directory with this user's secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _mac(self, data: bytes) -> bytes:
        import hashlib
        import hmac

        return hmac.new(self._secret, data, hashlib.sha256).hexdigest().encode("ascii")

    def seal(self, data: bytes) -> bytes:
        return self._mac(data) + b"\n" + data

    def open(self, path: str) -> tuple[bytes, os.stat_result] | None:
        """The bytes a sealed file holds, and its stat; None when it is missing, not a
        regular file, a link, too large, or not sealed with this secret."""
        import hmac

        from fp8lint.engine.files import read_regular

        try:
            raw, info = read_regular(path, MAX_CACHE_FILE, follow=False)
        except OSError:
            return None
        mac, newline, data = raw.partition(b"\n")
        if len(raw) > MAX_CACHE_FILE or not newline:
            return None
        return (data, info) if hmac.compare_digest(mac, self._mac(data)) else None


@lru_cache(maxsize=8)
def seal_for(directory: str) -> Seal | None:
    """The seal of `directory`'s files, or None: the cache is off (git tracks the directory,
    or this user's secret cannot be read or made, or it lies inside the repository)."""
    root = _git_root(directory)
    if root is not None and tracked(directory, root):
        return None
    path = key_path()
    if root is not None and _within(os.path.realpath(path), os.path.realpath(root)):
        return None  # a key the repository could ship
    secret = _secret(path)
    return None if secret is None else Seal(secret)


def _git_root(directory: str) -> str | None:
    """The nearest folder at or above `directory` that holds `.git` (here, not
    `frameworks.shared.paths`: a warm cache hit imports no framework code)."""
    folder = os.path.abspath(directory)
    for _ in range(64):
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _secret(path: str) -> bytes | None:
    from fp8lint.engine.files import read_regular

    for _ in range(2):
        try:
            data, info = read_regular(path, 2 * KEY_BYTES, follow=False)
        except FileNotFoundError:
            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                fd = os.open(path, flags, 0o600)
            except FileExistsError:
                continue  # another run made it meanwhile: read that one
            except OSError:
                return None
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(os.urandom(KEY_BYTES).hex())
            continue
        except OSError:
            return None
        mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if len(data) == 2 * KEY_BYTES and mine and not info.st_mode & 0o022:
            return data
        return None
    return None


def tracked(directory: str, root: str) -> bool:
    """Whether git tracks a file under `directory` (a cache a commit brought in): its path
    is looked for in `.git/index` (read, bounded; no git command runs).  An index git
    writes in version 4 shortens paths, so there only the first file under the folder is
    certain to be found."""
    from fp8lint.engine.files import read_regular

    directory, root = os.path.normpath(directory), os.path.normpath(root)
    if not _within(directory, root) or directory == root:
        return False
    rel = os.path.relpath(directory, root).replace(os.sep, "/")
    try:
        data, _ = read_regular(os.path.join(root, ".git", "index"), MAX_INDEX_BYTES)
    except OSError:
        return False
    return rel.encode("utf-8", "surrogateescape") + b"/" in data


def prepare(directory: str, folder: str) -> bool:
    """Create `folder` inside the cache `directory` (with CACHEDIR.TAG and a `*` .gitignore
    on first use)."""
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, exist_ok=True)
        for name, text in (("CACHEDIR.TAG", CACHEDIR_TAG), (".gitignore", GITIGNORE)):
            marker = os.path.join(directory, name)
            if not os.path.exists(marker):
                write_atomic(marker, text.encode("utf-8"))
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    return True


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
        seal = seal_for(self.directory)
        opened = None if seal is None else seal.open(path)
        if opened is None:
            return None
        data, st = opened
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError):
            return None
        ok = (
            isinstance(raw, dict)
            and raw.get("format") == FORMAT
            and raw.get("fp8lint") == __version__
            and raw.get("code") == code_fingerprint()
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
        seal = seal_for(self.directory)
        if seal is None or not prepare(self.directory, self.folder):
            return
        entry = {
            "format": FORMAT,
            "fp8lint": __version__,
            "code": code_fingerprint(),
            "key": key,
            "config": config,
        }
        try:
            data = json.dumps(entry, sort_keys=True).encode("ascii")
            write_atomic(self._path(key), seal.seal(data))
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


def write_atomic(path: str, data: bytes) -> None:
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
