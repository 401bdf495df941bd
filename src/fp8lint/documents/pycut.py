"""Copies of libcst statements cut down for a scope analysis: a definition as its signature
(`...` for a body), and a function with only the statements that hold a name."""

from __future__ import annotations

from typing import Any

import libcst as cst

from fp8lint.documents.pyfacts import Facts, children
from fp8lint.documents.pylocals import bound_by


def only_holding(node: cst.CSTNode, keep: set[int], made: dict[int, cst.CSTNode]) -> cst.CSTNode:
    """`node` with the statements of its blocks (at any depth) cut to those in `keep`, an
    emptied block holding `...`: a statement that does not hold a name binds none, so the
    scopes of that name are the same (every statement around a use of it is kept).  Each
    definition made anew is noted in `made` (its id -> the original)."""
    changes: dict[str, Any] = {}
    for name in _block_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.IndentedBlock):  # a one-line suite stays whole
            body = [only_holding(x, keep, made) for x in value.body if id(x) in keep]
            changes[name] = value.with_changes(body=body) if body else signature_body()
        elif isinstance(value, cst.CSTNode) and not isinstance(value, cst.BaseExpression):
            changes[name] = only_holding(value, keep, made)  # `else:`, `finally:`, `elif`
        elif isinstance(value, (list, tuple)) and value and isinstance(value[0], _CLAUSES):
            changes[name] = [only_holding(x, keep, made) for x in value]  # `except`, `case`
    if not changes:
        return node
    out = node.with_changes(**changes)
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        made[id(out)] = node
    return out


_CLAUSES = (cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)


def mentions(stmt: cst.CSTNode) -> dict[str, set[int]]:
    """Name -> the ids of the statements inside `stmt` (at any depth) that hold it: what
    `only_holding` keeps of `stmt` for a scope analysis of that name."""
    out: dict[str, set[int]] = {}
    stack: list[tuple[cst.CSTNode, tuple[int, ...]]] = [(stmt, ())]
    while stack:
        node, around = stack.pop()
        if isinstance(node, cst.Name):
            out.setdefault(node.value, set()).update(around)
            continue
        if isinstance(node, cst.BaseStatement) and node is not stmt:
            around = (*around, id(node))
        stack.extend((child, around) for child in children(node))
    return out


def _block_fields(kind: type) -> tuple[str, ...]:
    from dataclasses import fields

    found = _BLOCKS.get(kind)
    if found is None:
        names = {"body", "orelse", "handlers", "finalbody", "cases"}
        found = _BLOCKS[kind] = tuple(f.name for f in fields(kind) if f.name in names)
    return found


_BLOCKS: dict[type, tuple[str, ...]] = {}


def signature_body() -> cst.IndentedBlock:
    """`...`: the body a definition is analysed with when only its signature matters."""
    return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Expr(cst.Ellipsis())])])


def binding_parts(
    facts: Facts,
    module: cst.Module,
    stubbed: dict[int, cst.CSTNode],
    name: str,
    imports: bool,
    defs: tuple[int, ...],
    held: cst.CSTNode | None,
    every_import: bool,
) -> list[tuple[int, int, cst.CSTNode]]:
    """(top-level index, 0, statement): the module's imports that bind `name` (all of them
    with `every_import`), and its top-level definitions of it as signatures, but the one
    `held` stands for (kept whole).  Each signature made is noted in `stubbed`."""
    parts: list[tuple[int, int, cst.CSTNode]] = []
    if imports:
        parts += [
            (facts.statement[id(x)], 0, cst.SimpleStatementLine(body=[x]))
            for x in facts.module_imports
            if every_import
            or (
                not isinstance(x.names, cst.ImportStar)
                and any(bound_by(alias) == name for alias in x.names)
            )
        ]
    original = None if held is None else stubbed.get(id(held), held)
    for index in defs:
        full = module.body[index]
        if full is not original:
            short = full.with_changes(body=signature_body())
            stubbed[id(short)] = full
            parts.append((index, 0, short))
    return parts
