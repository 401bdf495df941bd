"""The fix writer for Python sites: a rule's `FixPlan` as libcst transformations.

What a plan means here: a field the site has written gets its value replaced where it is
written (or where the name it follows is bound: an unsafe fix, since every use of the name
changes); a field the site leaves to its default gets its keyword added to the call (one
argument per line when the call is laid out that way, after the last argument otherwise); a
dead keyword is removed and a misspelled one renamed.  The values are spelled by
`spelling.render` as the file spells them (`Format.HYBRID`, quotes kept).

The transformations are made by `documents.python` on the statement that holds each target;
the edits handed on are the smallest regions where the statement's code changes, so they
travel as `TextEdit`s like any other fix and nothing outside them moves.  The module parsed
by the recognizers is reused (no second parse).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fp8lint.diagnostics import ANY_VALUE, Applicability, Fix, TextEdit
from fp8lint.frameworks.spelling import render
from fp8lint.frameworks.writer import shared_value
from fp8lint.model import FixPlan, RemoveEntry, RenameKey, SetValue

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.documents.python import Change, PyModule
    from fp8lint.documents.text import SourceFile
    from fp8lint.model import EditInfo, Fp8Site, Span


class _CannotFix(Exception):
    """The plan cannot be made here; the finding keeps its advice only."""


def plan_to_fix(file: SourceFile, site: Fp8Site, index: int, plan: FixPlan) -> Fix:
    """Concrete edits for `plan` on a Python `site`, or a display-only fix."""
    applicability = plan.applicability
    message = plan.message
    if applicability is Applicability.DISPLAY_ONLY or site.edit is None:
        return Fix(Applicability.DISPLAY_ONLY, message, (), index)
    from fp8lint.documents.python import deep

    edit = site.edit
    try:
        raw, intent = deep(lambda: _plan(file, site, edit, plan))
        edits = _edits(file, raw)
    except (_CannotFix, ValueError, LookupError) as exc:
        return Fix(
            Applicability.DISPLAY_ONLY, f"{message} (not applied automatically: {exc})", (), index
        )
    return Fix(applicability, message, edits, index, tuple(intent))


def _plan(
    file: SourceFile, site: Fp8Site, edit: EditInfo, plan: FixPlan
) -> tuple[list[tuple[int, int, str]], list[tuple[str, object]]]:
    import libcst as cst

    from fp8lint.documents import python as py
    from fp8lint.frameworks.python_sites import load

    doc = load(file)
    changes: dict[int, list[Change]] = {}
    statements: dict[int, list[cst.CSTNode]] = {}  # top-level statement -> changed nodes
    intent: list[tuple[str, object]] = []

    def at(node: cst.CSTNode, change: Change) -> None:
        changes.setdefault(id(node), []).append(change)
        statements.setdefault(doc.statement_of(node), []).append(node)

    def value_at(span: Span) -> cst.BaseExpression:
        if span.path != file.path:
            raise _CannotFix(f"the value is written in {span.path}")
        node = doc.node_at(span, (cst.BaseExpression,))
        if node is None:
            raise _CannotFix("the value was not found in the file")
        assert isinstance(node, cst.BaseExpression)
        return node

    def replace_value(span: Span, name: str, value: Any) -> None:
        node = value_at(span)
        text = render(site, edit, name, value, doc.source(node), file)
        at(node, py.replaced(py.expression(text)))

    call = doc.node_at(site.span, (cst.Call,))
    for op in plan.ops:
        if isinstance(op, SetValue):
            name, value = op.field, op.value
            setting = getattr(site, name)
            if setting.written and setting.span is not None:
                if setting.via:  # an edit there changes every other use of the name too
                    raise _CannotFix(shared_value(setting))
                replace_value(setting.span, name, value)
            else:
                key = edit.keys.get(name)
                if key is None:
                    raise _CannotFix(f"no key to write `{name}` with in this file")
                if key in edit.values:  # written but not read as this field: replace it
                    replace_value(edit.values[key], name, value)
                else:
                    if not isinstance(call, cst.Call):
                        raise _CannotFix("the call was not found in the file")
                    text = render(site, edit, name, value, None, file)
                    indent = None if edit.flow else edit.indent
                    at(call, py.keyword_added(key, py.expression(text), indent))
            intent.append((name, value))
        elif isinstance(op, RemoveEntry):
            _entry(doc, op.span, call, at, None)
            intent.append(("-" + op.key, None))
            if op.field:
                intent.append((op.field, ANY_VALUE))
        elif isinstance(op, RenameKey):
            _entry(doc, op.span, call, at, (op.old, op.new))
            intent.append(("-" + op.old, None))
            if op.field:
                intent.append((op.field, ANY_VALUE))
    rewrite = py.Rewrite(changes)
    raw = [edit for i in sorted(statements) for edit in doc.rewrite(i, rewrite, statements[i])]
    return raw, intent


def _entry(
    doc: PyModule,
    span: Span,
    call: cst.CSTNode | None,
    at: Callable[[cst.CSTNode, Change], None],
    rename: tuple[str, str] | None,
) -> None:
    """Remove (or rename) the keyword argument or the `p.key = value` statement at `span`."""
    import libcst as cst

    from fp8lint.documents import python as py

    if isinstance(call, cst.Call):
        for i, arg in enumerate(call.args):
            if arg.keyword is not None and doc.span(arg) == span:
                if rename is None:
                    at(call, py.argument_removed(i))
                elif arg.keyword.value == rename[0]:
                    at(call, py.keyword_renamed(i, rename[1]))
                else:
                    raise _CannotFix(f"`{rename[0]}` not found")
                return
    line = doc.line_at(span)
    if line is not None:
        for i, small in enumerate(line.body):
            if not isinstance(small, (cst.Assign, cst.AnnAssign)):
                continue
            target = small.targets[0].target if isinstance(small, cst.Assign) else small.target
            if not isinstance(target, cst.Attribute):
                continue
            where = doc.span(target)
            if (where.line, where.column) != (span.line, span.column):
                continue
            if rename is None:
                at(line, py.statement_removed(i))
            elif target.attr.value == rename[0]:
                at(target, py.attribute_renamed(rename[1]))
            else:
                raise _CannotFix(f"`{rename[0]}` not found")
            return
    raise _CannotFix("the entry was not found in the file")


def _edits(file: SourceFile, raw: list[tuple[int, int, str]]) -> tuple[TextEdit, ...]:
    """Sorted `TextEdit`s (their lines and columns from the file's characters)."""
    out: list[TextEdit] = []
    last = -1
    for start, end, content in sorted(raw):
        if start < last:
            raise _CannotFix("two edits overlap")
        last = end
        a, b = file.pos_of_index(start), file.pos_of_index(end)
        out.append(
            TextEdit(content, a.line + 1, a.column + 1, b.line + 1, b.column + 1, start, end)
        )
    return tuple(out)
