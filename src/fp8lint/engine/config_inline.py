"""`--config 'KEY = VALUE'`: one configuration setting on the command line, as ruff's inline
`--config`.  Each is one TOML key and value (dotted keys reach into tables:
`severity.FP8101 = "error"`, `options.FP8102.min-amax-history-len = 32`), parsed with
tomllib and validated by the same pydantic model as a configuration file, so an unknown key
or a wrong value is the same error, naming `--config`.  The settings are laid over every
file's configuration (`Resolver(overlay=...)`), after the files and their `extend` chains.

A `--config` argument that names an existing file, or has no `=`, is a configuration file.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence

from fp8lint.engine.config import Config, ConfigError, from_validated, merge, validate_table
from fp8lint.records import replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WHERE = "--config"


def is_inline(value: str) -> bool:
    """Whether a `--config` argument is a setting rather than a file's path."""
    return "=" in value and not os.path.isfile(value)


def parse(settings: Sequence[str]) -> Config | None:
    """The settings as one `Config` (None when there are none); a ConfigError names the
    first one that is not a single TOML `KEY = VALUE` or that the model refuses."""
    if not settings:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    table: dict[str, Any] = {}
    for text in settings:
        try:
            one = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(
                f"{WHERE} {text!r}: neither a file nor a TOML `KEY = VALUE` setting ({exc})"
            ) from None
        if len(one) != 1 or _leaves(one) != 1:
            raise ConfigError(f"{WHERE} {text!r}: give one `KEY = VALUE` setting per --config")
        _deep_update(table, one)
    if "extend" in table:
        raise ConfigError(f"{WHERE}: `extend` names a file: give it as --config FILE")
    cfg, _extend = from_validated(validate_table(WHERE, table), os.path.join(os.getcwd(), "-"))
    return cfg


def overlay_of(settings: Sequence[str]) -> tuple[Callable[[Config], Config] | None, bool | None]:
    """What lays the parsed `settings` over a configuration (`Resolver(overlay=...)`), and
    their `cache` (False: the configuration memo is not kept either)."""
    parsed = parse(settings)
    if parsed is None:
        return None, None
    return functools.partial(overlay, settings=parsed), parsed.cache


def overlay(base: Config, settings: Config) -> Config:
    """`base` with the inline settings laid over it: their keys win, lists of extras and
    tables (severity, options, target versions) merge; `base` keeps its file and root."""
    return replace(
        merge(base, settings),
        path=base.path,
        root=base.root,
        written=base.written | settings.written,
    )


def _leaves(table: dict[str, Any]) -> int:
    return sum(_leaves(v) if isinstance(v, dict) and v else 1 for v in table.values())


def _deep_update(into: dict[str, Any], new: dict[str, Any]) -> None:
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _deep_update(into[key], value)
        else:
            into[key] = value
