"""Configuration: `[tool.fp8lint]` in `pyproject.toml`, or `.fp8lint.toml` / `fp8lint.toml`.

As in ruff, the closest configuration file to a linted file applies (`.fp8lint.toml`, then
`fp8lint.toml`, then a `pyproject.toml` that has a `[tool.fp8lint]` table, in each folder from
the file's upward), configs are not merged implicitly but may `extend = "../base.toml"`, paths
resolve against the file that names them, and `--config FILE` applies one file to everything.
`max-file-size` and `file-timeout` apply per file like the rule settings; `cache` and
`cache-dir` are read from the configuration that applies to the working directory (the project
root), as ruff's are.

Each file is validated by the pydantic model in `config_model` (an unknown key or a wrong type
names the file and the key and exits 2; rule options are checked against what each rule
declares), which gives the plain data a `Config` is built from (`from_validated`).  A file that
validated is remembered in the cache directory, keyed on its bytes (SHA-256) and fp8lint's
version and files (`cache.ConfigMemo`): the next run builds its `Config` from that data without
importing pydantic, while a changed file is validated again and an invalid one, never stored,
is reported every time.  Where the memo lives depends on the configuration (`cache-dir`,
`cache = false`): `Resolver` finds it from the project's files before loading any (see
`_choose_memo`).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping

from fp8lint.diagnostics import LocatedError, Severity
from fp8lint.engine.units import parse_seconds, parse_size
from fp8lint.records import field, record, replace
from fp8lint.settings import Targets

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

    from fp8lint.engine.cache_files import ConfigMemo

__all__ = [
    "CONFIG_NAMES",
    "Config",
    "ConfigError",
    "Resolver",
    "load",
    "matches",
    "parse_seconds",
    "parse_size",
]

CONFIG_NAMES = (".fp8lint.toml", "fp8lint.toml", "pyproject.toml")
LEVELS = ("error", "warning", "info")
# far above any configuration (they are kilobytes); bounds the read and the TOML parse of a
# hostile one (an `extend` pointing at a huge file)
MAX_CONFIG_BYTES = 1024 * 1024
MAX_EXTEND_DEPTH = 16


class ConfigError(LocatedError):
    """A configuration problem: reported with the file and key, exit code 2."""


@record(frozen=True)
class Config:
    path: str | None = None  # the file it came from (None: built-in defaults)
    root: str = "."
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # code -> name -> v
    fail_on: str | None = None
    rule_url_base: str | None = None
    max_file_size: int | None = None  # bytes
    file_timeout: float | None = None  # seconds, 0: no limit
    cache: bool | None = None
    cache_dir: str | None = None  # as written: relative to `root`, `~` allowed
    target_versions: Mapping[str, str] = field(default_factory=dict)  # framework -> release
    written: frozenset[str] = frozenset()  # the keys the file (not its parents) sets

    def settings_dict(self) -> dict[str, Any]:
        """What `--show-settings` prints."""
        return {
            "config-file": self.path,
            "root": self.root,
            "select": list(self.select) if self.select is not None else "(default)",
            "extend-select": list(self.extend_select),
            "ignore": list(self.ignore),
            "per-file-ignores": {p: list(c) for p, c in self.per_file_ignores},
            "exclude": list(self.exclude),
            "extend-exclude": list(self.extend_exclude),
            "severity": {k: v.value for k, v in sorted(self.severity.items())},
            "options": {c: dict(o) for c, o in sorted(self.options.items())},
            "fail-on": self.fail_on,
            "rule-url-base": self.rule_url_base,
            "max-file-size": self.max_file_size,
            "file-timeout": self.file_timeout,
            "cache": self.cache,
            "cache-dir": self.cache_dir,
            "target-versions": Targets(dict(self.target_versions)).resolved(),
        }


# --------------------------------------------------------------------------- validated data


def _strs(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return tuple(value)


def _opt(value: Any, kind: type) -> Any:
    """None, or a value of exactly `kind` (a bool is no int here)."""
    if value is not None and (
        not isinstance(value, kind) or isinstance(value, bool) != (kind is bool)
    ):
        raise ValueError(f"expected {kind.__name__}")
    return value


def _scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str))


def from_validated(data: Any, path: str) -> tuple[Config, str | None]:
    """The `Config` of one file, and its `extend` reference, from what `config_model.validate`
    returned for it (fresh, or remembered from an earlier run); ValueError for data of any
    other shape, so that a damaged memo entry is a miss, never a wrong configuration."""
    if not isinstance(data, dict):
        raise ValueError("expected an object")
    try:
        pfi = data["per_file_ignores"]
        if not isinstance(pfi, list) or not all(
            isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pfi
        ):
            raise ValueError("bad per-file-ignores")
        severity = data["severity"]
        if not isinstance(severity, dict) or not all(v in LEVELS for v in severity.values()):
            raise ValueError("bad severity")
        options = data["options"]
        if not isinstance(options, dict) or not all(
            isinstance(o, dict) and all(_scalar(v) for v in o.values()) for o in options.values()
        ):
            raise ValueError("bad options")
        fail_on = data["fail_on"]
        if fail_on is not None and fail_on not in LEVELS:
            raise ValueError("bad fail-on")
        size = _opt(data["max_file_size"], int)
        if size is not None and size < 1:
            raise ValueError("bad max-file-size")
        timeout = data["file_timeout"]
        if timeout is not None and (
            not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < 0
        ):
            raise ValueError("bad file-timeout")
        cache_dir = _opt(data["cache_dir"], str)
        targets = data["target_versions"]
        if not isinstance(targets, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in targets.items()
        ):
            raise ValueError("bad target-versions")
        extend = _opt(data["extend"], str)
        cfg = Config(
            path=path,
            root=os.path.dirname(os.path.abspath(path)),
            select=_strs(data["select"]) if data["select"] is not None else None,
            extend_select=_strs(data["extend_select"]),
            ignore=_strs(data["ignore"]),
            per_file_ignores=tuple((p, _strs(codes)) for p, codes in pfi),
            exclude=_strs(data["exclude"]),
            extend_exclude=_strs(data["extend_exclude"]),
            severity={str(code): Severity(level) for code, level in severity.items()},
            options={str(code): dict(values) for code, values in options.items()},
            fail_on=fail_on,
            rule_url_base=_opt(data["rule_url_base"], str),
            max_file_size=size,
            file_timeout=float(timeout) if timeout is not None else None,
            cache=_opt(data["cache"], bool),
            cache_dir=cache_dir,
            target_versions=dict(targets),
            written=frozenset(_strs(data["written"])),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"missing or bad field: {exc}") from None
    return cfg, extend


def validate_table(path: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """One file's table through the pydantic model: its validated data, or a ConfigError with
    one line per problem, each naming the file and the key."""
    from fp8lint.engine.config_model import Invalid, validate

    try:
        return validate(dict(table))
    except Invalid as exc:
        raise ConfigError("\n".join(f"{path}: {problem}" for problem in exc.problems)) from None


# --------------------------------------------------------------------------- files


def _parse_toml(path: str, data: bytes) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        parsed: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: invalid TOML: not UTF-8 ({exc.reason} at byte {exc.start})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except (ValueError, RecursionError) as exc:  # found by fuzzing: deep or odd input
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return parsed


def _read(path: str) -> bytes:
    """A configuration file's bytes, with the bounds every read has: a regular file (never a
    FIFO or a device such as /dev/zero) and a size limit."""
    from fp8lint.engine.files import NotRegular, read_regular

    try:
        data, _ = read_regular(path, MAX_CONFIG_BYTES)
    except NotRegular:
        raise ConfigError(
            f"{path}: not a regular file (pipe, socket or device): not read"
        ) from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        from fp8lint.engine.files import human_size

        raise ConfigError(f"{path}: over {human_size(MAX_CONFIG_BYTES)}: not read")
    return data


def _is_pyproject(path: str) -> bool:
    return os.path.basename(path) == "pyproject.toml"


def _may_name_fp8lint(data: bytes) -> bool:
    """Whether a pyproject.toml's bytes can hold a `[tool.fp8lint]` table: the key is spelled
    out, or a quoted key has escapes that could spell it.  A pyproject.toml that cannot is not
    a configuration and is not parsed (so one that is not valid TOML is another tool's
    problem, and a pre-commit call skips importing a TOML parser)."""
    return b"fp8lint" in data or b"\\u" in data or b"\\U" in data


def _table_in(path: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The fp8lint table of a parsed file, None for a pyproject without one."""
    if _is_pyproject(path):
        tool = data.get("tool")
        if not isinstance(tool, dict) or "fp8lint" not in tool:
            return None
        table = tool["fp8lint"]
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.fp8lint] must be a table")
        return table
    return data


