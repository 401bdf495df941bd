"""The bindings of each outermost function's own scope, collected by the facts walk, so that
most names used in a function body are resolved without a libcst scope analysis.

libcst's `ScopeProvider` costs several times the parse on a test module that builds a
recipe in every function.  The answer it gives for a name used directly in a function's
own scope (not inside a nested function, class, lambda or comprehension) is simple when
only plain statements bind the name there: the parameters of that name, the names stored
by assignments, loop targets, `with`/`except ... as`, walrus targets, imports, and the
nested definitions of that name, in source order.  Anything else that could change the
answer (`import a.b` without `as`, `global`/`nonlocal`, `del`, a match capture, type
parameters, a walrus in a nested scope, two bindings in one statement) marks the name
*unsure*, and a libcst analysis answers for it (`documents.python`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ImportAssignment, QualifiedName


class _Nesting(Protocol):
    """What `view_of` reads of `pyfacts.Facts` (which imports this module)."""

    direct: dict[int, tuple[int, int]]
    nested_of: dict[int, int]
    nested_scopes: list[tuple[int, set[str]]]


@dataclass
class UnitScope:
    """One outermost function: every name bound anywhere inside it (`bound`), and the
    bindings of its own scope (`own`: name -> (binding node, the innermost statement
    holding it, its place in the walk))."""

    bound: set[str] = field(default_factory=set)
    own: dict[str, list[tuple[cst.CSTNode, int, int]]] = field(default_factory=dict)
    unsure: set[str] = field(default_factory=set)

    def bind(self, name: str, node: cst.CSTNode, statement: int, seq: int) -> None:
        self.bound.add(name)
        self.own.setdefault(name, []).append((node, statement, seq))

    def mark(self, names: set[str] | list[str]) -> None:
        """Bound in a way this module does not follow: a libcst analysis answers."""
        self.bound.update(names)
        self.unsure.update(names)

    def locals(self) -> FunctionLocals:
        """The function's own scope, for the names bound there and not unsure."""
        out: dict[str, tuple[LocalBinding, ...]] = {}
        for name, found in self.own.items():
            statements = [s for _, s, _ in found]
            if name in self.unsure or len(set(statements)) < len(statements):
                continue  # two bindings in one statement: libcst may order them either way
            out[name] = tuple(
                LocalBinding(node, i, statement, seq)
                for i, (node, statement, seq) in enumerate(found)
            )
        return FunctionLocals(out)


def own_bindings(function: cst.FunctionDef, scope: UnitScope) -> None:
    """A unit's own signature: its parameters bind in its scope (the Param is libcst's
    assignment node); type parameters live in a scope of their own."""
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    for param in every:
        scope.bind(param.name.value, param, -1, -1)
    if function.type_parameters is not None:
        kinds = (cst.TypeVar, cst.TypeVarTuple, cst.ParamSpec)
        typed = function.type_parameters.params
        scope.mark([t.param.name.value for t in typed if isinstance(t.param, kinds)])


def store_names(target: cst.CSTNode | None) -> list[cst.Name]:
    """The names a target stores to, as libcst's expression contexts mark them: through
    tuples, lists and starred elements, never into an attribute or a subscript."""
    out: list[cst.Name] = []
    stack = [target] if target is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            out.append(node)
        elif isinstance(node, (cst.Tuple, cst.List)):
            stack.extend(reversed([e.value for e in node.elements]))
        elif isinstance(node, (cst.StarredElement, cst.Element)):
            stack.append(node.value)
    return out


