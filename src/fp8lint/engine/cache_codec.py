"""Findings as the cache stores them: JSON that gives back an equal `Diagnostic` (format
`cache_keys.FORMAT`), and `CorruptEntry` for anything that does not have that shape."""

from __future__ import annotations

from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Related, Severity, TextEdit
from fp8lint.engine.cache_keys import is_int

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any


class CorruptEntry(Exception):
    """A cache record that does not have the expected shape: treated as a miss."""


def encode_diagnostic(d: Diagnostic) -> dict[str, Any]:
    """A Diagnostic as JSON (format `FORMAT`); `decode_diagnostic` gives back an equal one."""
    return {
        "code": d.code,
        "name": d.name,
        "severity": d.severity.value,
        "message": d.message,
        "path": d.path,
        "line": d.line,
        "column": d.column,
        "end_line": d.end_line,
        "end_column": d.end_column,
        "related": [[r.path, r.line, r.column, r.message] for r in d.related],
        "headroom_binades": d.headroom_binades,
        "fix": _encode_fix(d.fix) if d.fix is not None else None,
        "source_line": d.source_line,
        "key": d.key,
        "note": d.note,
    }


def _encode_fix(fix: Fix) -> dict[str, Any]:
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            [e.content, e.line, e.column, e.end_line, e.end_column, e.start, e.end]
            for e in fix.edits
        ],
        "site": fix.site,
        "intent": [[name, _encode_value(value)] for name, value in fix.intent],
    }


def _encode_value(value: object) -> Any:
    """JSON for an intended value, keeping tuples, lists and dicts apart (tagged)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return {"t": [_encode_value(v) for v in value]}
    if isinstance(value, list):
        return {"l": [_encode_value(v) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"d": {k: _encode_value(v) for k, v in value.items()}}
    raise CorruptEntry(f"cannot encode {type(value).__name__}")


def _decode_value(raw: Any) -> object:
    if isinstance(raw, dict):
        if len(raw) != 1:
            raise CorruptEntry("bad tagged value")
        ((tag, inner),) = raw.items()
        if tag == "t" and isinstance(inner, list):
            return tuple(_decode_value(v) for v in inner)
        if tag == "l" and isinstance(inner, list):
            return [_decode_value(v) for v in inner]
        if tag == "d" and isinstance(inner, dict):
            return {k: _decode_value(v) for k, v in inner.items()}
        raise CorruptEntry("bad tagged value")
    if isinstance(raw, list):
        raise CorruptEntry("bare list")
    return raw


def _str(raw: Any) -> str:
    if not isinstance(raw, str):
        raise CorruptEntry("expected a string")
    return raw


def _int(raw: Any) -> int:
    if not is_int(raw):
        raise CorruptEntry("expected an integer")
    return int(raw)


def _list(raw: Any, length: int | None = None) -> list[Any]:
    if not isinstance(raw, list) or (length is not None and len(raw) != length):
        raise CorruptEntry("expected a list")
    return raw


def decode_diagnostic(raw: Any) -> Diagnostic:
    """The Diagnostic `encode_diagnostic` wrote; CorruptEntry for anything else."""
    if not isinstance(raw, dict):
        raise CorruptEntry("expected an object")
    try:
        headroom = raw["headroom_binades"]
        if headroom is not None and (not isinstance(headroom, (int, float)) or headroom is True):
            raise CorruptEntry("bad headroom")
        fix = raw["fix"]
        return Diagnostic(
            code=_str(raw["code"]),
            name=_str(raw["name"]),
            severity=Severity(raw["severity"]),
            message=_str(raw["message"]),
            path=_str(raw["path"]),
            line=_int(raw["line"]),
            column=_int(raw["column"]),
            end_line=_int(raw["end_line"]),
            end_column=_int(raw["end_column"]),
            related=tuple(
                Related(_str(p), _int(line), _int(col), _str(m))
                for p, line, col, m in (_list(r, 4) for r in _list(raw["related"]))
            ),
            headroom_binades=float(headroom) if headroom is not None else None,
            fix=_decode_fix(fix) if fix is not None else None,
            source_line=_str(raw["source_line"]),
            key=_str(raw["key"]),
            note=_str(raw["note"]),
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise CorruptEntry(str(exc)) from None


def decode_findings(raw: Any) -> list[Diagnostic]:
    """The list of findings an entry holds; CorruptEntry for anything else."""
    return [decode_diagnostic(d) for d in _list(raw)]


def _decode_fix(raw: Any) -> Fix:
    if not isinstance(raw, dict):
        raise CorruptEntry("expected an object")
    edits = []
    for e in _list(raw["edits"]):
        content, *numbers = _list(e, 7)
        edits.append(TextEdit(_str(content), *(_int(n) for n in numbers)))
    return Fix(
        applicability=Applicability(raw["applicability"]),
        message=_str(raw["message"]),
        edits=tuple(edits),
        site=_int(raw["site"]),
        intent=tuple(
            (_str(name), _decode_value(value))
            for name, value in (_list(i, 2) for i in _list(raw["intent"]))
        ),
    )
