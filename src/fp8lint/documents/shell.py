"""Shell launch scripts: find the training command and read its flags, never running anything.

The scanner does real shell word splitting for the parts that matter to a launch line:
backslash-newline continuations, single and double quotes, `#` comments, `;`/`&&`/`||`/`|`
separators, variable assignments earlier in the script (`TP=8`, `GPT_ARGS="--a 1 --b 2"`,
arrays `FP8_ARGS=( ... )`, `export X=...`, `declare -a X=(...)`) and their expansion (`$TP`,
`${TP}`, `$GPT_ARGS` split into words, `"${FP8_ARGS[@]}"`).  As in bash, an unquoted expansion
is split on whitespace, so an array element written `"--fp8-format hybrid"` becomes two words
under `${ARGS[@]}` and stays one under `"${ARGS[@]}"`.  Every word keeps the span it was
written at (for an expanded variable: where the variable's text is), so findings and fixes
point into the script.  Anything else (`$1`, environment variables, command substitution) is
unknown, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
SEPARATORS = (";", "&&", "||", "|", "&", "\n")
MAX_EXPANSION = 100_000  # characters of one expanded word; beyond it the value is unknown
MAX_WORDS = 10_000  # words a variable or a command may hold


@dataclass(frozen=True)
class Word:
    """One shell word after expansion: its text, where it was written, and whether every part
    of it could be resolved statically."""

    text: str
    start: int
    end: int
    known: bool = True
    quoted: bool = False
    # `${TP:-2}`: the variable whose default this word is (the environment may set it)
    default_of: str | None = None


@dataclass
class Script:
    text: str
    variables: dict[str, list[Word]] = field(default_factory=dict)
    arrays: set[str] = field(default_factory=set)
    commands: list[list[Word]] = field(default_factory=list)
    # the variables each assignment's value refers to (`ALL="$BASE $FP8"`: ALL -> BASE, FP8)
    refs: dict[str, set[str]] = field(default_factory=dict)
    # where each variable's last assignment is written (name start, value end)
    assigned_at: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the variables that commands expand (`python x.py $ARGS`: ARGS), not through other ones
    expanded: set[str] = field(default_factory=set)

    def used(self) -> set[str]:
        """The variables some command reads, directly or through another variable."""
        seen = set(self.expanded)
        todo = list(seen)
        while todo:
            for name in self.refs.get(todo.pop(), ()):
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
        return seen


# words that open a compound command or negate one: the command proper follows them
KEYWORDS = frozenset({"if", "then", "elif", "else", "while", "until", "do", "{", "!", "time"})
# builtins that assign like `export` (`declare -a ARGS=(...)`, `local X=1`)
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})


class _Lexer:
    """Raw words (before expansion) with their positions; separators as their own tokens."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.comments: list[tuple[int, int]] = []  # (start, end) of each `#` comment

    def tokens(self) -> list[tuple[str, int, int, list[tuple[str, str]]]]:
        """(raw, start, end, parts) where parts are (kind, text): kind in 'lit', 'sq', 'dq'."""
        text, n = self.text, len(self.text)
        out: list[tuple[str, int, int, list[tuple[str, str]]]] = []
        while self.i < n:
            ch = text[self.i]
            if ch == "\\" and text.startswith("\\\n", self.i):
                self.i += 2
                continue
            if ch == "\\" and text.startswith("\\\r\n", self.i):
                self.i += 3
                continue
            if ch in " \t\r":
                self.i += 1
                continue
            if ch == "#":
                nl = text.find("\n", self.i)
                end = n if nl == -1 else nl
                stop = end - 1 if end > self.i and text[end - 1] == "\r" else end
                self.comments.append((self.i, stop))
                self.i = end
                continue
            if ch == "\n" or ch == ";":
                out.append((ch, self.i, self.i + 1, []))
                self.i += 1
                continue
            if ch in "&|":
                two = text[self.i : self.i + 2]
                tok = two if two in ("&&", "||") else ch
                out.append((tok, self.i, self.i + len(tok), []))
                self.i += len(tok)
                continue
            if ch in "()":
                out.append((ch, self.i, self.i + 1, []))
                self.i += 1
                continue
            out.append(self._word())
        return out

    def _word(self) -> tuple[str, int, int, list[tuple[str, str]]]:
        text, n = self.text, len(self.text)
        start = self.i
        parts: list[tuple[str, str]] = []
        buf: list[str] = []

        def flush(kind: str = "lit") -> None:
            if buf:
                parts.append((kind, "".join(buf)))
                buf.clear()

        while self.i < n:
            ch = text[self.i]
            if ch in " \t\r\n;&|()":
                break
            if ch == "\\":
                if text.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                buf.append(text[self.i + 1 : self.i + 2])
                self.i += 2
                continue
            if ch == "'":
                flush()
                close = text.find("'", self.i + 1)
                close = n if close == -1 else close
                parts.append(("sq", text[self.i + 1 : close]))
                self.i = min(close + 1, n)  # an unclosed quote ends at the end of the text
                continue
            if ch == '"':
                flush()
                j = self.i + 1
                inner: list[str] = []
                while j < n and text[j] != '"':
                    if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                        if text[j + 1] != "\n":
                            inner.append(text[j + 1])
                        j += 2
                        continue
                    inner.append(text[j])
                    j += 1
                parts.append(("dq", "".join(inner)))
                self.i = min(j + 1, n)
                continue
            if ch == "$" and text.startswith("$(", self.i):
                depth, j = 0, self.i + 1
                while j < n:
                    if text[j] == "(":
                        depth += 1
                    elif text[j] == ")":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                buf.append(text[self.i : j + 1])
                self.i = min(j + 1, n)
                continue
            buf.append(ch)
            self.i += 1
        flush()
        return text[start : self.i], start, self.i, parts