def note_binding(
    scope: UnitScope,
    node: cst.CSTNode,
    kind: type,
    statement: int,
    seq: int,
    into: set[str] | None,
) -> None:
    """What a binding node inside a unit binds: in the unit's own scope, or with `into` (the
    names of the function, class, lambda or comprehension nested in it that holds the node)
    in that nested scope."""
    targets: list[cst.Name] = []
    if kind is cst.Assign:
        assert isinstance(node, cst.Assign)
        for assigned in node.targets:
            targets += store_names(assigned.target)
    elif kind in (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr, cst.CompFor):
        targets = store_names(node.target)  # type: ignore[attr-defined]
    elif kind is cst.WithItem or kind in _HANDLERS:
        asname: Any = getattr(node, "asname" if kind is cst.WithItem else "name")
        targets = store_names(asname.name) if asname is not None else []
    elif kind in (cst.FunctionDef, cst.ClassDef):
        name = node.name.value  # type: ignore[attr-defined]
        if into is not None:
            scope.bound.add(name)
            into.add(name)
        else:
            scope.bind(name, node, statement, seq)
        return
    elif kind in (cst.Import, cst.ImportFrom):
        _import_binds(scope, node, statement, seq, into)  # type: ignore[arg-type]
        return
    elif kind in (cst.Global, cst.Nonlocal):
        scope.mark([n.name.value for n in node.names])  # type: ignore[attr-defined]
        return
    elif kind is cst.Del:  # `del x` makes `x` local to its function
        scope.mark([n.value for n in store_names(node.target)])  # type: ignore[attr-defined]
        return
    elif kind in MARKED:  # match captures, type parameters and aliases
        value = getattr(node, MARKED[kind])
        scope.mark([value.value] if isinstance(value, cst.Name) else [])
        return
    elif kind is cst.Param:  # a nested function's or lambda's, always nested
        scope.bound.add(node.name.value)  # type: ignore[attr-defined]
        if into is not None:
            into.add(node.name.value)  # type: ignore[attr-defined]
        return
    names = [t.value for t in targets]
    if into is not None:
        scope.bound.update(names)
        into.update(names)
        if kind is cst.NamedExpr:  # a walrus in a comprehension binds in the function
            scope.mark(names)
    else:
        for t in targets:
            scope.bind(t.value, t, statement, seq)


def _import_binds(
    scope: UnitScope,
    node: cst.Import | cst.ImportFrom,
    statement: int,
    seq: int,
    into: set[str] | None,
) -> None:
    """An import in a unit: in its own scope, a binding libcst names through the import
    (`import a.b` without `as` binds `a` and `a.b`: left to libcst); nested, a name there."""
    if isinstance(node.names, cst.ImportStar):
        return
    for alias in node.names:
        name = bound_by(alias)
        if into is not None:
            scope.bound.add(name)
            into.add(name)
        elif _dotted(alias):
            scope.mark([name])
        else:
            scope.bind(name, node, statement, seq)


def import_locals(imports: list[cst.Import | cst.ImportFrom]) -> FunctionLocals:
    """The module's imports as a scope, for a name nothing but them binds: each import of
    it in order (the statement is libcst's assignment node for an import), a dotted `import
    a.b` without `as` and two bindings in one statement left out (libcst answers those)."""
    scope = UnitScope()
    for i, imp in enumerate(imports):
        _import_binds(scope, imp, i, i, None)
    return scope.locals()


def inner_imports(
    imports: list[cst.Import | cst.ImportFrom], module_imports: list[cst.Import | cst.ImportFrom]
) -> set[str]:
    """The names the imports inside a function or class body bind."""
    outer = {id(x) for x in module_imports}
    return {
        bound_by(alias)
        for imp in imports
        if id(imp) not in outer and not isinstance(imp.names, cst.ImportStar)
        for alias in imp.names
    }


_HANDLERS = (cst.ExceptHandler, cst.ExceptStarHandler)
MARKED: dict[type, str] = {
    cst.MatchAs: "name",
    cst.MatchStar: "name",
    cst.MatchMapping: "rest",
    cst.TypeVar: "name",
    cst.TypeVarTuple: "name",
    cst.ParamSpec: "name",
    cst.TypeAlias: "name",
}
# every kind of node `note_binding` reads
BINDING_KINDS = frozenset(
    {
        cst.Assign,
        cst.AnnAssign,
        cst.AugAssign,
        cst.For,
        cst.NamedExpr,
        cst.CompFor,
        cst.WithItem,
        cst.FunctionDef,
        cst.ClassDef,
        cst.Global,
        cst.Nonlocal,
        cst.Del,
        cst.Param,
        cst.Import,
        cst.ImportFrom,
        *_HANDLERS,
        *MARKED,
    }
)
# the nodes whose children are in a scope nested in the function around them
NESTING = frozenset(
    {
        cst.FunctionDef,
        cst.ClassDef,
        cst.Lambda,
        cst.ListComp,
        cst.SetComp,
        cst.DictComp,
        cst.GeneratorExp,
    }
)


