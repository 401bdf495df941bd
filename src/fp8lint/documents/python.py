"""Python source read with libcst: parse, spans, literal values, names however imported, and
the CST edits that fixes are made of.  Nothing here knows a framework.

libcst is the parser and the rewriter.  Three things keep it fast and safe on any input:

* `scan` reads the text once with a small tokenizer (strings, comments, brackets, line
  breaks) before libcst sees it.  libcst's native parser recurses on the machine stack and
  takes quadratic time on long operator chains, so the scan bounds what reaches it: brackets
  nest at most 200 deep (CPython's own limit), a chain of operators or attributes at most
  `MAX_CHAIN` long, and the total nesting work per file is bounded; beyond that the file is a
  clear "nesting too deep to read" error, never a crash.  The scan also finds the top-level
  statements, so that `parse` can leave out the top-level `def`s and `class`es that cannot
  matter to the caller (`relevant`): their characters, except line breaks, are dropped from
  the text libcst parses, so every kept line keeps its number and its columns.
* `deep` runs the libcst work on a thread with a large stack and a raised recursion limit:
  legal Python may nest deeper than the default limits (an 8000-term `and`, 99 nested `if`s).
* Metadata is resolved once per file and only on demand, over the parsed nodes themselves
  (`unsafe_skip_copy`).  `ScopeProvider` runs when a caller first asks where a name comes
  from, over the module with the bodies of the top-level definitions the caller did not
  `focus` on replaced by `...` (the whole module if a question reaches into one).
  `PositionProvider` runs per top-level statement, for the statements that hold a span.

Names are resolved by libcst's scope analysis: `imported_names` gives the dotted names an
expression has through imports (aliases, `import a.b as c`, module attributes), and
`follow` reads a value through a name only when libcst's scope analysis finds exactly one
assignment to it in the scope the use sees.

Edits: a fix transforms the top-level statement that holds its target with libcst (a
keyword replaced, inserted or removed, a value replaced; libcst keeps commas, whitespace
and comments), and the edit handed on is the smallest region in which the statement's new
code differs from its old code: applying it gives the transformed module's code.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    CodePosition,
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from fp8lint.documents.text import ParseError, SourceFile
from fp8lint.documents.tree import Pos

if TYPE_CHECKING:
    from libcst.metadata import Scope

    from fp8lint.model import Span

_T = TypeVar("_T")

MAX_BRACKETS = 200  # CPython's own limit on nested brackets
MAX_CHAIN = 1_000  # operators, attributes, calls and subscripts chained at one bracket level
MAX_BOOL = 10_000  # `and` / `or` terms at one bracket level (libcst nests them)
MAX_DEPTH = 1_200  # brackets plus chained operators, everything enclosing one point
# libcst's parse time grows with the square of a nesting or a chain: the summed depth of
# every bracket, and of every chained operator, is bounded per file (a few seconds at most)
MAX_BRACKET_WORK = 500_000
MAX_CHAIN_WORK = 2_000_000
MAX_CHARS = 1_000_000  # characters of Python libcst is asked to parse in one file
_STACK = 256 * 1024 * 1024  # bytes of stack for the thread that runs libcst
_RECURSION = 100_000
_MAX_FOLLOW = 8  # how many `a = b` links a value is followed through

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


_WORD = re.compile(r"[^\W\d]\w*")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
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
    code = _blank(text, shape.prose)
    # names imported under another name (`import checkpoint as ckpt`): as relevant as theirs
    aliases = {b for a, b in _ALIAS.findall(code) if relevant.search(a)}
    kept_words: set[str] = set()
    kept_reads: set[str] = set()
    candidates: list[tuple[int, int, set[str], set[str]]] = []
    for start, end, top in chunks:
        body = code[start:end]
        words = set(_WORD.findall(body))
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
                kept_words.update(_WORD.findall(body))
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
            removed += (b - a) - len(_LINE_BREAK.findall(text, a, b))
            d += 1
        if d < len(dropped) and dropped[d][0] <= start < dropped[d][1]:
            continue
        kept.append(start - removed)
    return pruned, kept, dropped


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
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


# ------------------------------------------------------------------------- the deep thread


def deep(work: Callable[[], _T]) -> _T:
    """`work()` on a thread with a large stack and a raised recursion limit: libcst's native
    parser and its visitors recurse once per level of the tree.  One such thread per process
    serves every file: a thread per file left each one's malloc arena behind, and a worker's
    memory grew with the number of files it parsed.  Falls back to the calling thread when no
    such thread can be made."""
    if getattr(_local, "inside", False):
        return work()
    runner = _deep_thread()
    if runner is None:
        return work()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION))
    try:
        ok, value = runner.call(work)
    finally:
        sys.setrecursionlimit(limit)
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


class _DeepThread:
    """The long-lived thread behind `deep`: it takes one piece of work at a time."""

    def __init__(self) -> None:
        import queue

        self.pid = os.getpid()  # a forked worker makes its own: threads do not survive fork
        self.abandoned = False  # its caller stopped waiting (a timeout, Ctrl-C): never reused
        self._todo: queue.SimpleQueue[Callable[[], Any]] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        old_size = threading.stack_size(_STACK)
        try:
            thread = threading.Thread(target=self._serve, name="fp8lint-libcst", daemon=True)
            thread.start()
        finally:
            threading.stack_size(old_size)

    def _serve(self) -> None:
        _local.inside = True
        while True:
            work = self._todo.get()
            try:
                self._done.put((True, work()))
            except BaseException as exc:  # handed to the calling thread
                self._done.put((False, exc))
            if self.abandoned:
                return

    def call(self, work: Callable[[], Any]) -> tuple[bool, Any]:
        """`work`'s result on this thread.  An exception while waiting (the file's time limit,
        Ctrl-C) leaves the work running there with nobody to take its result: the thread is
        abandoned and the next call makes a new one."""
        self._todo.put(work)
        try:
            return self._done.get()
        except BaseException:
            self.abandoned = True
            raise


_deep: list[_DeepThread] = []  # this process's deep thread, once made
_deep_unavailable: list[bool] = []


def _deep_thread() -> _DeepThread | None:
    if _deep and _deep[0].pid == os.getpid() and not _deep[0].abandoned:
        return _deep[0]
    if _deep_unavailable:
        return None
    try:
        made = _DeepThread()
    except (ValueError, RuntimeError, MemoryError):
        _deep_unavailable.append(True)
        return None
    _deep[:] = [made]
    return made


_local = threading.local()


# ----------------------------------------------------------------------------- parsing

_TOO_DEEP = re.compile(r"too many nested|too many levels|too many indentation|too complex|stack")
_AT = re.compile(r"error at (\d+):(\d+)")


def parse(file: SourceFile, relevant: re.Pattern[str] | None = None) -> PyModule:
    """The file's module (kept on the `SourceFile`): parsed by libcst after `scan`, without
    the top-level definitions `relevant` does not reach (see `prune`).  Raises `ParseError`
    with a line and column for what libcst cannot read.  Call it inside `deep`."""
    cached = file.parsed
    if isinstance(cached, PyModule) and cached.relevant is relevant:
        return cached
    bom = 1 if file.text.startswith("\ufeff") else 0
    source = file.text[bom:]
    shape = scan(source)
    dropped: list[tuple[int, int]] = []
    if relevant is not None:
        text, starts, dropped = prune(source, shape, relevant)
    else:
        text, starts = source, [s for s, _ in shape.statements]
    size = len(text) - text.count("\n") - text.count("\r")
    if size > MAX_CHARS:
        raise ParseError(
            f"too long to read as Python: {size} characters of code to parse (the limit is "
            f"{MAX_CHARS})",
            1,
            1,
        )
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        raise _syntax_error(text, err, file.path) from None
    except RecursionError:
        raise ParseError(DEEP, 1, 1) from None
    found = PyModule(file, module, text, bom, relevant)
    found.left_out = (shape, dropped)
    if shape.plain and not shape.broken:
        found.statement_lines = _statement_lines(text, starts, len(module.body))
    file.parsed = found
    return found


_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")


def _statement_lines(text: str, starts: list[int], count: int) -> list[int] | None:
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
        line += sum(1 for _ in _LINE_BREAK.finditer(text, last, start))
        last = start
        if not decorated:
            lines.append(line)
        decorated = text.startswith("@", start)
    return lines if len(lines) == count else None


def _syntax_error(text: str, err: cst.ParserSyntaxError, path: str) -> ParseError:
    """libcst's verdict, with a usable position.  libcst's messages carry no reliable one
    (a tokenizer error always says line 1), so CPython's compiler is asked where the text
    fails (compiled to a tree only, never run): its position and message are the ones
    Python users know.  When CPython reads the text (syntax newer than libcst knows),
    libcst's own message stands, at the position it names."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text, filename=path)
    except (RecursionError, MemoryError):
        return ParseError(DEEP, 1, 1)
    except SyntaxError as exc:
        message = exc.msg or "invalid syntax"
        if _TOO_DEEP.search(message):
            return ParseError(DEEP, exc.lineno or 1, exc.offset or 1)
        return ParseError(f"Python syntax error: {message}", exc.lineno or 1, exc.offset or 1)
    except ValueError as exc:
        return ParseError(f"Python syntax error: {exc}", 1, 1)
    message = str(err.message).strip()
    if _TOO_DEEP.search(message):
        return ParseError(DEEP, err.raw_line or 1, 1)
    at = _AT.search(message)
    line, column = (int(at.group(1)), int(at.group(2)) + 1) if at else (err.raw_line or 1, 1)
    message = re.sub(r"^(parser|tokenizer) error: (error at \d+:\d+: )?", "", message)
    return ParseError(f"Python syntax error: {message}", max(line, 1), max(column, 1))


