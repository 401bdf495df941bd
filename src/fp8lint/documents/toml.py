"""TOML documents: values from `tomllib`, positions from a line scan of the same text.

`tomllib` keeps no positions, so a small scanner records where each `key = value` of each
`[table]` is written (key start, value start and end, arrays spanning lines included).
Recognizers get both: the parsed document and a `where(table, key)` lookup.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from fp8lint.documents.text import ParseError, SourceFile

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


@dataclass(frozen=True)
class Located:
    key_start: int
    value_start: int
    value_end: int


def _parts(dotted: str) -> tuple[str, ...]:
    out = []
    for raw in re.findall(r'"[^"]*"|\'[^\']*\'|[^.\s]+', dotted):
        out.append(raw[1:-1] if raw[:1] in "\"'" else raw)
    return tuple(out)


def _value_end(text: str, start: int) -> int:
    """End index of a TOML value starting at `start` (strings, nested arrays/tables)."""
    i, depth, n = start, 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith('"""', i) or text.startswith("'''", i):
            close = text.find(text[i : i + 3], i + 3)
            i = n if close == -1 else close + 3
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if (ch == '"' and text[j] == "\\") else 1
            i = j + 1
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "#" or ch == "\n":
            if depth <= 0:
                break
            if ch == "#":
                nl = text.find("\n", i)
                i = n if nl == -1 else nl
                continue
        i += 1
    end = i
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    return end


def scan(text: str) -> dict[tuple[str, ...], Located]:
    """(table..., key...) -> where it is written."""
    out: dict[tuple[str, ...], Located] = {}
    table: tuple[str, ...] = ()
    pos = 0
    skip_until = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        if start < skip_until:
            continue
        m = _HEADER.match(line)
        if m and not _KEY.match(line):
            table = _parts(m.group(1))
            continue
        k = _KEY.match(line)
        if not k:
            continue
        value_start = start + k.end()
        while value_start < len(text) and text[value_start] in " \t":
            value_start += 1
        value_end = _value_end(text, value_start)
        out[table + _parts(k.group(1))] = Located(start + k.start(1), value_start, value_end)
        skip_until = value_end
    return out


@dataclass
class TomlDoc:
    data: dict[str, Any]
    where: dict[tuple[str, ...], Located]

    def get(self, *path: str) -> Any:
        node: Any = self.data
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def has(self, *path: str) -> bool:
        return self.get(*path) is not None


def load(file: SourceFile) -> TomlDoc:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        data = tomllib.loads(file.text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+), column (\d+)", str(exc))
        if m:
            line, col = int(m.group(1)), int(m.group(2))
        elif "end of document" in str(exc):
            end = file.pos_of_index(len(file.text))
            line, col = end.line + 1, end.column + 1
        else:
            line, col = 1, 1
        message = str(exc).split(" (at ")[0]
        raise ParseError(f"TOML syntax error: {message}", line, col) from None
    except RecursionError:
        raise ParseError("nesting too deep to read") from None
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise ParseError(f"TOML value error: {str(exc).split(';')[0]}") from None
    return TomlDoc(data, scan(file.text))