_HEREDOC = re.compile(r"(?<![<\w])<<(-?)[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_]\w*))")


@lru_cache(maxsize=8)
def heredoc_bodies(text: str) -> tuple[tuple[int, int], ...]:
    """Where the bodies of here-documents are (`cat > job.sh <<EOF` ... `EOF`): text that
    the script hands to a command, not commands of the script itself."""
    return tuple(_bodies(text))


def _bodies(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    if "<<" not in text:
        return out
    pos = 0
    while True:
        m = _HEREDOC.search(text, pos)
        if m is None:
            return out
        word = m.group(2) or m.group(3) or m.group(4)
        start = text.find("\n", m.end())
        if start == -1:
            return out
        start += 1
        end = i = start
        while i < len(text):
            nl = text.find("\n", i)
            line_end = len(text) if nl == -1 else nl
            line = text[i:line_end].rstrip("\r")
            if (line.lstrip("\t") if m.group(1) else line) == word:
                end = i
                break
            i = line_end + 1
        else:
            end = len(text)
        out.append((start, end))
        pos = max(end, m.end())


def comments(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each comment: a `#` that starts a word, outside quotes."""
    lexer = _Lexer(text)
    lexer.tokens()
    return lexer.comments


# a whitespace-separated piece of a string; a backslash-newline inside quotes is a continuation
_PIECE = re.compile(r"(?:[^\s\\]|\\.)+")
# `$NAME`, `${NAME}`, `${A[@]}`, and `${NAME:-word}` / `${NAME-word}` / `${NAME:=word}` /
# `${NAME=word}`, whose word is the value when the script does not assign NAME
_VAR = re.compile(
    r"\$(?:\{(?P<dname>[A-Za-z_][A-Za-z0-9_]*):?[-=](?P<default>[^}]*)\}"
    r"|\{(?P<braced>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))"
)


class _Expander:
    def __init__(self, script: Script) -> None:
        self.script = script

    def expand(self, raw: str, start: int, end: int, parts: list[tuple[str, str]]) -> list[Word]:
        """Words from one raw word: unquoted `$VAR` of a string splits; `"${A[@]}"` spreads."""
        # a single unquoted or quoted variable reference expands to that variable's words
        only = raw.strip('"')
        m = _VAR.fullmatch(only)
        if m and len(parts) == 1:
            name, spread = self._ref(m)
            words = self.script.variables.get(name) if name else None
            if words is None:
                fallback = self._default(m)
                if fallback is None:
                    return [Word(raw, start, end, known=False)]
                at = start + raw.index(only) + m.start("default")
                dq = parts[0][0] == "dq"
                return [Word(fallback, at, at + len(fallback), True, dq, m.group("dname"))]
            if parts[0][0] == "dq":
                if not spread and len(words) > 1:
                    joined = " ".join(w.text for w in words)
                    return [
                        Word(joined, words[0].start, words[-1].end, all(w.known for w in words))
                    ]
                return list(words)  # "${A[@]}": each element stays one word
            return [piece for w in words for piece in self.split(w)]
        text: list[str] = []
        known = True
        for kind, chunk in parts:
            if kind == "sq":
                text.append(chunk)
                continue
            pieces, ok = self._substitute(chunk)
            text.append(pieces)
            known = known and ok
        quoted = any(kind != "lit" for kind, _ in parts)
        return [Word("".join(text), start, end, known, quoted)]

    def split(self, word: Word) -> list[Word]:
        """Bash's field splitting of an unquoted expansion: each whitespace-separated piece
        of `word` is a word of its own, at the place its text is written (`"--fp8-format
        hybrid"` in an array; a piece that came from `$TP` inside the element points at
        TP's value).  A piece that cannot be placed is unknown, so nothing edits it."""
        if not any(ch.isspace() for ch in word.text):
            return [word]
        raw = self.script.text[word.start : word.end]
        cursor = 0
        out: list[Word] = []
        for m in re.finditer(r"\S+", word.text):
            piece = m.group()
            skip = cursor
            while skip < len(raw) and (raw[skip].isspace() or raw[skip] in "\"'\\"):
                skip += 1
            if raw.startswith(piece, skip):
                at = word.start + skip
                known = word.known or ("$" not in piece and "`" not in piece)
                out.append(Word(piece, at, at + len(piece), known, word.quoted))
                cursor = skip + len(piece)
                continue
            ref = _VAR.match(raw, skip)
            name = self._ref(ref)[0] if ref else None
            value = self.script.variables.get(name) if name else None
            if ref is not None and value is not None and len(value) == 1:
                if value[0].text == piece:
                    out.append(value[0])
                    cursor = ref.end()
                    continue
            out.append(Word(piece, word.start, word.end, known=False, quoted=word.quoted))
            cursor = len(raw)  # the rest cannot be placed either
        return out

    @staticmethod
    def _default(m: re.Match[str]) -> str | None:
        """The word of `${NAME:-word}` (or `-`, `:=`, `=`) when NAME is not assigned in the
        script: what the script runs with unless the environment sets NAME.  A default that
        itself expands something is unknown."""
        fallback = m.group("default")
        if fallback is None or any(ch in fallback for ch in "$`\\\"'"):
            return None
        return fallback

    def _ref(self, m: re.Match[str]) -> tuple[str | None, bool]:
        if m.group("dname") is not None:
            return m.group("dname"), False
        body = m.group("braced") if m.group("braced") is not None else m.group("plain")
        if body is None:
            return None, False
        arr = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]", body)
        if arr:
            return arr.group(1), True
        if _NAME.fullmatch(body):
            return body, False
        return None, False

    def _substitute(self, chunk: str) -> tuple[str, bool]:
        known = True

        def repl(m: re.Match[str]) -> str:
            nonlocal known
            name, _ = self._ref(m)
            words = self.script.variables.get(name) if name else None
            if words is None:
                fallback = self._default(m)
                if fallback is not None:
                    return fallback
                known = False
                return m.group(0)
            known = known and all(w.known for w in words)
            return " ".join(w.text for w in words)

        out = _VAR.sub(repl, chunk)
        if "$(" in out or "`" in out:
            known = False
        if len(out) > MAX_EXPANSION:  # variables that double themselves line after line
            return out[:MAX_EXPANSION], False
        return out, known


MAX_LOOP_RUNS = 64  # commands one loop body may stand for; past it the loop variable is unknown


@dataclass
class _Loop:
    """`for NAME in WORDS; do ... done`: the body runs once per word (None: words not known)."""

    name: str
    values: list[Word] | None


def parse(text: str) -> Script:
    """Variables and commands of a script, in order; later assignments win.  A command in the
    body of `for NAME in a b c` that reads NAME stands for one command per value, each with
    NAME's word where the value is written in the `for` line."""
    script = Script(text)
    expander = _Expander(script)
    tokens = _Lexer(text).tokens()
    i = 0
    current: list[Word] = []
    raws: list[tuple[str, int, int, list[tuple[str, str]]]] = []  # the current command's tokens
    loops: list[_Loop] = []

    def flush() -> None:
        nonlocal current, raws
        runs = _loop_runs(loops, raws) if loops and current else None
        if runs is None:
            if current:
                script.commands.append(current)
        else:
            for binding in runs:
                saved = {n: script.variables.get(n) for n in binding}
                script.variables.update(binding)
                words: list[Word] = []
                for t in raws:
                    words.extend(expander.expand(*t)[: MAX_WORDS - len(words)])
                script.commands.append(words)
                for n, old in saved.items():
                    if old is None:
                        script.variables.pop(n, None)
                    else:
                        script.variables[n] = old
        current, raws = [], []

    while i < len(tokens):
        raw, start, end, parts = tokens[i]
        if raw in SEPARATORS:
            flush()
            i += 1
            continue
        lit = not parts[1:] and parts[:1] == [("lit", raw)]
        if not current and lit and raw == "for":
            i = _loop_head(tokens, i + 1, expander, loops)
            continue
        if not current and lit and raw in ("while", "until", "select"):
            loops.append(_Loop("", None))  # its `done` closes it, not an enclosing `for`
        if not current and lit and raw == "done":
            if loops:
                loops.pop()
            i += 1
            continue
        if not current and raw in KEYWORDS and lit:
            i += 1  # `if`, `then`, `do` ...: the command that follows starts afresh
            continue
        if not current and raw in _DECLARE:
            i += 1
            while i < len(tokens) and tokens[i][0].startswith("-"):
                i += 1  # `declare -a`, `export -n`: options of the builtin
            continue
        m = _ASSIGN.match(raw) if not current or _all_assignments(current) else None
        if m:
            name = m.group(1)
            append = bool(m.group(2))
            if raw == m.group(0) and i + 1 < len(tokens) and tokens[i + 1][0] == "(":
                words, i = _array(tokens, i + 2, expander)
                script.arrays.add(name)
                value_end = tokens[i - 1][2] if i - 1 < len(tokens) else len(text)
            else:
                value_start = start + m.end()
                words = _assigned(raw[m.end() :], value_start, end, parts, expander)
                value_end = end
                i += 1
            old = script.variables.get(name, []) if append else []
            script.variables[name] = (old + words)[:MAX_WORDS]
            names = {_ref_name(v) for v in _VAR.finditer(text, start + m.end(), value_end)}
            names.discard(None)
            refs = (script.refs.get(name, set()) if append else set()) | names
            script.refs[name] = {n for n in refs if n is not None and n != name}
            script.assigned_at[name] = (start, value_end)
            continue
        if raw in ("(", ")"):
            i += 1
            continue
        current.extend(expander.expand(raw, start, end, parts)[: MAX_WORDS - len(current)])
        raws.append(tokens[i])
        if "$" in raw:
            script.expanded.update(n for v in _VAR.finditer(raw) if (n := _ref_name(v)))
        i += 1
    flush()
    return script


def _loop_head(
    tokens: list[tuple[str, int, int, list[tuple[str, str]]]],
    i: int,
    expander: _Expander,
    loops: list[_Loop],
) -> int:
    """Read `NAME in WORDS` after `for` up to its separator; push the loop.  Any other form
    (`for NAME; do`, `for ((...))`) leaves NAME unknown."""
    name = tokens[i][0] if i < len(tokens) else ""
    if not _NAME.fullmatch(name) or i + 1 >= len(tokens) or tokens[i + 1][0] != "in":
        loops.append(_Loop(name if _NAME.fullmatch(name) else "", None))
        while i < len(tokens) and tokens[i][0] not in SEPARATORS:
            i += 1
        return i
    i += 2
    values: list[Word] | None = []
    while i < len(tokens) and tokens[i][0] not in SEPARATORS:
        raw, start, end, parts = tokens[i]
        if values is not None:
            values.extend(expander.expand(raw, start, end, parts))
            if len(values) > MAX_LOOP_RUNS or not all(w.known for w in values):
                values = None
        i += 1
    loops.append(_Loop(name, values))
    return i


def _loop_runs(
    loops: list[_Loop], raws: list[tuple[str, int, int, list[tuple[str, str]]]]
) -> list[dict[str, list[Word]]] | None:
    """The bindings of the loop variables the command reads, one per run of its body; None
    when it reads none of them or one whose values are not known (it stays unknown)."""
    read = {n for t in raws if "$" in t[0] for v in _VAR.finditer(t[0]) if (n := _ref_name(v))}
    runs: list[dict[str, list[Word]]] = [{}]
    for loop in loops:
        if loop.name not in read:
            continue
        if loop.values is None:
            return None
        runs = [{**run, loop.name: [w]} for run in runs for w in loop.values]
        if len(runs) > MAX_LOOP_RUNS:
            return None
    return runs if runs != [{}] else None


def _ref_name(m: re.Match[str]) -> str | None:
    body = m.group("braced") if m.group("braced") is not None else m.group("plain")
    found = re.match(r"[A-Za-z_][A-Za-z0-9_]*", body or "")
    return found.group() if found else None


def _all_assignments(words: list[Word]) -> bool:
    return all(_ASSIGN.match(w.text) for w in words)


def _array(
    tokens: list[tuple[str, int, int, list[tuple[str, str]]]], i: int, expander: _Expander
) -> tuple[list[Word], int]:
    words: list[Word] = []
    while i < len(tokens) and tokens[i][0] != ")":
        raw, start, end, parts = tokens[i]
        if raw not in SEPARATORS:
            words.extend(expander.expand(raw, start, end, parts))
        i += 1
    return words, i + 1


def _assigned(
    value: str, start: int, end: int, parts: list[tuple[str, str]], expander: _Expander
) -> list[Word]:
    """The value of `NAME=value` as words: a quoted string is split on whitespace later, when
    it is expanded unquoted, so keep each whitespace-separated piece with its own span."""
    if not value:
        return [Word("", start, end)]
    quoted = value[:1] in "\"'"
    inner_start = start + (1 if quoted else 0)
    body = value[1:-1] if quoted and value[-1:] == value[:1] else value
    pieces, known = (body, True) if value[:1] == "'" else expander._substitute(body)
    out = []
    if pieces != body:  # it refers to other variables
        for m in _PIECE.finditer(body):
            at, stop = inner_start + m.start(), inner_start + m.end()
            ref = _VAR.fullmatch(m.group())
            name = expander._ref(ref)[0] if ref else None
            words = expander.script.variables.get(name) if name else None
            if words is not None:  # `$GPT_ARGS`: its words, where they are written
                out.extend(words)
                continue
            fallback = expander._default(ref) if ref is not None else None
            if ref is not None and fallback is not None:  # `${TP:-2}`: its default, in place
                first = at + ref.start("default")
                if fallback:
                    out.append(Word(fallback, first, first + len(fallback), default_of=name))
                continue
            text, ok = expander._substitute(m.group())
            # text mixed with an expansion has no place of its own that an edit could use
            mixed = text != m.group()
            out.extend(Word(p, at, stop, ok and not mixed) for p in text.split())
        return out[:MAX_WORDS] or [Word("", start, end)]
    for m in _PIECE.finditer(body):
        out.append(Word(m.group(), inner_start + m.start(), inner_start + m.end(), known))
    return out or [Word("", start, end)]
