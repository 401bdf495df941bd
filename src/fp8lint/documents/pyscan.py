"""The scan that bounds what reaches libcst, and the pruning of definitions nobody reads.

libcst's native parser recurses on the machine stack and takes quadratic time on long
operator chains, so `scan` reads the text once with a small tokenizer (strings, comments,
brackets, line breaks) first: brackets nest at most 200 deep (CPython's own limit), a chain
of operators or attributes at most `MAX_CHAIN` long, and the total nesting work per file is
bounded; beyond that the file is a clear "nesting too deep to read" error, never a crash.
The scan also finds the top-level statements, so that `prune` can leave out the top-level
`def`s and `class`es that cannot matter to the caller: their characters, except line breaks,
are dropped, so every kept line keeps its number and its columns.  Plain text work: no libcst.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from fp8lint.documents.text import ParseError

MAX_BRACKETS = 200  # CPython's own limit on nested brackets
MAX_CHAIN = 1_000  # operators, attributes, calls and subscripts chained at one bracket level
MAX_BOOL = 10_000  # `and` / `or` terms at one bracket level (libcst nests them)
MAX_DEPTH = 1_200  # brackets plus chained operators, everything enclosing one point
# libcst's parse time grows with the square of a nesting or a chain: the summed depth of
# every bracket, and of every chained operator, is bounded per file (a few seconds at most)
MAX_BRACKET_WORK = 500_000
MAX_CHAIN_WORK = 2_000_000

DEEP = "nesting too deep to read"


# ------------------------------------------------------------------------------ the scan

_TOKEN = re.compile(
    r"""
    (?P<string>(?:(?<!\w)[rRbBuUfFtT]{1,2})?(?:'''|\"\"\"|'|"))
  | (?P<comment>\#[^\r\n]*)
  | (?P<cont>\\(?:\r\n|\r|\n))
  | (?P<newline>\r\n|\r|\n)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
    """,
    re.VERBOSE,
)
_STRING_END = {
    "'''": re.compile(r"(?:[^'\\]|\\.|'(?!''))*'''", re.DOTALL),
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.DOTALL),
    "'": re.compile(r"(?:[^'\\\r\n]|\\(?:\r\n|.|\n))*'", re.DOTALL),
    '"': re.compile(r'(?:[^"\\\r\n]|\\(?:\r\n|.|\n))*"', re.DOTALL),
}
# the tokens of one long logical line that make libcst's tree deeper
_CHAIN_TOKEN = re.compile(
    r"""
    (?P<string>(?:(?<!\w)[rRbBuUfFtT]{1,2})?(?:'''|\"\"\"|'|"))
  | (?P<comment>\#[^\r\n]*)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<reset>:=|->|\*\*=|//=|>>=|<<=|[-+*/%@&|^]=|[=!<>]=|[,;:=<>])
  | (?P<op>\*\*|//|<<|>>|[-+*/%@&|^~.])
  | (?P<word>[^\W\d]\w*)
  | (?P<number>\d[\w.]*)
    """,
    re.VERBOSE,
)
_DEEPENING_WORDS = frozenset({"not", "lambda", "await", "if", "else"})
_BOOL_WORDS = frozenset({"and", "or"})
_LONG_LINE = MAX_CHAIN  # a logical line shorter than this cannot hold a chain that long
_TOP = re.compile(r"(?:async[ \t]+def|def|class)\b|@")


@dataclass
class Shape:
    """What the scan found: the top-level statements (start index, prunable) and whether the
    text tokenized cleanly (unclosed strings or brackets leave libcst to report them)."""

    statements: list[tuple[int, bool]] = field(default_factory=list)
    broken: bool = False
    plain: bool = True  # no form feed, no odd line start: statements can be left out
    # comments and string literals (not f-strings, whose fields are code): not code words
    prose: list[tuple[int, int]] = field(default_factory=list)


def _line_column(text: str, index: int) -> tuple[int, int]:
    """1-based line and character column of `index` (CRLF, CR and LF end lines)."""
    head = text[:index]
    line = head.count("\n") + head.count("\r") - head.count("\r\n") + 1
    begin = max(head.rfind("\n"), head.rfind("\r")) + 1
    return line, index - begin + 1


def _too_deep(text: str, index: int) -> ParseError:
    return ParseError(DEEP, *_line_column(text, index))


def scan(text: str) -> Shape:
    """Tokenize `text` just enough to bound its nesting and find its top-level statements.
    Raises `ParseError` for a null byte or nesting beyond the bounds above."""
    nul = text.find("\x00")
    if nul != -1:
        raise ParseError(
            "Python syntax error: source code contains a null byte", *_line_column(text, nul)
        )
    shape = Shape()
    statements = shape.statements
    n = len(text)
    if n and text[0] not in " \t\r\n#":
        statements.append((0, bool(_TOP.match(text, 0))))
    shape.plain = not text.startswith("\x0c")
    depth = 0
    work = 0
    logical = 0  # where the current logical line starts
    pos = 0
    finditer = _TOKEN.finditer
    while pos < n:
        for m in finditer(text, pos):
            kind = m.lastgroup
            if kind == "newline":
                if depth == 0:
                    start = m.start()
                    if start - logical >= _LONG_LINE:
                        _chains(text, logical, start)
                    logical = nxt = m.end()
                    if nxt < n:
                        ch = text[nxt]
                        if ch not in " \t\r\n#":
                            if ch == "\x0c":
                                shape.plain = False
                            statements.append((nxt, bool(_TOP.match(text, nxt))))
                continue
            if kind == "open":
                depth += 1
                work += depth
                if depth > MAX_BRACKETS or work > MAX_BRACKET_WORK:
                    raise _too_deep(text, m.start())
                continue
            if kind == "close":
                if depth == 0:
                    shape.broken = True
                else:
                    depth -= 1
                continue
            if kind == "string":
                token = m.group()
                prefix = token.rstrip("'\"")
                end = _STRING_END[token[len(prefix) :]].match(text, m.end())
                if end is None:
                    shape.broken = True
                    return shape
                if "f" in prefix.lower() or "t" in prefix.lower():
                    if depth + _bracket_depth(text, m.end(), end.end()) > MAX_BRACKETS:
                        raise _too_deep(text, m.start())
                else:
                    shape.prose.append((m.start(), end.end()))
                pos = end.end()
                break  # go on after the string
            if kind == "comment":
                shape.prose.append((m.start(), m.end()))
        else:
            break
    if depth != 0:
        shape.broken = True
    elif n - logical >= _LONG_LINE:
        _chains(text, logical, n)
    return shape


def _bracket_depth(text: str, start: int, end: int) -> int:
    """The deepest bracket nesting inside an f-string: its replacement fields are code."""
    deepest = depth = 0
    for m in re.finditer(r"[(\[{]|[)\]}]", text[start:end]):
        depth = depth + 1 if m.group() in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def _chains(text: str, start: int, end: int) -> None:
    """Bound the operator chains of one long logical line: each bracket level counts the
    operators, attributes, calls and subscripts chained in it (a comma or `=` ends a chain);
    libcst builds one tree level for each and parses such chains in quadratic time."""
    chain = [0]
    bools = [0]
    total = 0
    work = 0
    operand = False  # the previous token ends an operand (a call or subscript may follow)
    pos = start
    while pos < end:
        for m in _CHAIN_TOKEN.finditer(text, pos, end):
            kind = m.lastgroup
            if kind == "string":
                token = m.group()
                prefix = token.rstrip("'\"")
                tail = _STRING_END[token[len(prefix) :]].match(text, m.end())
                if tail is None:
                    return  # unterminated: libcst reports it
                operand = True
                pos = tail.end()
                break
            if kind == "open":
                if operand:  # a call or subscript: one more link in the chain
                    chain[-1] += 1
                    total += 1
                    if chain[-1] > MAX_CHAIN:
                        raise _too_deep(text, m.start())
                chain.append(0)
                bools.append(0)
                total += 1
                operand = False
            elif kind == "close":
                if len(chain) > 1:
                    total -= chain.pop() + 1
                    bools.pop()
                operand = True
                continue
            elif kind == "reset":
                total -= chain[-1]
                chain[-1] = 0
                bools[-1] = 0
                operand = False
                continue
            elif kind == "op":
                chain[-1] += 1
                total += 1
                operand = False
            elif kind == "word":
                word = m.group()
                if word in _BOOL_WORDS:
                    bools[-1] += 1
                    if bools[-1] > MAX_BOOL:
                        raise _too_deep(text, m.start())
                    operand = False
                    continue
                if word in _DEEPENING_WORDS:
                    chain[-1] += 1
                    total += 1
                    operand = False
                else:
                    operand = True
                    continue
            elif kind == "number":
                operand = True
                continue
            else:  # a comment
                continue
            work += total
            if chain[-1] > MAX_CHAIN or total > MAX_DEPTH or work > MAX_CHAIN_WORK:
                raise _too_deep(text, m.start())
        else:
            break


def _without(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with every character of `spans`, except line breaks, left out."""
    out: list[str] = []
    last = 0
    for a, b in spans:
        out.append(text[last:a])
        out.append("".join(re.findall(r"\r\n|\r|\n", text[a:b])))
        last = b
    out.append(text[last:])
    return "".join(out)


WORD = re.compile(r"[^\W\d]\w*")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DEFINED = re.compile(r"\b(?:def|class)\s+([^\W\d]\w*)")
_ATTR_SET = re.compile(
    r"\.\s*([^\W\d]\w*)\s*(?:=(?!=)|\*\*=|//=|>>=|<<=|[-+*/%@&|^]=|[,)\]:]|\bin\b)"
)
_ATTR_READ = re.compile(r"\.\s*([^\W\d]\w*)(?!\s*\()")
_SCOPE_WORDS = re.compile(r"\b(?:global|nonlocal)\b")
_ALIAS = re.compile(r"(?<![\w.])([\w.]+)\s+as\s+([^\W\d]\w*)")


def prune(
    text: str, shape: Shape, relevant: re.Pattern[str]
) -> tuple[str, list[int], list[tuple[int, int]]]:
    """`text` without the top-level definitions that cannot change what a reader of the rest
    finds, the start index (in the new text) of each top-level statement kept, and the
    ranges left out (in `text`).

    A top-level `def` or `class` (with its decorators) is left out when it matches no
    `relevant` word (nor a name one is imported as), declares nothing `global`/`nonlocal`,
    defines no name the kept code mentions, and sets no attribute the kept code reads (words
    of code: comments and strings do not count).  Kept code grows until no left-out
    definition meets the kept code (a fixpoint), so what libcst's scope analysis sees of the
    kept code is what it would see in the whole file, and a value followed from kept code
    into a definition finds it whole."""
    starts = [s for s, _ in shape.statements]
    if shape.broken or not shape.plain or not shape.statements:
        return text, starts, []
    bounds = [*starts, len(text)]
    chunks: list[tuple[int, int, bool]] = []
    i = 0
    statements = shape.statements
    while i < len(statements):
        start, top = statements[i]
        j = i
        # decorators belong to the definition below them
        while text.startswith("@", statements[j][0]) and j + 1 < len(statements):
            j += 1
        chunks.append((start, bounds[j + 1], top and bool(_TOP.match(text, statements[j][0]))))
        i = j + 1
    code = blank(text, shape.prose)
    # names imported under another name (`import checkpoint as ckpt`): as relevant as theirs
    aliases = {b for a, b in _ALIAS.findall(code) if relevant.search(a)}
    kept_words: set[str] = set()
    kept_reads: set[str] = set()
    candidates: list[tuple[int, int, set[str], set[str]]] = []
    for start, end, top in chunks:
        body = code[start:end]
        words = set(WORD.findall(body))
        if (
            top
            and not relevant.search(text, start, end)
            and not _SCOPE_WORDS.search(body)
            and not aliases.intersection(words)
        ):
            candidates.append(
                (start, end, set(_DEFINED.findall(body)), set(_ATTR_SET.findall(body)))
            )
        else:
            kept_words |= words
            kept_reads.update(_ATTR_READ.findall(body))
    # A definition kept for its name alone (the kept code calls it, or follows a value to it)
    # matters by its binding and its own text, not by what its body mentions: its words do
    # not keep more.  One kept for an attribute it sets is read further: its words count.
    named: set[int] = set()
    changed = True
    while changed and candidates:
        changed = False
        rest = []
        for start, end, defined, sets in candidates:
            if sets & kept_reads:
                body = code[start:end]
                kept_words.update(WORD.findall(body))
                kept_reads.update(_ATTR_READ.findall(body))
                changed = True
                continue
            if start not in named and defined & kept_words:
                named.add(start)
                changed = True
            rest.append((start, end, defined, sets))
        candidates = rest
    candidates = [c for c in candidates if c[0] not in named]
    if not candidates:
        return text, starts, []
    dropped = [(a, b) for a, b, _, _ in candidates]
    pruned = _without(text, dropped)
    kept = []  # the kept statements' starts, moved by what was left out before them
    removed = 0
    d = 0
    for start in starts:
        while d < len(dropped) and dropped[d][1] <= start:
            a, b = dropped[d]
            removed += (b - a) - len(LINE_BREAK.findall(text, a, b))
            d += 1
        if d < len(dropped) and dropped[d][0] <= start < dropped[d][1]:
            continue
        kept.append(start - removed)
    return pruned, kept, dropped


_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")


def statement_lines(text: str, starts: list[int], count: int) -> list[int] | None:
    """The first line of each top-level statement libcst found (its first decorator for a
    decorated definition), from the scan's statement starts: clauses (`else:`, `except:`)
    continue the statement above them and decorators belong to the definition below.  None
    when the scan and libcst do not count the same statements."""
    lines: list[int] = []
    line = 1
    last = 0
    decorated = False
    for start in starts:
        if _CLAUSE.match(text, start):
            continue
        line += sum(1 for _ in LINE_BREAK.finditer(text, last, start))
        last = start
        if not decorated:
            lines.append(line)
        decorated = text.startswith("@", start)
    return lines if len(lines) == count else None


def blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`text` with the characters of `spans` turned into spaces (same length)."""
    if not spans:
        return text
    out: list[str] = []
    last = 0
    for a, b in spans:
        out.append(text[last:a])
        out.append(" " * (b - a))
        last = b
    out.append(text[last:])
    return "".join(out)
