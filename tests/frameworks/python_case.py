"""What the Python-family tests share: parse a snippet as a file of a given name, take its one
site, give a span as a tuple, and lint it to (code, line) pairs."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, parse_file
from fp8lint.model import Fp8Site, Span
from fp8lint.settings import RunSettings

Parse = Callable[[str], list[Fp8Site]]
One = Callable[[str], Fp8Site]
Codes = Callable[[str], list[tuple[str, int]]]


def bind(name: str) -> tuple[Parse, One, Codes]:
    """`parse`, `one` and `codes` for snippets read as a file called `name` (some families
    are recognized by the file's name as well as its text)."""

    def parse(src: str) -> list[Fp8Site]:
        return parse_file(SourceFile(name, textwrap.dedent(src)), "python")

    def one(src: str) -> Fp8Site:
        sites = parse(src)
        assert len(sites) == 1, [s.kind for s in sites]
        return sites[0]

    def codes(src: str) -> list[tuple[str, int]]:
        diags, _ = lint_text(name, textwrap.dedent(src), "python", RunSettings())
        return [(d.code, d.line) for d in diags]

    return parse, one, codes


def at(span: Span | None) -> tuple[int, int, int, int]:
    assert span is not None
    return (span.line, span.column, span.end_line, span.end_column)
