"""Words of a parsed shell command as `Arg`s that keep their spans: `--flag value`,
`--flag=value`, bare `--flag` and `key=value`, for the command-line families of
`shell_families`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fp8lint.documents.shell import Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.shared.base import Arg

_INT = re.compile(r"[-+]?\d{1,40}")


def word_value(word: Word) -> object:
    """A word as the value a command-line parser would hand on (an int when it is one)."""
    return int(word.text) if _INT.fullmatch(word.text) else word.text


def word_arg(file: SourceFile, key: str, key_word: Word, value_word: Word, value: object) -> Arg:
    """An `Arg` whose value was written in `value_word` (perhaps through a variable)."""
    value_span = file.span_of_indices(value_word.start, value_word.end)
    # `--flag=value` holds its value inside the word; a value far away is a variable's
    detached = value_word is not key_word and not (
        key_word.start <= value_word.start <= key_word.end + 64
    )
    end = key_word.end if detached else max(value_word.end, key_word.end)
    return Arg(
        key=key,
        value=value if value_word.known else None,
        span=file.span_of_indices(key_word.start, end),
        value_span=value_span,
        known=key_word.known and value_word.known,
        raw=value_word.text,
        note="set through a shell variable" if detached else None,
        via=(value_span,) if detached else (),
    )


def dashed_flags(file: SourceFile, words: Sequence[Word]) -> tuple[dict[str, Arg], Word | None]:
    """`--flag value`, `--flag=value` and bare `--flag` words as `Arg`s keyed by the flag as
    written; the second value is the word after which a new FP8 flag is best inserted."""
    flags: dict[str, Arg] = {}
    anchor: Word | None = None
    i = 0
    while i < len(words):
        w = words[i]
        if not w.text.startswith("--"):
            i += 1
            continue
        name, eq, inline = w.text.partition("=")
        if eq:
            value_word = Word(inline, w.end - len(inline), w.end, w.known)
            end_word = w
        elif i + 1 < len(words) and not words[i + 1].text.startswith("--"):
            value_word = words[i + 1]
            end_word = value_word
            i += 1
        else:
            value_word = end_word = w
        value: object = True if value_word is w else word_value(value_word)
        flags[name] = word_arg(file, name, w, value_word, value)
        if "fp8" in name:
            anchor = end_word
        i += 1
    return flags, anchor
