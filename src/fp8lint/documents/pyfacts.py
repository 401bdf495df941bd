"""What readers of a libcst module look at: one walk that collects calls, string literals,
bindings, imports and definitions (`collect`), the child nodes that hold code, and the
values of literals.  Nothing here needs scopes or positions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import libcst as cst
from libcst.helpers import get_full_name_for_node

from fp8lint.documents.pylocals import (
    BINDING_KINDS,
    MARKED,
    NESTING,
    UnitScope,
    bound_by,
    note_binding,
    own_bindings,
)

# fields that hold whitespace, punctuation or comments: nothing a reader looks at
_SKIP_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "leading_lines",
        "header",
        "footer",
        "lines_after_decorators",
        "semicolon",
        "trailing_whitespace",
        "newline",
        "equal",
        "colon",
        "dot",
        "operator",
        "asynchronous",
        "star_tok",
        "arrow",
        "keyword",
        "relative",
        "asname_tok",
        "whitespace",
    }
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(
            f.name
            for f in fields(kind)
            if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
    return names


# type -> whether it is a libcst node: `CSTNode` is an ABC, and its `isinstance` check was
# a fifth of the walk of a large recipe module
_IS_NODE: dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes that hold code (not whitespace or punctuation), in field order."""
    out: list[cst.CSTNode] = []
    kind = type(node)
    names = _FIELDS.get(kind)
    for name in names if names is not None else _child_fields(kind):
        value = getattr(node, name)
        held = type(value)
        if _IS_NODE.get(held) or (held not in _IS_NODE and _is_node(held)):
            out.append(value)
        elif isinstance(value, (list, tuple)):
            for v in value:
                held = type(v)
                if _IS_NODE.get(held) or (held not in _IS_NODE and _is_node(held)):
                    out.append(v)
    return out


STRINGS = (cst.SimpleString, cst.ConcatenatedString)
_ELEMENTS = (cst.List, cst.Tuple, cst.Set)


@dataclass(eq=False)
class AttrSet:
    """`base.name = value`, a field set on an object after it was built."""

    base: str
    name: str
    target: cst.BaseExpression
    value: cst.BaseExpression


@dataclass
class Facts:
    """What one walk over the module collects for readers: calls by the last name of what
    they call, the string literals that could name something (not docstrings, dict keys,
    comparison operands, subscripts or sequence elements), the value each assignment target
    gets, attribute bindings by dotted text, and what imports and definitions the file has."""

    calls: dict[str, list[cst.Call]] = field(default_factory=dict)
    strings: list[cst.BaseString] = field(default_factory=list)
    values: dict[int, cst.BaseExpression] = field(default_factory=dict)  # id(Name target)
    declared_only: set[int] = field(default_factory=set)  # `x: int` without a value
    attr_bindings: dict[str, list[cst.BaseExpression | None]] = field(default_factory=dict)
    attr_sets: list[AttrSet] = field(default_factory=list)
    assigned_to: dict[int, tuple[str, cst.BaseExpression]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)  # `as` name -> last imported name
    star_modules: list[str] = field(default_factory=list)
    defined: set[str] = field(default_factory=set)  # every def and class name in the file
    order: dict[int, int] = field(default_factory=dict)  # id(call) -> walk index
    statement: dict[int, int] = field(default_factory=dict)  # id(node) -> top-level index
    scoping: set[int] = field(default_factory=set)  # top-level statements with global/nonlocal
    # every name bound other than by an import (targets, parameters, definitions, handlers,
    # patterns, type parameters, global/nonlocal), over-approximated, and every import
    bound: set[str] = field(default_factory=set)
    imports: list[cst.Import | cst.ImportFrom] = field(default_factory=list)
    # outside every function, class and lambda body: the names bound other than by an
    # import (a definition's name too), the names imports bind, and those imports; and the
    # names declared `global` anywhere
    module_bound: set[str] = field(default_factory=set)
    # name -> the top-level statements binding it outside every body other than by an
    # import or a top-level definition (an assignment, a loop, a nested `def`...)
    module_binders: dict[str, set[int]] = field(default_factory=dict)
    module_defined: dict[str, list[int]] = field(default_factory=dict)  # top-level def/class
    module_imported: set[str] = field(default_factory=set)
    module_imports: list[cst.Import | cst.ImportFrom] = field(default_factory=list)
    declared_global: set[str] = field(default_factory=set)
    # the functions a name's use may be analysed in alone (and a method positioned alone):
    # each outermost function reached from the module through class bodies only (with its
    # top-level index), and the one whose body holds each node
    units: list[tuple[cst.FunctionDef, int]] = field(default_factory=list)
    unit_of: dict[int, int] = field(default_factory=dict)
    block_of: dict[int, int] = field(default_factory=dict)  # id(node) -> id(its unit's statement)
    unit_names: list[int] = field(default_factory=list)  # how many names each unit holds
    # each unit's bindings (`pylocals`), and the names and attributes used directly in a
    # unit's own scope (not inside a function, class, lambda or comprehension nested in it)
    unit_scopes: list[UnitScope] = field(default_factory=list)
    direct: dict[int, tuple[int, int]] = field(default_factory=dict)  # (walk place, statement)
    # the scopes nested in units (parent index or -1 for the unit's own, the names bound in
    # each: parameters, targets, definitions, over-approximated), and the innermost one
    # holding each name or attribute used inside them
    nested_scopes: list[tuple[int, set[str]]] = field(default_factory=list)
    nested_of: dict[int, int] = field(default_factory=dict)
    module_use: set[int] = field(default_factory=set)  # names and attributes outside bodies
    module_mentions: dict[str, set[int]] = field(default_factory=dict)  # the same: name -> tops
    # (unit, name) -> the statements holding it inside the unit's body: for each use, the
    # ids of the statements around it, outermost first
    mentions: dict[tuple[int, str], list[tuple[int, ...]]] = field(default_factory=dict)


