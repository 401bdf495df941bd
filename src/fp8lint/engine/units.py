"""Sizes, durations and path patterns as people write them, in configuration files and on the
command line.

Plain functions on the standard library: the configuration model (pydantic), its loader and the
command line all parse `max-file-size` and `file-timeout` the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

# compiled on use (`re` caches it): `re` is not imported on the start-up path
_SIZE = r"(?i)^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|kib|mib|gib)?\s*$"
SIZE_PATTERN = r"^\s*\d+(\.\d+)?\s*([bB]|[kKmMgG][iI]?[bB])?\s*$"  # the same, for JSON Schema
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
        import re

        m = re.match(_SIZE, value)
        if m is None:
            raise ValueError(f"not a size: {value!r} (write e.g. 16MiB, 512KiB, 2MB or bytes)")
        size = int(float(m.group(1)) * _UNITS[(m.group(2) or "b").lower()])
    else:
        raise ValueError(f"not a size: {value!r} (an integer of bytes or a string like 16MiB)")
    if size < 1:
        raise ValueError(f"a size must be at least 1 byte, got {value!r}")
    return size


def comma_list(value: str) -> list[str]:
    """`FP81, FP82,` as a list of its items: stripped, empty ones left out (`--select`,
    `--per-file-ignores` codes)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def parse_seconds(value: object) -> float:
    """A time limit in seconds (int or float, 0 for none); ValueError for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"not a number of seconds: {value!r}")
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"must be a finite number of seconds >= 0 (0: no limit), got {value!r}")
    return float(value)


def path_spec(lines: Iterable[str]) -> Any:
    """Git-style path patterns (`.gitignore`, `exclude`, `per-file-ignores`) as one
    `pathspec.PathSpec`.  pathspec 1.x calls them "gitignore" and deprecates the old
    "gitwildmatch" name, which older releases know alone."""
    import pathspec

    try:
        return pathspec.PathSpec.from_lines("gitignore", lines)
    except (KeyError, LookupError):  # pathspec before "gitignore" was registered
        return pathspec.PathSpec.from_lines("gitwildmatch", lines)
