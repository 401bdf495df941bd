"""Words of a parsed shell command as `Arg`s that keep their spans: `--flag value`,
`--flag=value`, bare `--flag` and `key=value`, for the command-line families of
`shell_families`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import Reader, SourceFile
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
        note=arg_note(value_word, detached),
        via=(value_span,) if detached else (),
    )


def arg_note(value_word: Word, detached: bool) -> str | None:
    """What `show` says of where a flag's value comes from: a variable assigned elsewhere, or
    the default of `${TP:-2}`, which the environment the job runs in may override."""
    if detached:
        return "set through a shell variable"
    if value_word.default_of:
        return f"the default of `${{{value_word.default_of}}}`; the environment may set it"
    return None


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


# `$(dirname ${BASH_SOURCE[0]})/`, `$(dirname "$0")/`, `${BASH_SOURCE%/*}/`: the script's folder
_HERE = re.compile(
    r"^(?:\$\(\s*dirname\s+\$\{?(?:BASH_SOURCE(?:\[0\])?|0)\}?\s*\)|\$\{BASH_SOURCE(?:\[0\])?%/\*\})/"
)
MAX_SOURCE_DEPTH = 3  # a sourced script may source others, this deep


def sourced_path(script_path: str, raw: str) -> str | None:
    """The file `source RAW` (or `. RAW`) reads, when it can be placed without running the
    script: a path under the script's own folder, written through `$(dirname
    ${BASH_SOURCE[0]})`, `$(dirname $0)` or `${BASH_SOURCE%/*}`, or a relative path without
    expansions, which is taken beside the script (bash reads it from the working directory;
    scripts that source their siblings are run from their own folder).  None otherwise."""
    import os

    text = raw.replace('"', "").replace("'", "")
    m = _HERE.match(text)
    rest = text[m.end() :] if m else text
    if not rest or "$" in rest or "`" in rest or os.path.isabs(rest):
        return None
    return os.path.normpath(os.path.join(os.path.dirname(script_path) or ".", rest))


# each variable's words, the file they are written in, and the `source` command of the linted
# script that brought them in (None: the script's own)
Scoped = dict[str, tuple[list[Word], SourceFile, Word | None]]


def with_sources(file: SourceFile, script: Script, reader: Reader | None, depth: int = 0) -> Scoped:
    """The script's variables with those of the scripts it sources (`source x.sh`, `. x.sh`)
    that it does not assign again afterwards, each with the file it is written in.  A sourced
    file that cannot be placed or read adds nothing (its variables stay unknown)."""
    from fp8lint.frameworks.shared.paths import inside_real, repository_root

    scoped: Scoped = {name: (words, file, None) for name, words in script.variables.items()}
    if reader is None or depth >= MAX_SOURCE_DEPTH:
        return scoped
    root = repository_root(file.path)
    for command in script.commands:
        if len(command) < 2 or command[0].text not in ("source", "."):
            continue
        path = sourced_path(file.path, script.text[command[1].start : command[1].end])
        if path is None or path == file.path or not inside_real(path, root):
            continue  # nothing outside the repository is read on the script's behalf
        data = reader(path)
        if data is None:
            continue
        from fp8lint.documents import shell

        other = SourceFile(path, data.decode("utf-8", errors="replace"))
        inner = with_sources(other, shell.parse(other.text), reader, depth + 1)
        at = command[0].start
        for name, (words, where, _) in inner.items():
            mine = script.assigned_at.get(name)
            if mine is None or mine[0] < at:  # the sourced value is the one that holds
                scoped[name] = (words, where, command[0])
    return scoped
