"""Configuration: `[tool.fp8lint]` in `pyproject.toml`, or `.fp8lint.toml` / `fp8lint.toml`.

As in ruff, the closest configuration file to a linted file applies (`.fp8lint.toml`, then
`fp8lint.toml`, then a `pyproject.toml` that has a `[tool.fp8lint]` table, in each folder from
the file's upward), configs are not merged implicitly but may `extend = "../base.toml"`, paths
resolve against the file that names them, and `--config FILE` applies one file to everything.
Keys are validated (an unknown key or a wrong type names the file and the key and exits 2);
rule options are validated against what each rule declares.  `max-file-size` and
`file-timeout` apply per file like the rule settings; `cache` and `cache-dir` are read from the
configuration that applies to the working directory (the project root), as ruff's are.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fp8lint.diagnostics import LocatedError, Severity

CONFIG_NAMES = (".fp8lint.toml", "fp8lint.toml", "pyproject.toml")
LEVELS = ("error", "warning", "info")


class ConfigError(LocatedError):
    """A configuration problem: reported with the file and key, exit code 2."""


@dataclass(frozen=True)
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
        }


def _load_toml(path: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return data


def table_of(path: str) -> dict[str, Any] | None:
    """The fp8lint table of a config file, None for a pyproject without one."""
    data = _load_toml(path)
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool")
        if not isinstance(tool, dict) or "fp8lint" not in tool:
            return None
        table = tool["fp8lint"]
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.fp8lint] must be a table")
        return table
    return data


def _strings(path: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return tuple(value)


def _known_codes() -> set[str]:
    """Codes and names of every rule, read from the rule pages (no rule module imported)."""
    from fp8lint.rules import page_titles

    titles = page_titles()
    return set(titles) | set(titles.values())


def _declared_options() -> dict[str, tuple[str, Any]]:
    from fp8lint.rules import all_rules

    return {o.name: (r.code, o) for r in all_rules() for o in r.options}


def _selectors(path: str, key: str, value: Any) -> tuple[str, ...]:
    items = _strings(path, key, value)
    known = _known_codes()
    for item in items:
        if item.upper() == "ALL" or item.lower() in known:
            continue
        if any(code.startswith(item.upper()) for code in known if code.startswith("FP8")):
            continue
        raise ConfigError(f"{path}: `{key}` names an unknown rule `{item}`")
    return items


_SIZE = re.compile(r"(?i)^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|kib|mib|gib)?\s*$")
_UNITS = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}


def parse_size(value: object) -> int:
    """A size in bytes from an int (bytes) or a string: `16MiB`, `512 KiB`, `2MB`, `1.5GiB`,
    `4096`.  ValueError for anything else, or for a size under one byte."""
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str):
        m = _SIZE.match(value)
        if m is None:
            raise ValueError(f"not a size: {value!r} (write e.g. 16MiB, 512KiB, 2MB or bytes)")
        size = int(float(m.group(1)) * _UNITS[(m.group(2) or "b").lower()])
    else:
        raise ValueError(f"not a size: {value!r} (an integer of bytes or a string like 16MiB)")
    if size < 1:
        raise ValueError(f"a size must be at least 1 byte, got {value!r}")
    return size


def parse_seconds(value: object) -> float:
    """A time limit in seconds (int or float, 0 for none); ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number of seconds: {value!r}")
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"must be a finite number of seconds >= 0 (0: no limit), got {value!r}")
    return float(value)