# -------------------------------------------------------------------------------- facts

# fields that hold whitespace, punctuation or comments: nothing a reader looks at
_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "leading_lines",
        "header",
        "footer",
        "lines_after_decorators",
        "semicolon",
        "trailing_whitespace",
        "newline",
        "equal",
        "colon",
        "dot",
        "operator",
        "asynchronous",
        "star_tok",
        "arrow",
        "keyword",
        "relative",
        "asname_tok",
        "whitespace",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(
            f.name
            for f in fields(kind)
            if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
    return names


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes that hold code (not whitespace or punctuation), in field order."""
    out: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            out.extend(v for v in value if isinstance(v, cst.CSTNode))
    return out


_STRINGS = (cst.SimpleString, cst.ConcatenatedString)
_ELEMENTS = (cst.List, cst.Tuple, cst.Set)


@dataclass(eq=False)
class AttrSet:
    """`base.name = value`, a field set on an object after it was built."""

    base: str
    name: str
    target: cst.BaseExpression
    value: cst.BaseExpression


@dataclass
class Facts:
    """What one walk over the module collects for readers: calls by the last name of what
    they call, the string literals that could name something (not docstrings, dict keys,
    comparison operands, subscripts or sequence elements), the value each assignment target
    gets, attribute bindings by dotted text, and what imports and definitions the file has."""

    calls: dict[str, list[cst.Call]] = field(default_factory=dict)
    strings: list[cst.BaseString] = field(default_factory=list)
    values: dict[int, cst.BaseExpression] = field(default_factory=dict)  # id(Name target)
    declared_only: set[int] = field(default_factory=set)  # `x: int` without a value
    attr_bindings: dict[str, list[cst.BaseExpression | None]] = field(default_factory=dict)
    attr_sets: list[AttrSet] = field(default_factory=list)
    assigned_to: dict[int, tuple[str, cst.BaseExpression]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # `as` name -> last imported name
    star_modules: list[str] = field(default_factory=list)
    defined: set[str] = field(default_factory=set)  # every def and class name in the file
    order: dict[int, int] = field(default_factory=dict)  # id(call) -> walk index
    statement: dict[int, int] = field(default_factory=dict)  # id(node) -> top-level index
    scoping: set[int] = field(default_factory=set)  # top-level statements with global/nonlocal


def collect(module: cst.Module) -> Facts:
    """One iterative walk (deep trees cannot overflow the stack here)."""
    facts = Facts()
    skip: set[int] = set()
    stack: list[tuple[cst.CSTNode, int]] = [(s, i) for i, s in enumerate(module.body)]
    stack.reverse()
    calls = facts.calls
    statement = facts.statement
    count = 0
    while stack:
        node, top = stack.pop()
        statement[id(node)] = top
        kind = type(node)
        if kind is cst.Call:
            assert isinstance(node, cst.Call)
            func = node.func
            name = (
                func.value
                if isinstance(func, cst.Name)
                else func.attr.value
                if isinstance(func, cst.Attribute)
                else None
            )
            if name is not None:
                calls.setdefault(name, []).append(node)
                facts.order[id(node)] = count
                count += 1
        elif kind in (cst.SimpleString, cst.ConcatenatedString):
            if id(node) not in skip:
                facts.strings.append(node)  # type: ignore[arg-type]
            if kind is cst.ConcatenatedString:
                assert isinstance(node, cst.ConcatenatedString)
                skip.add(id(node.left))
                skip.add(id(node.right))
        elif kind is cst.Expr:
            assert isinstance(node, cst.Expr)
            skip.add(id(node.value))  # a docstring or a bare string statement
        elif kind is cst.Comparison:
            assert isinstance(node, cst.Comparison)
            skip.add(id(node.left))  # `name == "preset"` dispatches, it does not set
            skip.update(id(c.comparator) for c in node.comparisons)
        elif kind is cst.Dict:
            assert isinstance(node, cst.Dict)
            skip.update(id(e.key) for e in node.elements if isinstance(e, cst.DictElement))
        elif kind is cst.Subscript:
            assert isinstance(node, cst.Subscript)
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    skip.add(id(element.slice.value))
        elif kind in _ELEMENTS:
            skip.update(
                id(e.value)
                for e in node.elements  # type: ignore[attr-defined]
                if isinstance(e, cst.Element)
            )
        elif kind is cst.Assign:
            assert isinstance(node, cst.Assign)
            for target in node.targets:
                _bind(facts, target.target, node.value)
            if len(node.targets) == 1:
                _note_assigned(facts, node.targets[0].target, node.value)
        elif kind is cst.AnnAssign:
            assert isinstance(node, cst.AnnAssign)
            if node.value is None:
                if isinstance(node.target, cst.Name):
                    facts.declared_only.add(id(node.target))
            else:
                _bind(facts, node.target, node.value)
                _note_assigned(facts, node.target, node.value)
        elif kind is cst.NamedExpr:
            assert isinstance(node, cst.NamedExpr)
            _bind(facts, node.target, node.value)
        elif kind in (cst.AugAssign, cst.For, cst.CompFor):
            _bind(facts, node.target, None)  # type: ignore[attr-defined]
        elif kind is cst.WithItem:
            assert isinstance(node, cst.WithItem)
            if node.asname is not None:
                _bind(facts, node.asname.name, None)
        elif kind in (cst.FunctionDef, cst.ClassDef):
            facts.defined.add(node.name.value)  # type: ignore[attr-defined]
        elif kind in (cst.Global, cst.Nonlocal):
            facts.scoping.add(top)
        elif kind is cst.ImportFrom:
            assert isinstance(node, cst.ImportFrom)
            if isinstance(node.names, cst.ImportStar):
                module_name = get_full_name_for_node(node.module) if node.module else ""
                facts.star_modules.append("." * len(node.relative) + (module_name or ""))
            else:
                _aliases(facts, node.names)
            continue
        elif kind is cst.Import:
            assert isinstance(node, cst.Import)
            _aliases(facts, node.names)
            continue
        found = children(node)
        found.reverse()
        stack.extend((child, top) for child in found)
    return facts


def _aliases(facts: Facts, names: Sequence[cst.ImportAlias]) -> None:
    for alias in names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            real = get_full_name_for_node(alias.name) or ""
            facts.aliases[alias.asname.name.value] = real.rsplit(".", 1)[-1]


def _bind(facts: Facts, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
    if isinstance(target, cst.Name):
        if value is not None:
            facts.values[id(target)] = value
    elif isinstance(target, cst.Attribute):
        key = get_full_name_for_node(target)
        if key is not None:
            facts.attr_bindings.setdefault(key, []).append(value)
        base = get_full_name_for_node(target.value)
        if base is not None and value is not None:
            facts.attr_sets.append(AttrSet(base, target.attr.value, target, value))
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind(facts, element.value, None)
    elif isinstance(target, cst.StarredElement):
        _bind(facts, target.value, None)


def _note_assigned(facts: Facts, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    key = get_full_name_for_node(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
    if key is not None and isinstance(value, cst.Call):
        facts.assigned_to[id(value)] = (key, target)


# ------------------------------------------------------------------------------ literals


def dotted(node: cst.CSTNode) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return parts[::-1]


def last_name(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


_CONSTANTS: dict[str, Any] = {"True": True, "False": False, "None": None}


def literal(node: cst.CSTNode) -> tuple[bool, Any]:
    """(True, value) for a literal: numbers, strings, bytes, True/False/None, a signed int
    or float, and tuples or lists of literals (what fp8lint treats as a written value)."""
    try:
        return True, _literal(node)
    except (_NotLiteral, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


class _NotLiteral(Exception):
    pass


def _literal(node: cst.CSTNode) -> Any:
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Float):
        return float(node.value.replace("_", ""))
    if isinstance(node, cst.Imaginary):
        return complex(node.value.replace("_", ""))
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        if value is None:
            raise _NotLiteral
        return value
    if isinstance(node, cst.Name) and node.value in _CONSTANTS:
        return _CONSTANTS[node.value]
    if isinstance(node, cst.UnaryOperation):
        if isinstance(node.expression, (cst.Integer, cst.Float)):
            if isinstance(node.operator, cst.Minus):
                return -_literal(node.expression)
            if isinstance(node.operator, cst.Plus):
                return +_literal(node.expression)
        raise _NotLiteral
    if isinstance(node, cst.Tuple):
        return tuple(_elements(node.elements))
    if isinstance(node, cst.List):
        return _elements(node.elements)
    raise _NotLiteral


def _elements(elements: Sequence[cst.BaseElement]) -> list[Any]:
    out = []
    for element in elements:
        if not isinstance(element, cst.Element):
            raise _NotLiteral
        out.append(_literal(element.value))
    return out


def _string(token: str) -> cst.CSTNode:
    """A string token as a libcst node (a Name that reads as no literal if it is none)."""
    try:
        return cst.SimpleString(token)
    except cst.CSTValidationError:
        return cst.Name("_")


def is_literal_name(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value in _CONSTANTS


def short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------------------- the module


@dataclass(frozen=True)
class Followed:
    """Where following a value through names ended: the final expression, the values passed
    on the way, and why it stopped early (None when it did not)."""

    node: cst.CSTNode
    via: tuple[cst.CSTNode, ...]
    why: str | None


class PyModule:
    """One parsed file: the module, its facts, and (resolved on first use) its scopes and
    positions."""

    def __init__(
        self,
        file: SourceFile,
        module: cst.Module,
        text: str,
        bom: int,
        relevant: re.Pattern[str] | None,
    ) -> None:
        self.file = file
        self.module = module
        self.text = text  # what libcst parsed: the file without its BOM and left-out code
        self.relevant = relevant
        self._bom = bom
        self._facts: Facts | None = None
        self._wrapper: MetadataWrapper | None = None
        self._scopes: Mapping[cst.CSTNode, Scope | None] | None = None
        self._positions: Mapping[cst.CSTNode, CodeRange] | None = None
        self._shift: dict[int, int] | None = None
        self._by_statement: dict[int, Mapping[cst.CSTNode, CodeRange]] = {}
        self._focus: set[int] | None = None
        self._stubbed: dict[int, cst.CSTNode] = {}  # id(definition in the skeleton) -> itself
        # the first line of each top-level statement, when the scan found them all
        self.statement_lines: list[int] | None = None
        # the scan of the file and the ranges of it left out of `text`
        self.left_out: tuple[Shape, list[tuple[int, int]]] = (Shape(), [])
        self._spans: dict[int, Span] = {}

    # -- facts -------------------------------------------------------------------------------
    @property
    def facts(self) -> Facts:
        if self._facts is None:
            self._facts = collect(self.module)
        return self._facts

    def _metadata(self) -> MetadataWrapper:
        if self._wrapper is None:
            self._wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        return self._wrapper

    # -- scopes ------------------------------------------------------------------------------
    def focus(self, statements: set[int]) -> None:
        """Ask scope questions only about nodes of these top-level statements (before the
        first one): the scope analysis then reads the other top-level definitions as their
        signatures only (see `_skeleton`).  A question about a node outside them is still
        answered, by analysing the whole module."""
        if self._scopes is None:
            self._focus = statements

    def scope(self, node: cst.CSTNode) -> Scope | None:
        if self._scopes is None:
            if self._focus is None:
                self._scopes = self._metadata().resolve(ScopeProvider)
            else:
                skeleton = MetadataWrapper(self._skeleton(self._focus), unsafe_skip_copy=True)
                self._scopes = skeleton.resolve(ScopeProvider)
        found = self._scopes.get(node)
        if found is None and self._focus is not None:
            self._focus = None  # a node the skeleton left out: analyse the whole module
            self._scopes = self._metadata().resolve(ScopeProvider)
            found = self._scopes.get(node)
        return found

    def _skeleton(self, focus: set[int]) -> cst.Module:
        """The module with the bodies of its other top-level definitions replaced by `...`.
        A body binds nothing outside itself unless it says `global` or `nonlocal` (those
        statements stay whole); decorators, signatures and names stay, so every name the
        module binds is still bound, in the same scope, by the same kind of statement."""
        stub = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Expr(cst.Ellipsis())])])
        keep = focus | self.facts.scoping
        body: list[cst.BaseStatement] = []
        for i, stmt in enumerate(self.module.body):
            if i not in keep and isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                short = stmt.with_changes(body=stub)
                self._stubbed[id(short)] = stmt
                stmt = short
            body.append(stmt)
        return self.module.with_changes(body=body)

    def imported_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The dotted names `node` (a name or attribute chain) has through the file's imports,
        however spelled: `DS` from `... import DelayedScaling as DS`, `r.DelayedScaling` after
        `import transformer_engine.common.recipe as r`.  Sorted; empty when none."""
        scope = self.scope(node)
        if scope is None:
            return ()
        found = scope.get_qualified_names_for(node)
        return tuple(sorted(q.name for q in found if q.source is QualifiedNameSource.IMPORT))

    def assignments(self, name: cst.Name) -> list[Any]:
        """libcst's assignments of `name` in the scope its use sees (builtins and `x: int`
        declarations without a value do not count)."""
        scope = self.scope(name)
        if scope is None:
            return []
        declared = self.facts.declared_only
        found = [a for a in scope[name.value] if hasattr(a, "node") and id(a.node) not in declared]
        return sorted(found, key=lambda a: a._index)

    def defines_locally(self, name: cst.Name) -> bool:
        """Whether `name`, where used, is a function or class the file defines itself."""
        return any(
            isinstance(a.node, (cst.FunctionDef, cst.ClassDef)) for a in self.assignments(name)
        )

    def bindings(self, node: cst.CSTNode) -> list[cst.CSTNode | None] | None:
        """The values a name or dotted attribute is bound to (None for a binding without a
        plain value: a parameter, an import, a loop target, an unpacking), or None when it
        is not bound in the file."""
        if isinstance(node, cst.Name):
            found = self.assignments(node)
            if not found:
                return None
            values: list[cst.CSTNode | None] = []
            for a in found:
                if isinstance(a.node, (cst.FunctionDef, cst.ClassDef)):
                    values.append(self._stubbed.get(id(a.node), a.node))
                else:
                    values.append(self.facts.values.get(id(a.node)))
            return values
        key = get_full_name_for_node(node)
        if key is None:
            return None
        bound = self.facts.attr_bindings.get(key)
        return list(bound) if bound else None

    def follow(self, node: cst.CSTNode) -> Followed:
        """Follow a name (or `obj.attr`) bound exactly once, in the scope the use sees, to
        its value, and on through names (at most `_MAX_FOLLOW` links)."""
        via: list[cst.CSTNode] = []
        for _ in range(_MAX_FOLLOW):
            if not isinstance(node, (cst.Name, cst.Attribute)) or is_literal_name(node):
                break
            bound = self.bindings(node)
            if not bound:
                return Followed(node, tuple(via), None)
            if len(bound) > 1:
                shown = short(self.source(node))
                return Followed(
                    node,
                    tuple(via),
                    f"`{shown}` is not a literal fp8lint can read (it is assigned "
                    f"{len(bound)} times)",
                )
            value = bound[0]
            if value is None or isinstance(value, (cst.FunctionDef, cst.ClassDef)):
                return Followed(value or node, tuple(via), None)
            via.append(value)
            node = value
        return Followed(node, tuple(via), None)

    def attr_sets(self, key: str, where: cst.CSTNode) -> list[AttrSet]:
        """`key.field = value` statements made in the scope of `where`."""
        found = [s for s in self.facts.attr_sets if s.base == key]
        for s in found:  # every scope first: one of them may widen the analysis
            self.scope(s.target)
        scope = self.scope(where)
        return [s for s in found if self.scope(s.target) is scope]

    def bound_once_where(self, target: cst.BaseExpression) -> bool:
        """Whether an assignment target (a name or dotted attribute) is bound exactly once."""
        if isinstance(target, cst.Name):
            return len(self.assignments(target)) == 1
        key = get_full_name_for_node(target)
        return key is not None and len(self.facts.attr_bindings.get(key, [])) == 1

    # -- positions ---------------------------------------------------------------------------
    def _position_map(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Every node's range, from one `PositionProvider` pass over the whole module."""
        if self._positions is None:
            self._positions = self._metadata().resolve(PositionProvider)
        return self._positions

    def _statement_positions(self, index: int) -> Mapping[cst.CSTNode, CodeRange]:
        """The ranges of the nodes of top-level statement `index`, from a `PositionProvider`
        pass over that statement alone (a module of its own, moved to its first line):
        positions cost a pass over the code, so only statements that hold a span pay it."""
        found = self._by_statement.get(index)
        if found is None:
            assert self.statement_lines is not None
            module = self.module
            stmt = module.body[index]
            alone = stmt.with_changes(leading_lines=())
            single = cst.Module(
                body=[alone],
                default_indent=module.default_indent,
                default_newline=module.default_newline,
            )
            shift = self.statement_lines[index] - 1
            ranges = MetadataWrapper(single, unsafe_skip_copy=True).resolve(PositionProvider)
            found = {
                node: CodeRange(
                    CodePosition(r.start.line + shift, r.start.column),
                    CodePosition(r.end.line + shift, r.end.column),
                )
                for node, r in ranges.items()
            }
            found[stmt] = found.pop(alone)
            self._by_statement[index] = found
        return found

    def _range(self, node: cst.CSTNode) -> CodeRange:
        if self.statement_lines is not None:
            index = self.facts.statement.get(id(node))
            if index is not None:
                return self._statement_positions(index)[node]
        return self._position_map()[node]

    def _maps_at(self, line: int) -> list[Mapping[cst.CSTNode, CodeRange]]:
        """The position maps that can hold a node starting on `line`."""
        lines = self.statement_lines
        if lines is None:
            return [self._position_map()]
        import bisect

        index = bisect.bisect_right(lines, line) - 1
        return [self._statement_positions(index)] if index >= 0 else []

    def _pos(self, line: int, column: int) -> Pos:
        """A libcst position (1-based line, 0-based character column) as a `Pos`."""
        file = self.file
        starts = file.line_starts
        line0 = min(max(line - 1, 0), len(starts) - 1)
        column += self._shifts().get(line0, 0)
        begin = starts[line0] + (self._bom if line0 == 0 else 0)
        return Pos(line0, column, min(begin + column, len(file.text)))

    def _shifts(self) -> dict[int, int]:
        """Columns libcst's code for a line is short of the file's: it drops a form feed in
        a line's indentation, and its positions come from its code."""
        if self._shift is None:
            self._shift = {}
            if "\x0c" in self.text:
                ours = _LINE_BREAK.split(self.text)
                theirs = _LINE_BREAK.split(self.module.code)
                for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
                    if a != b and a.endswith(b.lstrip()):
                        self._shift[i] = len(a) - len(a.lstrip()) - (len(b) - len(b.lstrip()))
        return self._shift

    def start(self, node: cst.CSTNode) -> Pos:
        r = self._range(node)
        return self._pos(r.start.line, r.start.column)

    def end(self, node: cst.CSTNode) -> Pos:
        r = self._range(node)
        return self._pos(r.end.line, r.end.column)

    def span(self, node: cst.CSTNode) -> Span:
        found = self._spans.get(id(node))
        if found is None:
            found = self._spans[id(node)] = self.file.span(self.start(node), self.end(node))
        return found

    def span_between(self, first: cst.CSTNode, last: cst.CSTNode) -> Span:
        return self.file.span(self.start(first), self.end(last))

    def source(self, node: cst.CSTNode) -> str:
        """The text `node` is written as in the file (without its own parentheses)."""
        return self.file.text[self.start(node).index : self.end(node).index]

    def where(self, node: cst.CSTNode) -> tuple[int, int, int]:
        """A sort key: line, column, and the walk order for calls that start together."""
        r = self._range(node)
        return r.start.line, r.start.column, self.facts.order.get(id(node), 0)

    # -- whole-file questions -----------------------------------------------------------------
    def words(self) -> list[str]:
        """Every identifier of the whole file (names, attributes, definitions, parameters,
        keywords, imports) and every string literal without spaces, for questions about the
        file as a whole.  The definitions left out of the parse are read from the scan: their
        words of code, and their string literals."""
        out: list[str] = []
        stack: list[cst.CSTNode] = [self.module]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name):
                out.append(node.value)
                continue
            if isinstance(node, _STRINGS):
                ok, value = literal(node)
                if ok and isinstance(value, str) and value.split() == [value]:
                    out.append(value)
            elif isinstance(node, cst.FormattedStringText):
                if node.value.split() == [node.value]:
                    out.append(node.value)
            if isinstance(node, cst.Arg) and node.keyword is not None:
                out.append(node.keyword.value)
            stack.extend(children(node))
        shape, dropped = self.left_out
        if dropped:
            source = self.file.text[self._bom :]
            code = _blank(source, shape.prose)
            for a, b in dropped:
                out.extend(_WORD.findall(code, a, b))
            for a, b in shape.prose:
                if source[a] != "#" and any(x <= a < y for x, y in dropped):
                    ok, value = literal(_string(source[a:b]))
                    if ok and isinstance(value, str) and value.split() == [value]:
                        out.append(value)
        return out

    def strings_in(self, node: cst.CSTNode) -> list[str]:
        """The string literals inside `node` (f-string text included)."""
        out: list[str] = []
        stack: list[cst.CSTNode] = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, _STRINGS):
                ok, value = literal(item)
                if ok and isinstance(value, str):
                    out.append(value)
                    continue
            elif isinstance(item, cst.FormattedStringText):
                out.append(item.value)
            stack.extend(children(item))
        return out

    # -- edits ---------------------------------------------------------------------------------
    def node_at(self, span: Span, kinds: tuple[type[cst.CSTNode], ...]) -> cst.CSTNode | None:
        """The outermost node of one of `kinds` whose span is `span` (a node a span was made
        from, found again for a fix)."""
        key = (span.line, span.column, span.end_line, span.end_column)
        best: cst.CSTNode | None = None
        for node, r in (item for found in self._maps_at(span.line) for item in found.items()):
            if not isinstance(node, kinds):
                continue
            a, b = self._pos(r.start.line, r.start.column), self._pos(r.end.line, r.end.column)
            if (a.line + 1, a.column + 1, b.line + 1, b.column + 1) == key:
                if best is None or _encloses(self, node, best):
                    best = node
        return best

    def line_at(self, span: Span) -> cst.SimpleStatementLine | None:
        """The innermost statement line holding the start of `span`."""
        point = (span.line, span.column)
        best: tuple[tuple[int, int], cst.SimpleStatementLine] | None = None
        for node, r in (item for found in self._maps_at(span.line) for item in found.items()):
            if not isinstance(node, cst.SimpleStatementLine):
                continue
            a, b = self._pos(r.start.line, r.start.column), self._pos(r.end.line, r.end.column)
            start = (a.line + 1, a.column + 1)
            if start <= point <= (b.line + 1, b.column + 1) and (best is None or start > best[0]):
                best = (start, node)
        return best[1] if best is not None else None

    def statement_of(self, node: cst.CSTNode) -> int:
        """The index of the top-level statement holding `node`."""
        index = self.facts.statement.get(id(node))
        if index is not None:
            return index
        where = self._range(node)
        target = (where.start.line, where.start.column)
        for i, stmt in enumerate(self.module.body):
            r = self._range(stmt)
            if (self._first_line(i), 0) <= target <= (r.end.line, r.end.column):
                return i
        raise LookupError("no statement holds this node")

    def _first_line(self, index: int) -> int:
        """The line top-level statement `index` starts on (its first decorator's)."""
        if self.statement_lines is not None:
            return self.statement_lines[index]
        stmt = self.module.body[index]
        decorators = getattr(stmt, "decorators", ())
        return self._range(decorators[0] if decorators else stmt).start.line

    def rewrite(self, index: int, transformer: cst.CSTTransformer) -> tuple[int, int, str] | None:
        """The edit that makes top-level statement `index` what `transformer` turns it into
        (or removes it): (start, end, new text) in the file's characters, the smallest region
        in which the statement's code changes; None when nothing changes."""
        stmt = self.module.body[index]
        new = stmt.visit(transformer)
        old_code = self.module.code_for_node(stmt.with_changes(leading_lines=()))
        if isinstance(new, cst.RemovalSentinel):
            new_code = ""
        else:
            assert isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
            new_code = self.module.code_for_node(new.with_changes(leading_lines=()))
        if old_code == new_code:
            return None
        begin = self._pos(self._first_line(index), 0).index
        if self.file.text[begin : begin + len(old_code)] != old_code:
            raise ValueError("libcst does not reproduce this statement exactly")
        a, b, content = minimal_edit(old_code, new_code)
        return begin + a, begin + b, content