# the kinds of node whose strings name nothing, and the kinds that bind names
_NAMING_NOTHING = frozenset({cst.Expr, cst.Comparison, cst.Dict, cst.Subscript, *_ELEMENTS})
_BINDING = frozenset(
    {cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.AugAssign, cst.For, cst.CompFor, cst.WithItem}
)
# the other nodes that bind a name, and the field that holds it (a Name, or an AsName for
# `except E as e`); a definition's name is in `defined`
_NAMED: dict[type, str] = {
    cst.Param: "name",
    cst.ExceptHandler: "name",
    cst.ExceptStarHandler: "name",
    **MARKED,  # match captures, type parameters and aliases
}


def collect(module: cst.Module) -> Facts:
    """One iterative walk (deep trees cannot overflow the stack here)."""
    facts = Facts()
    skip: set[int] = set()
    stack: list[tuple[cst.CSTNode, int, bool, int, tuple[int, ...] | None, int]] = [
        (s, i, False, -1, None, -1) for i, s in enumerate(module.body)
    ]
    stack.reverse()
    statement = facts.statement
    unit_of = facts.unit_of
    block_of = facts.block_of
    while stack:
        # inner: inside a function, class or lambda body; unit: the `units` index, or -1;
        # part: inside a unit's body, the ids of the statements around the node there;
        # nest: the innermost function, class, lambda or comprehension nested in the unit
        # around the node (its `nested_scopes` index), or -1
        node, top, inner, unit, part, nest = stack.pop()
        statement[id(node)] = top
        if unit >= 0:
            unit_of[id(node)] = unit
        kind = type(node)
        if part is not None and kind in _STATEMENTS:
            part = (*part, id(node))
        if part:
            block_of[id(node)] = part[0]
        if kind is cst.Name or kind is cst.Attribute:
            if unit >= 0:
                _note_use(facts, node, unit, part)
                if nest < 0:
                    facts.direct[id(node)] = (len(statement), part[-1] if part else -1)
                else:
                    facts.nested_of[id(node)] = nest
            elif not inner:
                facts.module_use.add(id(node))
                if kind is cst.Name:
                    word: str = node.value  # type: ignore[attr-defined]
                    facts.module_mentions.setdefault(word, set()).add(top)
        elif unit >= 0 and kind in BINDING_KINDS:
            into = facts.nested_scopes[nest][1] if nest >= 0 else None
            held = part[-1] if part else -1
            note_binding(facts.unit_scopes[unit], node, kind, held, len(statement), into)
        if kind in _RECORDED and _record(facts, node, kind, top, inner, unit, part, skip, module):
            continue
        found = children(node)
        found.reverse()
        if kind is cst.Param:  # its name is its function's, its default and annotation not
            name_node = node.name  # type: ignore[attr-defined]
            stack.extend((c, top, inner or c is name_node, unit, part, nest) for c in found)
        elif kind in _SCOPES:  # its body (not its decorators, defaults or bases) is inside it
            body = node.body  # type: ignore[attr-defined]
            sub, sub_part, deeper = unit, part, _nested(facts, nest, unit)
            if kind is cst.FunctionDef and unit < 0:
                sub, sub_part = len(facts.units), ()
                facts.units.append((node, top))  # type: ignore[arg-type]
                facts.unit_names.append(0)
                facts.unit_scopes.append(UnitScope())
                own_bindings(node, facts.unit_scopes[-1])  # type: ignore[arg-type]
            stack.extend(
                (child, top, True, sub, sub_part, deeper)
                if child is body
                else (child, top, inner, unit, part, deeper)
                for child in found
            )
        else:
            deeper = _nested(facts, nest, unit) if kind in NESTING else nest
            stack.extend((child, top, inner, unit, part, deeper) for child in found)
    return facts