def parse_table(path: str, table: Mapping[str, Any]) -> Config:
    """A validated `Config` from one file's table (without `extend`)."""
    root = os.path.dirname(os.path.abspath(path))
    cfg = Config(path=path, root=root)
    for key, value in table.items():
        if key == "extend":
            continue
        if key == "select":
            cfg = replace(cfg, select=_selectors(path, key, value))
        elif key == "extend-select":
            cfg = replace(cfg, extend_select=_selectors(path, key, value))
        elif key == "ignore":
            cfg = replace(cfg, ignore=_selectors(path, key, value))
        elif key == "exclude":
            cfg = replace(cfg, exclude=_strings(path, key, value))
        elif key == "extend-exclude":
            cfg = replace(cfg, extend_exclude=_strings(path, key, value))
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: `per-file-ignores` must be a table of glob = [codes]")
            pfi = tuple(
                (pattern, _selectors(path, f"per-file-ignores.{pattern}", codes))
                for pattern, codes in value.items()
            )
            cfg = replace(cfg, per_file_ignores=pfi)
        elif key == "severity":
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: `severity` must be a table of CODE = level")
            from fp8lint.rules import page_titles

            by_name = {name: code for code, name in page_titles().items()}
            levels: dict[str, Severity] = {}
            for key_, level in value.items():
                code = by_name.get(key_.lower(), key_.upper())
                if code not in by_name.values():
                    raise ConfigError(f"{path}: `severity` names an unknown rule `{key_}`")
                if level not in LEVELS:
                    raise ConfigError(
                        f"{path}: `severity.{key_}` must be one of {', '.join(LEVELS)}"
                    )
                levels[code] = Severity(level)
            cfg = replace(cfg, severity=levels)
        elif key == "options":
            cfg = replace(cfg, options=parse_options(path, value))
        elif key == "fail-on":
            if value not in LEVELS:
                raise ConfigError(f"{path}: `fail-on` must be one of {', '.join(LEVELS)}")
            cfg = replace(cfg, fail_on=value)
        elif key == "rule-url-base":
            if not isinstance(value, str):
                raise ConfigError(f"{path}: `rule-url-base` must be a string")
            cfg = replace(cfg, rule_url_base=value)
        elif key == "max-file-size":
            try:
                cfg = replace(cfg, max_file_size=parse_size(value))
            except ValueError as exc:
                raise ConfigError(f"{path}: `max-file-size`: {exc}") from None
        elif key == "file-timeout":
            try:
                cfg = replace(cfg, file_timeout=parse_seconds(value))
            except ValueError as exc:
                raise ConfigError(f"{path}: `file-timeout`: {exc}") from None
        elif key == "cache":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: `cache` must be true or false")
            cfg = replace(cfg, cache=value)
        elif key == "cache-dir":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{path}: `cache-dir` must be a non-empty path")
            cfg = replace(cfg, cache_dir=value)
        else:
            raise ConfigError(f"{path}: unknown key `{key}`")
    return cfg


def parse_options(path: str, value: Any) -> dict[str, dict[str, Any]]:
    """`[options]` table: each name must be an option some rule declares, of its type."""
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: `options` must be a table of option = value")
    declared = _declared_options()
    out: dict[str, dict[str, Any]] = {}
    for name, raw in value.items():
        if name not in declared:
            known = ", ".join(sorted(declared))
            raise ConfigError(f"{path}: unknown rule option `{name}` (known: {known})")
        code, option = declared[name]
        ok = isinstance(raw, option.type) and not (option.type is int and isinstance(raw, bool))
        if not ok:
            raise ConfigError(
                f"{path}: rule option `{name}` must be {option.type.__name__}, got {raw!r}"
            )
        out.setdefault(code, {})[name] = raw
    return out


def load(path: str, seen: tuple[str, ...] = ()) -> Config:
    """A config file with its `extend` chain applied (child keys win; lists of extras merge)."""
    path = os.path.abspath(path)
    if path in seen:
        raise ConfigError(f"{path}: `extend` cycle through {', '.join(seen)}")
    if len(seen) > 16:
        raise ConfigError(f"{path}: `extend` chain deeper than 16 files")
    table = table_of(path)
    if table is None:
        raise ConfigError(f"{path}: no [tool.fp8lint] table")
    child = parse_table(path, table)
    parent_ref = table.get("extend")
    if parent_ref is None:
        return child
    if not isinstance(parent_ref, str):
        raise ConfigError(f"{path}: `extend` must be a path")
    parent = load(os.path.join(os.path.dirname(path), parent_ref), (*seen, path))
    return merge(parent, child, table)


def merge(parent: Config, child: Config, child_table: Mapping[str, Any]) -> Config:
    def pick(key: str, mine: Any, theirs: Any) -> Any:
        return mine if key in child_table else theirs

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
        extend_select=parent.extend_select + child.extend_select,
        extend_exclude=parent.extend_exclude + child.extend_exclude,
        per_file_ignores=parent.per_file_ignores + child.per_file_ignores,
        severity={**parent.severity, **child.severity},
        options={
            code: {**parent.options.get(code, {}), **child.options.get(code, {})}
            for code in set(parent.options) | set(child.options)
        },
    )


class Resolver:
    """Finds the closest config for each path (cached per folder), or uses one forced file."""

    def __init__(self, forced: str | None = None) -> None:
        self.forced = load(forced) if forced is not None else None
        if self.forced is not None:  # --config: relative paths are relative to the CWD
            self.forced = replace(self.forced, root=os.getcwd())
        self._by_dir: dict[str, Config] = {}
        self._by_parent: dict[str, Config] = {}  # a file's folder as written -> its config

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

    def _for_dir(self, folder: str) -> Config:
        if folder in self._by_dir:
            return self._by_dir[folder]
        found: Config | None = None
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.isfile(candidate) and (
                name != "pyproject.toml" or table_of(candidate) is not None
            ):
                found = load(candidate)
                break
        if found is None:
            parent = os.path.dirname(folder)
            found = Config() if parent == folder else self._for_dir(parent)
        self._by_dir[folder] = found
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
    import pathspec

    return pathspec.PathSpec.from_lines("gitwildmatch", patterns)
