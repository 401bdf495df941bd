"""Shell launch scripts: find the training command and read its flags, never running anything.

The scanner does real shell word splitting for the parts that matter to a launch line:
backslash-newline continuations, single and double quotes, `#` comments, `;`/`&&`/`||`/`|`
separators, variable assignments earlier in the script (`TP=8`, `GPT_ARGS="--a 1 --b 2"`,
arrays `FP8_ARGS=( ... )`, `export X=...`) and their expansion (`$TP`, `${TP}`, `$GPT_ARGS`
split into words, `"${FP8_ARGS[@]}"`).  Every word keeps the span it was written at (for
an expanded variable: where the variable's text is), so findings and fixes point into the
script.  Anything else (`$1`, environment variables, command substitution) is unknown, never
guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
SEPARATORS = (";", "&&", "||", "|", "&", "\n")
MAX_EXPANSION = 100_000  # characters of one expanded word; beyond it the value is unknown
MAX_WORDS = 10_000  # words a variable may hold


@dataclass(frozen=True)
class Word:
    """One shell word after expansion: its text, where it was written, and whether every part
    of it could be resolved statically."""

    text: str
    start: int
    end: int
    known: bool = True
    quoted: bool = False


@dataclass
class Script:
    text: str
    variables: dict[str, list[Word]] = field(default_factory=dict)
    arrays: set[str] = field(default_factory=set)
    commands: list[list[Word]] = field(default_factory=list)


class _Lexer:
    """Raw words (before expansion) with their positions; separators as their own tokens."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

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
                self.i = n if nl == -1 else nl
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


_VAR = re.compile(r"\$(?:\{(?P<braced>[^}]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))")


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
                return [Word(raw, start, end, known=False)]
            if parts[0][0] == "dq" and not spread and len(words) > 1:
                joined = " ".join(w.text for w in words)
                return [Word(joined, words[0].start, words[-1].end, all(w.known for w in words))]
            return list(words)
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

    def _ref(self, m: re.Match[str]) -> tuple[str | None, bool]:
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


def parse(text: str) -> Script:
    """Variables and commands of a script, in order; later assignments win."""
    script = Script(text)
    expander = _Expander(script)
    tokens = _Lexer(text).tokens()
    i = 0
    current: list[Word] = []
    while i < len(tokens):
        raw, start, end, parts = tokens[i]
        if raw in SEPARATORS:
            if current:
                script.commands.append(current)
                current = []
            i += 1
            continue
        m = _ASSIGN.match(raw) if not current or _all_assignments(current) else None
        if raw == "export" and not current:
            i += 1
            continue
        if m:
            name = m.group(1)
            append = bool(m.group(2))
            if raw == m.group(0) and i + 1 < len(tokens) and tokens[i + 1][0] == "(":
                words, i = _array(tokens, i + 2, expander)
                script.arrays.add(name)
            else:
                value_start = start + m.end()
                words = _assigned(raw[m.end() :], value_start, end, parts, expander)
                i += 1
            old = script.variables.get(name, []) if append else []
            script.variables[name] = (old + words)[:MAX_WORDS]
            continue
        if raw in ("(", ")"):
            i += 1
            continue
        current.extend(expander.expand(raw, start, end, parts))
        i += 1
    if current:
        script.commands.append(current)
    return script


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
    if pieces != body:  # it referred to other variables: keep the expanded text, one span
        return [Word(p, start, end, known) for p in pieces.split()] or [Word("", start, end)]
    out = []
    for m in re.finditer(r"\S+", body):
        out.append(Word(m.group(), inner_start + m.start(), inner_start + m.end(), known))
    return out or [Word("", start, end)]
