"""What every framework recognizer shares: `Arg` and the helpers that build settings.

`Arg` is the common currency between a document and a framework's meaning: a YAML
`MODEL_ARGS` entry, a Python keyword argument and a shell flag all become `Arg`s, and each
framework turns `Arg`s into settings with its own defaults.

Records are built with `model_construct` (no validation, no schema build: see `model`), so
the values handed to these helpers must already have the field's type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fp8lint.model import Setting, SourceNote, Span

# parametrized once: pydantic's `Setting[Any]` lookup costs as much as the construct itself
_SETTING = Setting[Any]


@dataclass(frozen=True)
class Arg:
    """One written key/flag/keyword and its value, as a framework sees it.

    `value` is the parsed value (bool True for a bare flag); `known` is False when the value
    could not be read statically (an interpolation that did not resolve, a variable).
    """

    key: str
    value: Any
    span: Span  # the whole `key: value` (or flag) text
    value_span: Span
    known: bool = True
    raw: str | None = None
    note: str | None = None
    via: tuple[Span, ...] = ()


def written(arg: Arg, value: Any, note: str | None = None) -> Setting[Any]:
    return _SETTING.model_construct(
        value=value if arg.known else None,
        known=arg.known,
        provenance="written",
        span=arg.value_span,
        key=arg.key,
        raw=arg.raw,
        note=note or arg.note,
        via=arg.via,
        entry=arg.span,
    )


def default(
    value: Any, of: str, key: str, span: Span | None, note: str | None = None
) -> Setting[Any]:
    return _SETTING.model_construct(
        value=value, known=True, provenance="default", span=span, key=key, default_of=of, note=note
    )


def note(
    kind: str, arg: Arg, message: str, replacement: str | None = None, why: str = ""
) -> SourceNote:
    """A fact about `arg`: `message` is one short line naming the key, `why` the note."""
    return SourceNote.model_construct(
        kind=kind, key=arg.key, span=arg.span, message=message, replacement=replacement, why=why
    )


def invalid_note(arg: Arg, expected: str) -> SourceNote:
    """A value of the wrong type or outside the allowed set (reported by FP8401)."""
    shown = arg.raw if arg.raw is not None else repr(arg.value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return SourceNote.model_construct(
        kind="invalid-value",
        key=arg.key,
        span=arg.value_span,
        message=f"`{arg.key}` is {shown}; {expected}",
    )


INT_LIMIT = 2**63  # no framework takes an integer setting beyond int64


def as_int(value: Any) -> int | None:
    """An integer setting, or None when the value is not one (or is too large to be one)."""
    if isinstance(value, bool):
        return None
    number: int | None = None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("+-").isdecimal():
        try:
            number = int(value.strip())
        except ValueError:  # longer than int() converts
            return None
    return number if number is not None and -INT_LIMIT <= number < INT_LIMIT else None