def _record(
    facts: Facts,
    node: cst.CSTNode,
    kind: type,
    top: int,
    inner: bool,
    unit: int,
    part: tuple[int, ...] | None,
    skip: set[int],
    module: cst.Module,
) -> bool:
    """What one node of a kind in `_RECORDED` adds to `facts`; True when the walk does not
    enter it (an import)."""
    if kind is cst.Call:
        assert isinstance(node, cst.Call)
        func = node.func
        name = (
            func.value
            if isinstance(func, cst.Name)
            else func.attr.value
            if isinstance(func, cst.Attribute)
            else None
        )
        if name is not None:
            facts.calls.setdefault(name, []).append(node)
            facts.order[id(node)] = len(facts.order)
    elif kind in (cst.SimpleString, cst.ConcatenatedString):
        if id(node) not in skip:
            facts.strings.append(node)  # type: ignore[arg-type]
        if kind is cst.ConcatenatedString:
            assert isinstance(node, cst.ConcatenatedString)
            skip.add(id(node.left))
            skip.add(id(node.right))
    elif kind in _NAMING_NOTHING:
        _skip_strings(node, kind, skip)
    elif kind in _BINDING:
        _bind_statement(facts, node, kind, inner, top)
    elif kind in (cst.FunctionDef, cst.ClassDef):
        name = node.name.value  # type: ignore[attr-defined]
        facts.defined.add(name)
        if node is module.body[top]:
            facts.module_defined.setdefault(name, []).append(top)
        elif not inner:
            facts.module_bound.add(name)
            facts.module_binders.setdefault(name, set()).add(top)
    elif kind in (cst.Global, cst.Nonlocal):
        facts.scoping.add(top)
        names = {n.name.value for n in node.names}  # type: ignore[attr-defined]
        facts.bound.update(names)
        if kind is cst.Global:
            facts.declared_global.update(names)
    elif kind in _NAMED:  # a parameter binds in its function, whatever holds it
        _bind_names(facts, getattr(node, _NAMED[kind]), inner or kind is cst.Param, top)
    elif kind is cst.ImportFrom:
        assert isinstance(node, cst.ImportFrom)
        _note_import(facts, node, inner, unit, part)
        if isinstance(node.names, cst.ImportStar):
            module_name = get_full_name_for_node(node.module) if node.module else ""
            facts.star_modules.append("." * len(node.relative) + (module_name or ""))
        else:
            _aliases(facts, node.names)
        return True
    elif kind is cst.Import:
        assert isinstance(node, cst.Import)
        _note_import(facts, node, inner, unit, part)
        _aliases(facts, node.names)
        return True
    return False


