"""Copies of libcst statements cut down for a scope analysis: a definition as its signature
(`...` for a body), and a function with only the statements that hold a name."""

from __future__ import annotations

from typing import Any

import libcst as cst


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
