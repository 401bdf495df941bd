"""In-place editors, one per syntax: where a value's text sits, how a literal is written, where
a new entry goes and what deleting an entry removes.

Editors never re-serialize a document: every operation is a character range of the decoded
text and the text to put there, so everything outside it stays byte-for-byte the same.  They
know syntax only; which key a fix writes and what value it means is the framework writer's
business (`fp8lint.frameworks.writer`).  An operation that cannot be done safely raises
`CannotEdit`, and the finding keeps its advice without an automatic fix.
"""

from __future__ import annotations

import bisect
import json
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from fp8lint.documents.text import SourceFile
    from fp8lint.model import EditInfo, Span

Scalar = bool | int | float | str


class CannotEdit(Exception):
    """The edit cannot be made here (the reason is shown to the user)."""


def newline_of(text: str) -> str:
    """The file's own line ending, for inserted lines."""
    for i, ch in enumerate(text):
        if ch == "\n":
            return "\n"
        if ch == "\r":
            return "\r\n" if text[i + 1 : i + 2] == "\n" else "\r"
    return "\n"


class Editor:
    """Edits of one container (a mapping, a command, a call) of one file."""

    syntax: ClassVar[str] = ""

    def __init__(self, file: SourceFile, container: EditInfo) -> None:
        self.file = file
        self.container = container

    # -- positions ----------------------------------------------------------------------
    def range_of(self, span: Span) -> tuple[int, int]:
        """Character indices of `span`; a span in another file (a merged parent, a script's
        override) cannot be edited from this one."""
        if span.path != self.file.path:
            raise CannotEdit(f"the value is written in {span.path}")
        starts = self.file.line_starts

        def index(line: int, column: int) -> int:
            return starts[min(line - 1, len(starts) - 1)] + column - 1

        return index(span.line, span.column), index(span.end_line, span.end_column)

    def value_range(self, span: Span) -> tuple[int, int]:
        """The range of a scalar value's own text."""
        return self.range_of(span)

    def line_bounds(self, index: int) -> tuple[int, int | None]:
        """(start of the line holding `index`, start of the next line or None at the last)."""
        starts = self.file.line_starts
        line = bisect.bisect_right(starts, index) - 1
        return starts[line], starts[line + 1] if line + 1 < len(starts) else None

    # -- what the syntax writes -----------------------------------------------------------
    def literal(self, value: Scalar, existing: str | None, member: bool = False) -> str:
        """`value` as this syntax writes it, in the style of the text it replaces.  `member`:
        the value names a member of an enumeration (a format), which Python code may spell
        as an attribute (`Format.HYBRID`)."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return str(value)
        quote = existing[:1] if existing and existing[:1] in ("'", '"') else None
        return f"{quote}{value}{quote}" if quote else value

    def entry(self, key: str, value_text: str) -> str:
        return f"{key}: {value_text}"

    def insertion(self, key: str, value_text: str) -> tuple[int, str]:
        """(index, text) that adds `key` with `value_text` to the container."""
        c = self.container
        entry = self.entry(key, value_text)
        if c.insert_after is None:
            if c.insert_into is None:
                raise CannotEdit("there is no place to add the key")
            return self.range_of(c.insert_into)[0], entry
        end = self.range_of(c.insert_after)[1]
        if c.flow:
            return end, f", {entry}"
        return end, f",{newline_of(self.file.text)}{c.indent}{entry}"

    def removal(self, span: Span) -> tuple[int, int]:
        """The range to delete for the entry at `span`, with its line or its comma."""
        text = self.file.text
        start, end = self.range_of(span)
        line_start, _ = self.line_bounds(start)
        alone = text[line_start:start].strip() == ""
        j = end
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        if j < len(text) and text[j] == ",":
            k = j + 1
            while k < len(text) and text[k] in " \t":
                k += 1
            if alone and text[k : k + 1] in ("\r", "\n"):
                _, after = self.line_bounds(k)
                return line_start, len(text) if after is None else after
            if not alone and text[k : k + 1] in ("\r", "\n"):  # `8, "fp8": {...},` + EOL
                i = start
                while i > line_start and text[i - 1] in " \t":
                    i -= 1
                return i, k
            return start, k  # the next key, on this line, keeps its place
        i = start - 1
        while i >= 0 and text[i] in " \t\r\n":
            i -= 1
        if i >= 0 and text[i] == ",":
            return i, end
        return start, end  # the only entry

    def rename(self, span: Span, old: str, new: str) -> tuple[int, int, str]:
        start, end = self.range_of(span)
        at = self.file.text.find(old, start, end)
        if at == -1:
            raise CannotEdit(f"`{old}` not found")
        return at, at + len(old), new


class YamlEditor(Editor):
    syntax = "yaml"

    def value_range(self, span: Span) -> tuple[int, int]:
        """The value without the `&anchor` / `!tag` written before it."""
        start, end = self.range_of(span)
        text = self.file.text
        while start < end and text[start] in "&!":
            while start < end and not text[start].isspace():
                start += 1
            while start < end and text[start].isspace():
                start += 1
        return start, end

    def literal(self, value: Scalar, existing: str | None, member: bool = False) -> str:
        """Booleans copy the case of the one replaced, or of those written next to it (`True`
        in many NeMo files)."""
        if isinstance(value, bool):
            style = existing if existing is not None else self._sibling_bool()
            if style and style[:1].isupper():
                return "True" if value else "False"
        return super().literal(value, existing, member)

    def _sibling_bool(self) -> str | None:
        for span in self.container.values.values():
            try:
                start, end = self.range_of(span)
            except CannotEdit:
                continue
            if self.file.text[start:end].lower() in ("true", "false"):
                return self.file.text[start:end]
        return None

    def insertion(self, key: str, value_text: str) -> tuple[int, str]:
        c = self.container
        if c.flow or c.insert_after is None:
            return super().insertion(key, value_text)
        end = self.range_of(c.insert_after)[1]
        nl = newline_of(self.file.text)
        _, next_line = self.line_bounds(end)
        entry = self.entry(key, value_text)
        if next_line is None:
            return len(self.file.text), f"{nl}{c.indent}{entry}"
        return next_line, f"{c.indent}{entry}{nl}"

    def removal(self, span: Span) -> tuple[int, int]:
        if self.container.flow:
            return super().removal(span)
        text = self.file.text
        start, end = self.range_of(span)
        line_start, _ = self.line_bounds(start)
        _, next_line = self.line_bounds(end)
        eol = len(text) if next_line is None else next_line
        rest = text[end:eol].strip()
        if text[line_start:start].strip() == "" and (rest == "" or rest.startswith("#")):
            return line_start, eol
        raise CannotEdit("the key shares its line with other text")


class JsonEditor(Editor):
    syntax = "json"

    def literal(self, value: Scalar, existing: str | None, member: bool = False) -> str:
        if isinstance(value, str):
            return json.dumps(value)
        return super().literal(value, existing, member)

    def entry(self, key: str, value_text: str) -> str:
        return f"{json.dumps(key)}: {value_text}"


class ShellEditor(Editor):
    """A launch command: flags are words, a new flag goes after the command's last FP8 flag."""

    syntax = "shell"

    def entry(self, key: str, value_text: str) -> str:
        return f"{key} {value_text}"

    def insertion(self, key: str, value_text: str) -> tuple[int, str]:
        c = self.container
        if c.insert_after is None:
            raise CannotEdit("there is no place to add the flag")
        return self.range_of(c.insert_after)[1], f" {self.entry(key, value_text)}"

    def removal(self, span: Span) -> tuple[int, int]:
        text = self.file.text
        start, end = self.range_of(span)
        line_start, _ = self.line_bounds(start)
        while start > line_start and text[start - 1] in " \t":
            start -= 1
        return start, end


class PythonEditor(Editor):
    """Python literals (`True`, quotes kept, `Format.HYBRID`).  Where a keyword goes in a call
    is libcst's business (`documents.python`, through `frameworks.python_writer`)."""

    syntax = "python"

    def literal(self, value: Scalar, existing: str | None, member: bool = False) -> str:
        if isinstance(value, bool):
            return "True" if value else "False"
        if isinstance(value, int | float):
            return str(value)
        quote = existing[:1] if existing and existing[:1] in ("'", '"') else None
        if member and existing and quote is None and "." in existing:
            return existing.rsplit(".", 1)[0] + "." + value  # Format.E4M3 -> Format.HYBRID
        q = quote or '"'
        return f"{q}{value}{q}"

    def entry(self, key: str, value_text: str) -> str:
        return f"{key}={value_text}"


EDITORS: dict[str, type[Editor]] = {
    cls.syntax: cls for cls in (YamlEditor, JsonEditor, ShellEditor, PythonEditor)
}


def editor_for(file: SourceFile, container: EditInfo) -> Editor:
    return EDITORS[container.syntax](file, container)