def load(path: str) -> Config:
    """A config file with its `extend` chain applied (child keys win; lists of extras merge)."""
    return Resolver().load(path)


def merge(parent: Config, child: Config) -> Config:
    def pick(key: str, mine: Any, theirs: Any) -> Any:
        return mine if key in child.written else theirs

    return replace(
        parent,
        select=pick("select", child.select, parent.select),
        ignore=pick("ignore", child.ignore, parent.ignore),
        exclude=pick("exclude", child.exclude, parent.exclude),
        fail_on=pick("fail-on", child.fail_on, parent.fail_on),
        rule_url_base=pick("rule-url-base", child.rule_url_base, parent.rule_url_base),
        max_file_size=pick("max-file-size", child.max_file_size, parent.max_file_size),
        file_timeout=pick("file-timeout", child.file_timeout, parent.file_timeout),
        cache=pick("cache", child.cache, parent.cache),
        cache_dir=pick("cache-dir", child.cache_dir, parent.cache_dir),
        path=child.path,
        root=child.root,
        written=child.written,
        extend_select=parent.extend_select + child.extend_select,
        extend_exclude=parent.extend_exclude + child.extend_exclude,
        per_file_ignores=parent.per_file_ignores + child.per_file_ignores,
        severity={**parent.severity, **child.severity},
        target_versions={**parent.target_versions, **child.target_versions},
        options={
            code: {**parent.options.get(code, {}), **child.options.get(code, {})}
            for code in sorted(set(parent.options) | set(child.options))
        },
    )