def dotted_roots(imports: list[cst.Import | cst.ImportFrom]) -> set[str]:
    """The first names of the module's `import a.b` without `as`: libcst reads `a.b.c`
    through the dotted name `a.b` of the module's scope, whatever binds `a` nearer."""
    return {
        bound_by(alias)
        for imp in imports
        if isinstance(imp, cst.Import)
        for alias in imp.names
        if _dotted(alias)
    }


def bound_by(alias: cst.ImportAlias) -> str:
    """The name an import alias binds: `c` of `import a.b as c`, `a` of `import a.b`."""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (get_full_name_for_node(alias.name) or "").split(".", 1)[0]


def _dotted(alias: cst.ImportAlias) -> bool:
    """`import a.b` without `as`: it binds `a`, and the dotted name `a.b` for libcst."""
    return alias.asname is None and "." in (get_full_name_for_node(alias.name) or "")


def view_of(facts: _Nesting, node: cst.CSTNode, name: str) -> int | None:
    """Where a use in a unit sees the unit's own bindings of `name` from: -1 directly in
    its scope, the nested scope around it when no scope between binds the name, or None
    (a nested scope binds it: libcst answers)."""
    if id(node) in facts.direct:
        return -1
    nest = facts.nested_of.get(id(node))
    if nest is None:
        return None
    at = nest
    while at >= 0:
        parent, names = facts.nested_scopes[at]
        if name in names:
            return None
        at = parent
    return nest


@dataclass(frozen=True)
class LocalBinding:
    """One binding in a function's own scope, as libcst's `Assignment` is read here: the
    node that binds (a Param, a stored Name, a nested definition, an import statement), its
    order, and where it is (innermost statement, place in the walk; -1 for a parameter)."""

    node: cst.CSTNode
    _index: int
    statement: int = -1
    seq: int = -1


class FunctionLocals:
    """A function's own scope, for the uses directly in it of names it binds plainly: what
    `documents.python` asks of a libcst scope (its bindings of a name, and qualified names,
    of which a local binding gives none from an import)."""

    def __init__(self, bindings: dict[str, tuple[LocalBinding, ...]]) -> None:
        self._bindings = bindings

    def seen_from_inside(self) -> FunctionLocals:
        """The same bindings, as a nested scope that binds none of these names sees them
        (its own object: the scope of a node there is not the function's)."""
        return FunctionLocals(self._bindings)

    def __contains__(self, name: str) -> bool:
        return name in self._bindings

    def __getitem__(self, name: str) -> tuple[LocalBinding, ...]:
        return self._bindings.get(name, ())

    def before(self, node: cst.CSTNode, name: str, seq: int, statement: int) -> bool:
        """Whether every binding of `name` comes before `node`, a use at `seq` in
        `statement`, as libcst counts it: a use sees only the bindings made before it (none
        of its own statement's) and, with none, the module's.  A binding's own name node is
        answered by itself."""
        found = self._bindings.get(name, ())
        return any(b.node is node for b in found) or all(
            b.statement != statement and b.seq < seq for b in found
        )

    def get_qualified_names_for(self, node: cst.CSTNode) -> set[QualifiedName]:
        """The names the imports among these bindings give `node` (libcst's own
        `ImportAssignment` reads each import); a local binding gives none from an import."""
        full = get_full_name_for_node(node)
        if full is None:
            return set()
        out: set[QualifiedName] = set()
        found = self._bindings.get(full.split(".", 1)[0], ())
        own = [b for b in found if b.node is node]  # a binding's name: that binding's names
        for b in own or found:
            if isinstance(b.node, (cst.Import, cst.ImportFrom)):
                made = ImportAssignment(full, None, b.node, b._index, b.node)  # type: ignore[arg-type]
                out |= made.get_qualified_names_for(full)
        return out