def _encloses(pm: PyModule, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    """Whether `outer` is an ancestor of `inner` (they share a span: prefer the outer)."""
    stack = [outer]
    while stack:
        node = stack.pop()
        if node is inner:
            return True
        stack.extend(children(node))
    return False


def minimal_edit(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, content): replacing old[start:end] by content gives `new`.  The region
    is the smallest the common prefix and suffix allow, widened to whole words where it
    would split one (`1` -> `1024` replaces the number, not "inserts 024")."""
    limit = min(len(old), len(new))
    lo, hi = 0, limit
    while lo < hi:  # the longest common prefix, by halving (slices compare in C)
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, limit - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    suffix = lo

    def word(text: str, i: int) -> bool:
        return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")

    while prefix > 0 and word(old, prefix - 1) and (word(old, prefix) or word(new, prefix)):
        prefix -= 1
    while (
        suffix > 0
        and word(old, len(old) - suffix)
        and (word(old, len(old) - suffix - 1) or word(new, len(new) - suffix - 1))
    ):
        suffix -= 1
    return prefix, len(old) - suffix, new[prefix : len(new) - suffix]


# --------------------------------------------------------------------------- CST edits

Change = Callable[[cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel"]


class Rewrite(cst.CSTTransformer):
    """Apply `changes` (id of an original node -> what to make of its updated copy) in one
    pass over a statement."""

    def __init__(self, changes: dict[int, list[Change]]) -> None:
        super().__init__()
        self.changes = changes

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel:
        result: cst.CSTNode | cst.RemovalSentinel = updated_node
        for change in self.changes.get(id(original_node), ()):
            if isinstance(result, cst.RemovalSentinel):
                break
            result = change(result)
        return result


def expression(code: str) -> cst.BaseExpression:
    """A value for a fix, parsed by libcst (raises ValueError when it is not one)."""
    try:
        return cst.parse_expression(code)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"`{code}` is not a Python expression") from exc


def replaced(new: cst.BaseExpression) -> Change:
    """Replace an expression, keeping the parentheses written around the old one."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.BaseExpression)
        return new.with_changes(lpar=node.lpar, rpar=node.rpar)

    return change


def _no_space() -> cst.AssignEqual:
    return cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )


def keyword_added(key: str, value: cst.BaseExpression, indent: str | None) -> Change:
    """Add `key=value` as the last argument of a call: on a line of its own at `indent` (a
    call laid out one argument per line), or after a comma and a space.  The new argument
    takes over what followed the old last one (its trailing comma, a comment, the line
    break before the closing parenthesis)."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        new = cst.Arg(keyword=cst.Name(key), value=value, equal=_no_space())
        if not node.args:
            return node.with_changes(args=[new])
        last = node.args[-1]
        if indent is None:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        else:
            comma = cst.Comma(
                whitespace_after=cst.ParenthesizedWhitespace(
                    first_line=cst.TrailingWhitespace(),
                    indent=False,
                    last_line=cst.SimpleWhitespace(indent),
                )
            )
        new = new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace(""))
        return node.with_changes(args=[*node.args[:-1], last, new])

    return change


def argument_removed(index: int) -> Change:
    """Remove a call's argument; when it was the last one, the argument before it takes
    over what followed it (no comma, or its trailing comma and line break)."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args)
        gone = args.pop(index)
        if index == len(args) and args:
            args[-1] = args[-1].with_changes(
                comma=gone.comma, whitespace_after_arg=gone.whitespace_after_arg
            )
        return node.with_changes(args=args)

    return change


def keyword_renamed(index: int, new: str) -> Change:
    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args)
        args[index] = args[index].with_changes(keyword=cst.Name(new))
        return node.with_changes(args=args)

    return change


def attribute_renamed(new: str) -> Change:
    """`p.old = v` -> `p.new = v` (the change is made on the assignment's target)."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Attribute)
        return node.with_changes(attr=cst.Name(new))

    return change


def statement_removed(position: int) -> Change:
    """Remove statement `position` of a line (`a = 1; p.x = 2`), or the whole line when it
    is the only one."""

    def change(node: cst.CSTNode) -> cst.CSTNode | cst.RemovalSentinel:
        assert isinstance(node, cst.SimpleStatementLine)
        body = [s for i, s in enumerate(node.body) if i != position]
        if not body:
            return cst.RemovalSentinel.REMOVE
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(body=body)

    return change
