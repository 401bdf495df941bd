"""The generic fix writer: a rule's `FixPlan` (model terms) to text edits on the original spans.

Edits never re-serialize a file: a value is replaced inside its own span, a missing key is
inserted as one new entry next to the site's other FP8 settings (matching indentation,
flow/block layout and line endings), and a dead key is deleted with its line.  Everything
outside the edits stays byte-for-byte the same.  A framework whose syntax needs more (NeMo
1.x spells the format as two booleans) hooks in through `FIELD_WRITERS`.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Any

from fp8lint.diagnostics import ANY_VALUE, Applicability, Fix, TextEdit
from fp8lint.model import FixPlan, RemoveEntry, RenameKey, SetValue

if TYPE_CHECKING:
    from fp8lint.documents.text import SourceFile
    from fp8lint.model import EditInfo, Fp8Site, Span

UPPER_FORMAT = ("accelerate", "te")  # frameworks that spell formats HYBRID / E4M3


class CannotFix(Exception):
    """The plan cannot be turned into edits here; the finding keeps its advice only."""


def _newline(text: str) -> str:
    """The file's own line ending, for inserted lines."""
    for i, ch in enumerate(text):
        if ch == "\n":
            return "\n"
        if ch == "\r":
            return "\r\n" if text[i + 1 : i + 2] == "\n" else "\r"
    return "\n"


def _line_bounds(file: SourceFile, index: int) -> tuple[int, int | None]:
    """(start of the line holding `index`, start of the next line or None at the last)."""
    import bisect

    starts = file.line_starts
    line = bisect.bisect_right(starts, index) - 1
    return starts[line], starts[line + 1] if line + 1 < len(starts) else None


def _index(file: SourceFile, line: int, column: int) -> int:
    starts = file.line_starts
    return starts[min(line - 1, len(starts) - 1)] + column - 1


def _span_range(file: SourceFile, span: Span) -> tuple[int, int]:
    if span.path != file.path:
        raise CannotFix(f"the value is written in {span.path}")
    return _index(file, span.line, span.column), _index(file, span.end_line, span.end_column)


def render(
    site: Fp8Site,
    edit: EditInfo,
    name: str,
    value: Any,
    existing: str | None,
    file: SourceFile | None = None,
) -> str:
    """`value` for field `name` as this file writes it (quotes, case, booleans).  A new key
    copies the case of the booleans already written next to it (`True` in many NeMo files)."""
    if isinstance(value, Enum):
        value = value.value
        if name == "fmt" and site.framework.value in UPPER_FORMAT:
            value = str(value).upper()
    if isinstance(value, bool):
        if edit.syntax == "python":
            return "True" if value else "False"
        if edit.syntax == "yaml":
            if existing is None and file is not None:
                existing = _sibling_bool(file, edit)
            if existing and existing[:1].isupper():
                return "True" if value else "False"
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if edit.syntax == "json":
        return json.dumps(text)
    quote = existing[:1] if existing and existing[:1] in ("'", '"') else None
    if edit.syntax == "python":
        if existing and quote is None and name == "fmt" and "." in existing:
            return existing.rsplit(".", 1)[0] + "." + text  # Format.E4M3 -> Format.HYBRID
        q = quote or '"'
        return f"{q}{text}{q}"
    return f"{quote}{text}{quote}" if quote else text


def _sibling_bool(file: SourceFile, edit: EditInfo) -> str | None:
    for span in edit.values.values():
        start, end = _span_range(file, span)
        if file.text[start:end].lower() in ("true", "false"):
            return file.text[start:end]
    return None


def _value_range(file: SourceFile, span: Span) -> tuple[int, int]:
    """The range of a YAML value without the `&anchor` / `!tag` written before it."""
    start, end = _span_range(file, span)
    text = file.text
    while start < end and text[start] in "&!":
        while start < end and not text[start].isspace():
            start += 1
        while start < end and text[start].isspace():
            start += 1
    return start, end


def _insertion(file: SourceFile, edit: EditInfo, key: str, value: str) -> tuple[int, str]:
    """(index, text) that adds `key` with `value` to the site's container."""
    nl = _newline(file.text)
    if edit.syntax == "json":
        entry = f"{json.dumps(key)}: {value}"
    elif edit.syntax == "python":
        entry = f"{key}={value}"
    elif edit.syntax == "shell":
        entry = f"{key} {value}"
    else:
        entry = f"{key}: {value}"
    if edit.insert_after is None:
        if edit.insert_into is None:
            raise CannotFix("there is no place to add the key")
        return _span_range(file, edit.insert_into)[0], entry
    end = _span_range(file, edit.insert_after)[1]
    if edit.syntax == "yaml" and not edit.flow:
        _, next_line = _line_bounds(file, end)
        if next_line is None:
            return len(file.text), f"{nl}{edit.indent}{entry}"
        return next_line, f"{edit.indent}{entry}{nl}"
    if edit.syntax == "shell":
        return end, f" {entry}"
    if edit.flow:
        return end, f", {entry}"
    return end, f",{nl}{edit.indent}{entry}"


