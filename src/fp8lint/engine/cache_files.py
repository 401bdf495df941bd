"""The cache directory: where it is, the markers that make it one (CACHEDIR.TAG, a `*`
.gitignore), atomic writes into it, its removal (`fp8lint clean`), and the memo of
configuration files that validated (`ConfigMemo`)."""

from __future__ import annotations

import json
import os
import time

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
        if not prepare(self.directory, self.folder):
            return
        entry = {
            "format": FORMAT,
            "fp8lint": __version__,
            "code": code_fingerprint(),
            "key": key,
            "config": config,
        }
        try:
            write_atomic(self._path(key), json.dumps(entry, sort_keys=True).encode("ascii"))
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
