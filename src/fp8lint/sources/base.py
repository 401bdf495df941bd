"""What every source shares: the decoded file, spans, and helpers that build settings.

A source turns one file into `Fp8Site` records.  It never imports or runs the file.  The
`Arg` type is the common currency between a file format and a framework's meaning: a YAML
`MODEL_ARGS` entry, a Python keyword argument and (later) a shell flag all become `Arg`s,
and `frameworks/` turns `Arg`s into settings.

Records are built with `model_construct` (no validation, no schema build: see `model`), so
the values handed to these helpers must already have the field's type.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, TypeVar

from fp8lint.diagnostics import LocatedError
from fp8lint.model import Setting, SourceNote, Span, make_span
from fp8lint.tree import Node, Pos, line_starts

T = TypeVar("T")


class SourceFile:
    """A decoded file with the tables needed to turn positions into spans."""

    def __init__(self, path: str, text: str, encoding: str = "utf-8") -> None:
        self.path = path
        self.text = text
        self.encoding = encoding
        self._line_starts: list[int] | None = None
        self._ascii = text.isascii()

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = line_starts(self.text)
        return self._line_starts

    def byte_offset(self, index: int) -> int:
        if self._ascii:
            return index
        return len(self.text[:index].encode(self.encoding, errors="surrogatepass"))

    def pos_of_index(self, index: int) -> Pos:
        starts = self.line_starts
        line = bisect.bisect_right(starts, index) - 1
        return Pos(line, index - starts[line], index)

    def span(self, start: Pos, end: Pos) -> Span:
        owner = start.origin
        if owner is not None and owner is not self and isinstance(owner, SourceFile):
            return owner.span(start, end)  # a node merged in from another file
        return make_span(
            self.path,
            start.line + 1,
            start.column + 1,
            end.line + 1,
            end.column + 1,
            self.byte_offset(start.index),
            self.byte_offset(end.index),
        )

    def span_of(self, node: Node) -> Span:
        return self.span(node.start, node.end)

    def span_of_indices(self, start: int, end: int) -> Span:
        return self.span(self.pos_of_index(start), self.pos_of_index(end))

    def line_text(self, line: int) -> str:
        starts = self.line_starts
        if line < 1 or line > len(starts):
            return ""
        end = starts[line] if line < len(starts) else len(self.text)
        return self.text[starts[line - 1] : end].rstrip("\r\n")


@dataclass(frozen=True)
class Arg:
    """One written key/flag/keyword and its value, as a framework sees it.

    `value` is the parsed value (bool True for a bare flag); `known` is False when the value
    could not be read statically (an interpolation that did not resolve, a variable).
    """

    key: str
    value: Any
    span: Span  # the whole `key: value` (or flag) text
    value_span: Span
    known: bool = True
    raw: str | None = None
    note: str | None = None
    via: tuple[Span, ...] = ()


def written(arg: Arg, value: Any, note: str | None = None) -> Setting[Any]:
    return Setting[Any].model_construct(
        value=value if arg.known else None,
        known=arg.known,
        provenance="written",
        span=arg.value_span,
        key=arg.key,
        raw=arg.raw,
        note=note or arg.note,
        via=arg.via,
        entry=arg.span,
    )


def default(
    value: Any, of: str, key: str, span: Span | None, note: str | None = None
) -> Setting[Any]:
    return Setting[Any].model_construct(
        value=value, known=True, provenance="default", span=span, key=key, default_of=of, note=note
    )


def note(kind: str, arg: Arg, message: str, replacement: str | None = None) -> SourceNote:
    return SourceNote.model_construct(
        kind=kind, key=arg.key, span=arg.span, message=message, replacement=replacement
    )


def invalid_note(arg: Arg, expected: str) -> SourceNote:
    """A value of the wrong type or outside the allowed set (reported by FP8401)."""
    shown = arg.raw if arg.raw is not None else repr(arg.value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return SourceNote.model_construct(
        kind="invalid-value",
        key=arg.key,
        span=arg.value_span,
        message=f"`{arg.key}` is {shown}; {expected}",
    )


class ParseError(LocatedError):
    """A file that cannot be read as its format: reported as FP8001 at `line`:`column`."""