def _removal(file: SourceFile, edit: EditInfo, span: Span) -> tuple[int, int]:
    """The character range to delete for an entry, with its line or its comma."""
    text = file.text
    start, end = _span_range(file, span)
    line_start, _ = _line_bounds(file, start)
    _, next_line = _line_bounds(file, end)
    eol = len(text) if next_line is None else next_line
    alone = text[line_start:start].strip() == ""
    if edit.syntax == "shell":
        while start > line_start and text[start - 1] in " \t":
            start -= 1
        return start, end
    if edit.syntax == "yaml" and not edit.flow:
        rest = text[end:eol].strip()
        if alone and (rest == "" or rest.startswith("#")):
            return line_start, eol
        raise CannotFix("the key shares its line with other text")
    j = end
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    if j < len(text) and text[j] == ",":
        k = j + 1
        while k < len(text) and text[k] in " \t":
            k += 1
        if alone and text[k : k + 1] in ("\r", "\n"):
            _, after = _line_bounds(file, k)
            return line_start, len(text) if after is None else after
        if alone and not edit.flow:
            return line_start, k
        return start, k
    i = start - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    if i >= 0 and text[i] == ",":
        return i, end
    return start, end  # the only entry


def plan_to_fix(file: SourceFile, site: Fp8Site, index: int, plan: FixPlan) -> Fix:
    """Concrete edits for `plan` on `site`, or a display-only fix when none can be made."""
    if site.edit is not None and site.edit.syntax == "python":  # libcst transformations
        from fp8lint.frameworks.python_writer import plan_to_fix as python_fix

        return python_fix(file, site, index, plan, render)
    applicability = plan.applicability
    message = plan.message
    if applicability is Applicability.DISPLAY_ONLY or site.edit is None:
        return Fix(Applicability.DISPLAY_ONLY, message, (), index)
    edit = site.edit
    raw: list[tuple[int, int, str]] = []
    intent: list[tuple[str, object]] = []
    try:
        for op in plan.ops:
            if isinstance(op, SetValue):
                extra = _set_value(file, site, edit, op.field, op.value, raw)
                if extra:
                    applicability = Applicability.UNSAFE
                    message += extra
                intent.append((op.field, op.value))
            elif isinstance(op, RemoveEntry):
                start, end = _removal(file, edit, op.span)
                raw.append((start, end, ""))
                intent.append(("-" + op.key, None))
                if op.field:
                    intent.append((op.field, ANY_VALUE))
            elif isinstance(op, RenameKey):
                start, end = _span_range(file, op.span)
                at = file.text.find(op.old, start, end)
                if at == -1:
                    raise CannotFix(f"`{op.old}` not found")
                raw.append((at, at + len(op.old), op.new))
                intent.append(("-" + op.old, None))
                if op.field:
                    intent.append((op.field, ANY_VALUE))
    except CannotFix as exc:
        return Fix(
            Applicability.DISPLAY_ONLY, f"{message} (not applied automatically: {exc})", (), index
        )
    return Fix(applicability, message, _merge(file, raw), index, tuple(intent))


def _set_value(
    file: SourceFile,
    site: Fp8Site,
    edit: EditInfo,
    name: str,
    value: Any,
    raw: list[tuple[int, int, str]],
) -> str:
    """Add the edits that give `name` its value; returns a note when the fix is unsafe."""
    if name == "fmt" and site.framework.value == "nemo1":
        return _nemo_format(file, site, edit, value, raw)
    setting = getattr(site, name)
    if setting.written and setting.span is not None:
        target = setting.via[-1] if setting.via else setting.span
        start, end = _value_range(file, target)
        raw.append((start, end, render(site, edit, name, value, file.text[start:end])))
        if setting.via:
            return (
                f"; the value is defined at line {target.line} and shared, so every other "
                "key that refers to it changes too"
            )
        return ""
    key = edit.keys.get(name)
    if key is None:
        raise CannotFix(f"no key to write `{name}` with in this file")
    if key in edit.values:  # written but not read as this field (e.g. shadowed): replace it
        start, end = _span_range(file, edit.values[key])
        raw.append((start, end, render(site, edit, name, value, file.text[start:end])))
        return ""
    at, text = _insertion(file, edit, key, render(site, edit, name, value, None, file))
    raw.append((at, at, text))
    return ""


def _nemo_format(
    file: SourceFile, site: Fp8Site, edit: EditInfo, value: Any, raw: list[tuple[int, int, str]]
) -> str:
    """NeMo 1.x spells the format as two booleans: fp8_e4m3 and fp8_hybrid."""
    want = {"fp8_e4m3": value.value == "e4m3", "fp8_hybrid": value.value == "hybrid"}
    for key, flag in want.items():
        if key in edit.values:
            start, end = _span_range(file, edit.values[key])
            raw.append((start, end, render(site, edit, key, flag, file.text[start:end])))
        elif flag:
            at, text = _insertion(file, edit, key, render(site, edit, key, flag, None, file))
            raw.append((at, at, text))
    return ""


def _merge(file: SourceFile, raw: list[tuple[int, int, str]]) -> tuple[TextEdit, ...]:
    """Sorted edits; insertions at one point are joined in the order the plan gave them."""
    merged: list[list[Any]] = []
    for start, end, content in sorted(raw, key=lambda r: (r[0], r[1])):
        if merged and merged[-1][0] == start and merged[-1][1] == end == start:
            merged[-1][2] += content
            continue
        if merged and start < merged[-1][1]:
            raise CannotFix("two edits overlap")
        merged.append([start, end, content])
    out = []
    for start, end, content in merged:
        a, b = file.pos_of_index(start), file.pos_of_index(end)
        out.append(
            TextEdit(content, a.line + 1, a.column + 1, b.line + 1, b.column + 1, start, end)
        )
    return tuple(out)
