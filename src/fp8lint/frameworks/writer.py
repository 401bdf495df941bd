"""The fix writer: a rule's `FixPlan` (model terms) to text edits on the original spans.

The plan says which model field gets which value; the site's framework says which key spells
that field in this file (`EditInfo.keys`) and how a value is spelled (`spell_value`, and
`Family.writers` for a field a family writes in its own way: NeMo 1.x spells the format as
two booleans); the document's editor (`fp8lint.documents.editing`) says where the text goes.
A written value is replaced inside its own span, a missing key is inserted as one new entry
next to the site's other FP8 settings, a dead key is deleted with its line.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from fp8lint.diagnostics import ANY_VALUE, Applicability, Fix, TextEdit
from fp8lint.documents.editing import CannotEdit, Editor, editor_for
from fp8lint.frameworks import registry
from fp8lint.frameworks.spelling import spell_value
from fp8lint.model import FixPlan, RemoveEntry, RenameKey, SetValue

if TYPE_CHECKING:
    from fp8lint.documents.text import SourceFile
    from fp8lint.model import Fp8Site, Setting

Edits = list[tuple[int, int, str]]
# a family's writer for one model field (`Family.writers`); returns a note if unsafe
FieldWriter = Callable[[Editor, "Fp8Site", Any, Edits], str]


# the plan writer of a document syntax other than the text editors' (imported on first use)
PLAN_WRITERS = {"python": "fp8lint.frameworks.python_writer:plan_to_fix"}


def plan_to_fix(file: SourceFile, site: Fp8Site, index: int, plan: FixPlan) -> Fix:
    """Concrete edits for `plan` on `site`, or a display-only fix when none can be made."""
    ref = PLAN_WRITERS.get(site.edit.syntax) if site.edit is not None else None
    if ref is not None:  # Python: libcst transformations
        import importlib

        module, _, attribute = ref.partition(":")
        write: Callable[..., Fix] = getattr(importlib.import_module(module), attribute)
        return write(file, site, index, plan)
    applicability = plan.applicability
    message = plan.message
    if applicability is Applicability.DISPLAY_ONLY or site.edit is None:
        return Fix(Applicability.DISPLAY_ONLY, message, (), index)
    if site.edit.read_only is not None:
        why = f"{site.edit.read_only}; change it by hand"
        return Fix(
            Applicability.DISPLAY_ONLY, f"{message} (not applied automatically: {why})", (), index
        )
    editor = editor_for(file, site.edit)
    raw: Edits = []
    intent: list[tuple[str, object]] = []
    try:
        for op in plan.ops:
            if isinstance(op, SetValue):
                extra = _set_value(editor, site, op.field, op.value, raw)
                if extra:
                    applicability = Applicability.UNSAFE
                    message += extra
                intent.append((op.field, op.value))
            elif isinstance(op, RemoveEntry):
                start, end = editor.removal(op.span)
                raw.append((start, end, ""))
                intent.append(("-" + op.key, None))
                if op.field:
                    intent.append((op.field, ANY_VALUE))
            elif isinstance(op, RenameKey):
                raw.append(editor.rename(op.span, op.old, op.new))
                intent.append(("-" + op.old, None))
                if op.field:
                    intent.append((op.field, ANY_VALUE))
        edits = _merge(file, raw)
    except CannotEdit as exc:
        return Fix(
            Applicability.DISPLAY_ONLY, f"{message} (not applied automatically: {exc})", (), index
        )
    return Fix(applicability, message, edits, index, tuple(intent))


def _set_value(editor: Editor, site: Fp8Site, name: str, value: Any, raw: Edits) -> str:
    """Add the edits that give `name` its value; returns a note when the fix is unsafe."""
    special: FieldWriter | None = registry.field_writer(site.framework, name)
    if special is not None:
        return special(editor, site, value, raw)
    spelled = spell_value(site, name, value)
    member = isinstance(value, Enum)
    text = editor.file.text
    setting = getattr(site, name)
    if setting.written and setting.span is not None:
        if setting.via:  # an edit there changes every key that reads it too
            raise CannotEdit(shared_value(setting))
        start, end = editor.value_range(setting.span)
        raw.append((start, end, editor.literal(spelled, text[start:end], member)))
        if setting.raw is not None and "${" in setting.raw:
            return "; the value is computed by an OmegaConf interpolation, which the fix replaces"
        return ""
    key = editor.container.keys.get(name)
    if key is None:
        raise CannotEdit(f"no key to write `{name}` with in this file")
    if key in editor.container.values:  # written but not read as this field: replace it
        start, end = editor.range_of(editor.container.values[key])
        raw.append((start, end, editor.literal(spelled, text[start:end], member)))
        return ""
    raw.append((*_at(editor.insertion(key, editor.literal(spelled, None, member))),))
    return ""


def shared_value(setting: Setting[Any]) -> str:
    """Why a fix leaves a value that is defined once and read elsewhere too."""
    how = f" ({setting.note})" if setting.note else ""
    return f"the value at line {setting.via[-1].line} is shared{how}; change it by hand"


def _at(insertion: tuple[int, str]) -> tuple[int, int, str]:
    at, content = insertion
    return at, at, content


def _merge(file: SourceFile, raw: Edits) -> tuple[TextEdit, ...]:
    """Sorted edits; insertions at one point are joined in the order the plan gave them."""
    merged: list[list[Any]] = []
    for start, end, content in sorted(raw, key=lambda r: (r[0], r[1])):
        if merged and merged[-1][0] == start and merged[-1][1] == end == start:
            merged[-1][2] += content
            continue
        if merged and start < merged[-1][1]:
            raise CannotEdit("two edits overlap")
        merged.append([start, end, content])
    out = []
    for start, end, content in merged:
        a, b = file.pos_of_index(start), file.pos_of_index(end)
        out.append(
            TextEdit(content, a.line + 1, a.column + 1, b.line + 1, b.column + 1, start, end)
        )
    return tuple(out)
