"""A decoded file and the tables that turn positions into spans.

Every document kind keeps 0-based positions (`tree.Pos`); `SourceFile.span` turns them into
the model's 1-based `Span` with byte offsets.  `Reader` is how a framework reads a file that
a linted file pulls in (a Hydra parent, the config a script names): the engine hands one
down, bounded and recorded for the cache, so nothing below the engine opens files itself.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from fp8lint.diagnostics import LocatedError
from fp8lint.documents.tree import Node, Pos, line_starts
from fp8lint.model import Span, make_span

# a related file's bytes, or None when it is missing, unreadable or over the bounds
Reader = Callable[[str], bytes | None]


class SourceFile:
    """A decoded file with the tables needed to turn positions into spans."""

    def __init__(self, path: str, text: str, encoding: str = "utf-8") -> None:
        self.path = path
        self.text = text
        self.encoding = encoding
        self._line_starts: list[int] | None = None
        self._ascii = text.isascii()
        # a parse of this text kept by the documents module that made it (the Python module,
        # reused by the fix writer): it lives as long as the file
        self.parsed: object | None = None

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
        last = len(self.line_starts) - 1
        if end.line > last:  # libyaml ends a block at the end of a file without a newline
            end = self.pos_of_index(min(end.index, len(self.text)))  # on a line after it
        if start.line > last:
            start = self.pos_of_index(min(start.index, len(self.text)))
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


class ParseError(LocatedError):
    """A file that cannot be read as its format: reported as FP8001 at `line`:`column`."""