def _nested(facts: Facts, nest: int, unit: int) -> int:
    """A new scope nested in a unit (inside `nest`), its whole node in it: decorators,
    defaults and a comprehension's first iterable too, more than Python puts there."""
    if unit < 0:
        return -1
    facts.nested_scopes.append((nest, set()))
    return len(facts.nested_scopes) - 1


def _note_use(facts: Facts, node: cst.CSTNode, unit: int, part: tuple[int, ...] | None) -> None:
    facts.unit_names[unit] += 1
    if part is not None and isinstance(node, cst.Name):
        held = facts.mentions.get((unit, node.value))
        if held is None:
            held = facts.mentions[(unit, node.value)] = []
        held.append(part)


_STATEMENTS = frozenset(
    {
        cst.SimpleStatementLine,
        cst.If,
        cst.For,
        cst.While,
        cst.Try,
        cst.TryStar,
        cst.With,
        cst.Match,
        cst.FunctionDef,
        cst.ClassDef,
    }
)
_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
# the kinds `_record` reads
_RECORDED = frozenset(
    {
        cst.Call,
        cst.SimpleString,
        cst.ConcatenatedString,
        cst.FunctionDef,
        cst.ClassDef,
        cst.Global,
        cst.Nonlocal,
        cst.ImportFrom,
        cst.Import,
        *_NAMING_NOTHING,
        *_BINDING,
        *_NAMED,
    }
)


def _note_import(
    facts: Facts,
    node: cst.Import | cst.ImportFrom,
    inner: bool,
    unit: int,
    part: tuple[int, ...] | None,
) -> None:
    facts.imports.append(node)
    if part is not None and not isinstance(node.names, cst.ImportStar):
        for alias in node.names:  # the names it binds, which the walk does not enter
            facts.mentions.setdefault((unit, bound_by(alias)), []).append(part)
    if not inner:
        facts.module_imports.append(node)
        if not isinstance(node.names, cst.ImportStar):
            facts.module_imported.update(bound_by(alias) for alias in node.names)


def _skip_strings(node: cst.CSTNode, kind: type, skip: set[int]) -> None:
    """Leave out the strings in `node` that name nothing: a docstring, comparison operands,
    dict keys, subscripts, sequence elements."""
    if kind is cst.Expr:
        assert isinstance(node, cst.Expr)
        skip.add(id(node.value))  # a docstring or a bare string statement
    elif kind is cst.Comparison:
        assert isinstance(node, cst.Comparison)
        skip.add(id(node.left))  # `name == "preset"` dispatches, it does not set
        skip.update(id(c.comparator) for c in node.comparisons)
    elif kind is cst.Dict:
        assert isinstance(node, cst.Dict)
        skip.update(id(e.key) for e in node.elements if isinstance(e, cst.DictElement))
    elif kind is cst.Subscript:
        assert isinstance(node, cst.Subscript)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                skip.add(id(element.slice.value))
    else:
        skip.update(
            id(e.value)
            for e in node.elements  # type: ignore[attr-defined]
            if isinstance(e, cst.Element)
        )


def _bind_names(facts: Facts, target: cst.CSTNode | None, inner: bool, top: int) -> None:
    """Every name inside a binding target into `facts.bound`, and into `module_bound` outside
    every body (a comprehension's target too: more than libcst binds there, never less)."""
    names = _target_names(target)
    facts.bound |= names
    if not inner:
        facts.module_bound |= names
        for name in names:
            facts.module_binders.setdefault(name, set()).add(top)


def _target_names(target: cst.CSTNode | None) -> set[str]:
    """Every name inside a binding target (`a` of `a.b = 1` too: more than it binds)."""
    out: set[str] = set()
    stack = [target] if target is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            out.add(node.value)
        else:
            stack.extend(children(node))
    return out