# what the memo holds for a pyproject.toml that has no [tool.fp8lint] table (its bytes as key)
_NO_TABLE = {"pyproject-without-table": True}


class _NoMemo(Exception):
    """The project's files do not say plainly where the cache is: no memo this run (loading
    them reports why)."""


@record(frozen=True)
class _Peek:
    has_table: bool
    cache: bool | None = None  # None: not set by this file
    cache_dir: str | None = None
    extend: str | None = None


class Resolver:
    """Finds the closest config for each path (cached per folder), or uses one forced file.

    `remember`: keep validated files in the cache directory (and use what is kept there);
    `cache_dir`: that directory when the command line or FP8LINT_CACHE_DIR names it."""

    def __init__(
        self,
        forced: str | None = None,
        *,
        remember: bool = False,
        cache_dir: str | None = None,
        # what lays inline `--config KEY=VALUE` settings over each configuration found
        overlay: Callable[[Config], Config] | None = None,
    ) -> None:
        self._overlay = overlay
        self._remember = remember
        self._cache_dir = cache_dir
        self._memo: ConfigMemo | None = None
        self._memo_chosen = False
        self._bytes: dict[str, bytes] = {}
        self._tables: dict[str, dict[str, Any] | None] = {}
        self._files: dict[str, tuple[Config, str | None] | None] = {}
        self._known: dict[str, Any] = {}  # memo key -> validated data found this run
        self._forced_path = os.path.abspath(forced) if forced is not None else None
        self.forced = self.load(forced) if forced is not None else None
        if self.forced is not None:  # --config: relative paths are relative to the CWD
            self.forced = self._over(replace(self.forced, root=os.getcwd()))
        self._by_dir: dict[str, Config] = {}  # with the inline settings; `_found`: without
        self._found: dict[str, Config] = {}
        self._by_parent: dict[str, Config] = {}  # a file's folder as written -> its config

    # ------------------------------------------------------------------ one file

    def _data(self, path: str) -> bytes:
        if path not in self._bytes:
            self._bytes[path] = _read(path)
        return self._bytes[path]

    def _table(self, path: str) -> dict[str, Any] | None:
        if path not in self._tables:
            data = self._data(path)
            if _is_pyproject(path) and not _may_name_fp8lint(data):
                self._tables[path] = None  # no [tool.fp8lint] can be in it: not parsed
            else:
                self._tables[path] = _table_in(path, _parse_toml(path, data))
        return self._tables[path]

    def _remembered(
        self, memo: ConfigMemo, key: str, path: str
    ) -> tuple[Config, str | None] | bool | None:
        """The file's validated data from this run or the memo, if it is there and sound;
        False when the memo knows these bytes as a pyproject.toml without the table; None
        when it knows nothing."""
        from fp8lint.engine.limits import quietly

        data = self._known.get(key)
        if data is None:
            data = quietly(functools.partial(memo.get, key))
        if data is None:
            return None
        if data == _NO_TABLE:
            self._known[key] = data
            return False
        try:
            found = from_validated(data, path)
        except ValueError:
            return None
        self._known[key] = data
        return found

    def _file(self, path: str) -> tuple[Config, str | None] | None:
        """One file's `Config` and `extend` reference (None: a pyproject without the table):
        from the memo when its bytes validated before (or were a pyproject without the
        table), else validated now (and remembered)."""
        if path in self._files:
            return self._files[path]
        from fp8lint.engine.limits import quietly

        memo = self._run_memo()
        key = memo.key(_is_pyproject(path), self._data(path)) if memo is not None else ""
        known = self._remembered(memo, key, path) if memo is not None else None
        found = known if isinstance(known, tuple) else None
        if known is None:
            table = self._table(path)
            if table is not None:
                data = validate_table(path, table)
                if memo is not None:
                    self._known[key] = data
                    quietly(functools.partial(memo.put, key, data))
                found = from_validated(data, path)
            elif memo is not None:  # a pyproject.toml without the table: not parsed again
                self._known[key] = _NO_TABLE
                quietly(functools.partial(memo.put, key, _NO_TABLE))
        self._files[path] = found
        return found

    def load(self, path: str, seen: tuple[str, ...] = ()) -> Config:
        """A config file with its `extend` chain applied (child keys win; lists of extras
        merge)."""
        path = os.path.abspath(path)
        if path in seen:
            raise ConfigError(f"{path}: `extend` cycle through {', '.join(seen)}")
        if len(seen) > MAX_EXTEND_DEPTH:
            raise ConfigError(f"{path}: `extend` chain deeper than {MAX_EXTEND_DEPTH} files")
        found = self._file(path)
        if found is None:
            raise ConfigError(f"{path}: no [tool.fp8lint] table")
        child, parent_ref = found
        if parent_ref is None:
            return child
        parent = self.load(os.path.join(os.path.dirname(path), parent_ref), (*seen, path))
        return merge(parent, child)

    # ------------------------------------------------------------------ the memo

    def _run_memo(self) -> ConfigMemo | None:
        if not self._memo_chosen:
            self._memo_chosen = True
            try:
                self._memo = self._choose_memo()
            except (_NoMemo, OSError):
                self._memo = None
        return self._memo

    def _choose_memo(self) -> ConfigMemo | None:
        """The cache directory of this run, as `engine.check.cache_location` finds it from the
        loaded configuration, but found before loading: `cache` and `cache-dir` along the
        project configuration's `extend` chain, each file read from the memo in the default
        place (validated data, no TOML parsed) or else parsed, unvalidated.  Values of the
        wrong type mean no memo this run; loading the file then reports them."""
        if not self._remember:
            return None
        from fp8lint.engine.cache_files import ConfigMemo, location

        if self._cache_dir:
            return ConfigMemo(location(".", None, self._cache_dir))
        cwd = os.getcwd()
        default: ConfigMemo | None = None

        def peek(path: str) -> _Peek:  # a candidate's memo is the default one of its folder
            return self._peek(path, default or ConfigMemo(location(os.path.dirname(path), None)))

        project = self._forced_path
        if project is None:
            project = self._find_project(cwd, peek)
        root = cwd if self._forced_path is not None or project is None else os.path.dirname(project)
        default = ConfigMemo(location(root, None))
        if project is None:
            return default
        cache: bool | None = None
        cache_dir: str | None = None
        path, seen = project, [project]
        while True:
            found = peek(path)
            if not found.has_table:
                raise _NoMemo
            cache = found.cache if cache is None else cache
            cache_dir = found.cache_dir if cache_dir is None else cache_dir
            if found.extend is None:
                break
            path = os.path.abspath(os.path.join(os.path.dirname(path), found.extend))
            if path in seen or len(seen) > MAX_EXTEND_DEPTH:
                raise _NoMemo
            seen.append(path)
        if cache is False:
            return None
        return default if cache_dir is None else ConfigMemo(location(root, cache_dir))

    def _peek(self, path: str, memo: ConfigMemo) -> _Peek:
        """`cache`, `cache-dir` and `extend` of one file: validated, from the memo, or as
        parsed (then only values of the right type are accepted)."""
        try:
            found = self._remembered(memo, memo.key(_is_pyproject(path), self._data(path)), path)
            if found is False:
                return _Peek(False)
            if isinstance(found, tuple):
                cfg, extend = found
                return _Peek(True, cfg.cache, cfg.cache_dir, extend)
            table = self._table(path)
        except ConfigError:
            raise _NoMemo from None
        if table is None:
            return _Peek(False)
        cache, cache_dir, extend = table.get("cache"), table.get("cache-dir"), table.get("extend")
        if cache is not None and not isinstance(cache, bool):
            raise _NoMemo
        if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir.strip()):
            raise _NoMemo
        if extend is not None and not isinstance(extend, str):
            raise _NoMemo
        return _Peek(True, cache, cache_dir, extend)

    @staticmethod
    def _find_project(folder: str, peek: Callable[[str], _Peek]) -> str | None:
        """The configuration file that applies to `folder` (as `_for_dir` finds it)."""
        while True:
            for name in CONFIG_NAMES:
                candidate = os.path.join(folder, name)
                if os.path.isfile(candidate) and (
                    name != "pyproject.toml" or peek(candidate).has_table
                ):
                    return candidate
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent

    # ------------------------------------------------------------------ lookups

    def for_file(self, path: str) -> Config:
        """`for_path` for a path known to be a file (one found by walking a folder): one
        lookup per folder as written, no `stat`."""
        if self.forced is not None:
            return self.forced
        head = os.path.dirname(path)
        found = self._by_parent.get(head)
        if found is None:
            found = self._by_parent[head] = self._for_dir(os.path.dirname(os.path.abspath(path)))
        return found

    def for_path(self, path: str) -> Config:
        if self.forced is not None:
            return self.forced
        folder = (
            os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(path)
            else (os.path.abspath(path))
        )
        return self._for_dir(folder)

    def _over(self, cfg: Config) -> Config:
        return cfg if self._overlay is None else self._overlay(cfg)

    def _for_dir(self, folder: str) -> Config:
        """The configuration of `folder`, with the inline settings laid over it."""
        if folder not in self._by_dir:
            self._by_dir[folder] = self._over(self._found_for_dir(folder))
        return self._by_dir[folder]

    def _found_for_dir(self, folder: str) -> Config:
        if folder in self._found:
            return self._found[folder]
        found: Config | None = None
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and (
                name != "pyproject.toml" or self._file(candidate) is not None
            ):
                found = self.load(candidate)
                break
        if found is None:
            parent = os.path.dirname(folder)
            found = Config() if parent == folder else self._found_for_dir(parent)
        self._found[folder] = found
        return found


def matches(patterns: tuple[str, ...], path: str, root: str) -> bool:
    """gitignore-style match of `path` against patterns relative to `root`."""
    if not patterns:
        return False
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel.startswith("../"):
        return False
    spec = _spec(patterns)
    return bool(spec.match_file(rel) or (os.path.isdir(path) and spec.match_file(rel + "/")))


@functools.lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]) -> Any:
    """The compiled patterns (compiled once per run, not once per file)."""
    from fp8lint.engine.units import path_spec

    return path_spec(patterns)
