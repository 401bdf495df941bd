"""Where a file's comments are, in its own syntax: the only text a suppression may live in.

A `# fp8lint: ignore[...]` inside a string literal is data (a test's fixture, a help text),
not a suppression: treating it as one hides findings, reports it as unused, and lets a fix
cut the string.  So each syntax finds its comments with its own lexer: Python's tokenizer,
PyYAML's scanner (a `#` outside every scalar token), a TOML and a shell scan that skip
quoted strings.  JSON has none.  Only called when a file contains a suppression-like text,
so a clean file pays nothing.
"""

from __future__ import annotations

import io
import re
import tokenize

Spans = list[tuple[int, int]]


def comment_spans(text: str, kind: str) -> Spans:
    """The (start, end) character ranges of the comments of `text` read as `kind`, in order.
    A file its lexer cannot read to the end keeps the comments before the failure."""
    if kind == "python":
        return _python(text)
    if kind == "yaml":
        return _yaml(text)
    if kind == "toml":
        return _hash_outside_quotes(text, ('"""', "'''", '"', "'"), escapes='"')
    if kind == "shell":
        return _shell(text)
    return []


def inside(spans: Spans, index: int, starts: list[int] | None = None) -> bool:
    """Whether `index` falls inside one of `spans` (sorted, not overlapping); `starts`, their
    starts, when the caller asks many times."""
    import bisect

    if starts is None:
        starts = [start for start, _ in spans]
    i = bisect.bisect_right(starts, index) - 1
    return i >= 0 and index < spans[i][1]


def _python(text: str) -> Spans:
    starts: list[int] = []
    offset = 0
    lines = io.StringIO(text)

    def readline() -> str:
        nonlocal offset
        line = lines.readline()
        starts.append(offset)
        offset += len(line)
        return line

    out: Spans = []
    try:
        for tok in tokenize.generate_tokens(readline):
            if tok.type == tokenize.COMMENT:
                (row, col), (_, end) = tok.start, tok.end
                base = starts[row - 1]
                out.append((base + col, base + end))
    except (tokenize.TokenError, SyntaxError, IndexError):
        pass
    return out


def _yaml(text: str) -> Spans:
    """A `#` that starts a comment: preceded by a blank or a line start, outside every
    scalar token (a quoted or block scalar may hold `#` as text)."""
    import yaml

    scalars: Spans = []
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, yaml.ScalarToken):
                scalars.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError:
        stop = scalars[-1][1] if scalars else 0
        text = text[:stop]  # past the failure nothing is known to be a comment
    out: Spans = []
    starts = [start for start, _ in scalars]
    for m in re.finditer(r"(?:(?<=[ \t])|^)#", text, re.MULTILINE):
        at = m.start()
        if (out and at < out[-1][1]) or inside(scalars, at, starts):
            continue  # within an earlier comment, or text of a scalar
        end = _line_end(text, at)
        out.append((at, end))
    return out


def _line_end(text: str, at: int) -> int:
    end = at
    while end < len(text) and text[end] not in "\r\n":
        end += 1
    return end


def _hash_outside_quotes(text: str, quotes: tuple[str, ...], escapes: str) -> Spans:
    """Comments of a syntax whose strings are quoted (TOML): `#` to the end of the line,
    outside quotes; a backslash escapes inside the quote characters in `escapes`."""
    out: Spans = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            end = _line_end(text, i)
            out.append((i, end))
            i = end
            continue
        quote = next((q for q in quotes if text.startswith(q, i)), None)
        if quote is None:
            i += 1
            continue
        j = i + len(quote)
        multiline = len(quote) == 3
        while j < n and not text.startswith(quote, j):
            if text[j] == "\\" and quote[0] in escapes:
                j += 1
            elif text[j] == "\n" and not multiline:
                break  # an unclosed one-line string ends at its line
            j += 1
        i = j + len(quote)
    return out


def _shell(text: str) -> Spans:
    from fp8lint.documents.shell import comments

    return comments(text)