def _bind_statement(facts: Facts, node: cst.CSTNode, kind: type, inner: bool, top: int) -> None:
    """The bindings an assignment, a loop target or a `with ... as` makes."""
    if kind is cst.WithItem:
        _bind_names(facts, node.asname, inner, top)  # type: ignore[attr-defined]
    elif kind is cst.Assign:
        for t in node.targets:  # type: ignore[attr-defined]
            _bind_names(facts, t.target, inner, top)
    else:
        _bind_names(facts, node.target, inner, top)  # type: ignore[attr-defined]
    if kind is cst.Assign:
        assert isinstance(node, cst.Assign)
        for target in node.targets:
            _bind(facts, target.target, node.value)
        if len(node.targets) == 1:
            _note_assigned(facts, node.targets[0].target, node.value)
    elif kind is cst.AnnAssign:
        assert isinstance(node, cst.AnnAssign)
        if node.value is None:
            if isinstance(node.target, cst.Name):
                facts.declared_only.add(id(node.target))
        else:
            _bind(facts, node.target, node.value)
            _note_assigned(facts, node.target, node.value)
    elif kind is cst.NamedExpr:
        assert isinstance(node, cst.NamedExpr)
        _bind(facts, node.target, node.value)
    elif kind is cst.WithItem:
        assert isinstance(node, cst.WithItem)
        if node.asname is not None:
            _bind(facts, node.asname.name, None)
    else:  # AugAssign, For, CompFor
        _bind(facts, node.target, None)  # type: ignore[attr-defined]


def _aliases(facts: Facts, names: Sequence[cst.ImportAlias]) -> None:
    for alias in names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            real = get_full_name_for_node(alias.name) or ""
            facts.aliases[alias.asname.name.value] = real.rsplit(".", 1)[-1]


def _bind(facts: Facts, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
    if isinstance(target, cst.Name):
        if value is not None:
            facts.values[id(target)] = value
    elif isinstance(target, cst.Attribute):
        key = get_full_name_for_node(target)
        if key is not None:
            facts.attr_bindings.setdefault(key, []).append(value)
        base = get_full_name_for_node(target.value)
        if base is not None and value is not None:
            facts.attr_sets.append(AttrSet(base, target.attr.value, target, value))
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            _bind(facts, element.value, None)
    elif isinstance(target, cst.StarredElement):
        _bind(facts, target.value, None)


def _note_assigned(facts: Facts, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
    key = get_full_name_for_node(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
    if key is not None and isinstance(value, cst.Call):
        facts.assigned_to[id(value)] = (key, target)


# ------------------------------------------------------------------------------ literals


def dotted(node: cst.CSTNode) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return parts[::-1]


def last_name(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


_CONSTANTS: dict[str, Any] = {"True": True, "False": False, "None": None}


def literal(node: cst.CSTNode) -> tuple[bool, Any]:
    """(True, value) for a literal: numbers, strings, bytes, True/False/None, a signed int
    or float, and tuples or lists of literals (what fp8lint treats as a written value)."""
    try:
        return True, _literal(node)
    except (_NotLiteral, ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


class _NotLiteral(Exception):
    pass


def _literal(node: cst.CSTNode) -> Any:
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Float):
        return float(node.value.replace("_", ""))
    if isinstance(node, cst.Imaginary):
        return complex(node.value.replace("_", ""))
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        if value is None:
            raise _NotLiteral
        return value
    if isinstance(node, cst.Name) and node.value in _CONSTANTS:
        return _CONSTANTS[node.value]
    if isinstance(node, cst.UnaryOperation):
        if isinstance(node.expression, (cst.Integer, cst.Float)):
            if isinstance(node.operator, cst.Minus):
                return -_literal(node.expression)
            if isinstance(node.operator, cst.Plus):
                return +_literal(node.expression)
        raise _NotLiteral
    if isinstance(node, cst.Tuple):
        return tuple(_elements(node.elements))
    if isinstance(node, cst.List):
        return _elements(node.elements)
    raise _NotLiteral


def _elements(elements: Sequence[cst.BaseElement]) -> list[Any]:
    out = []
    for element in elements:
        if not isinstance(element, cst.Element):
            raise _NotLiteral
        out.append(_literal(element.value))
    return out


def string_node(token: str) -> cst.CSTNode:
    """A string token as a libcst node (a Name that reads as no literal if it is none)."""
    try:
        return cst.SimpleString(token)
    except cst.CSTValidationError:
        return cst.Name("_")


def is_literal_name(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value in _CONSTANTS


def short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
