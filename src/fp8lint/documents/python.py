"""Python source read with libcst: parse, spans, literal values, names however imported, and
the CST edits that fixes are made of.  Nothing here knows a framework.

libcst is the parser and the rewriter.  Three things keep it fast and safe on any input:
`pyscan` bounds what reaches libcst and finds the top-level definitions `parse` may leave out
(`prune`), `pydeep.deep` runs the libcst work on a thread with a large stack, and scopes are
resolved only on demand, over the parsed nodes themselves.  libcst's scope analysis
(`pyscopes.scopes`) runs when a caller first asks where a name comes from, over as
little as gives libcst's whole-module answer (`_narrow_scope`): the imports alone
for a name only imports bind; for a use inside a function, that function cut to the
statements holding the name, after the imports and the top-level definitions (as
signatures) that bind it.  A name module-level code binds otherwise, or one declared
`global`, takes the module with the bodies of the definitions the caller did not `focus` on
as `...` (the whole module if a question reaches into one).  Positions are `pyspans`'.

Names are resolved by libcst's scope analysis: `imported_names` gives the dotted names an
expression has through imports (aliases, `import a.b as c`, module attributes), and
`follow` reads a value through a name only when libcst's scope analysis finds exactly one
assignment to it in the scope the use sees.

Edits (`pyedit`): a fix transforms the top-level statement that holds its target with libcst,
and the edit handed on is the smallest region in which the statement's new code differs from
its old code: applying it gives the transformed module's code.

This module is the one callers import: the names of `pyscan`, `pydeep`, `pyfacts`, `pyspans`
and `pyedit` they use are re-exported here, and `parse` and `PyModule.facts` look `scan`,
`prune`, `collect` and `MAX_CHARS` up here (a test or a profiler may replace them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import QualifiedNameSource

from fp8lint.documents.pycut import binding_parts, mentions, only_holding, signature_body
from fp8lint.documents.pydeep import deep as deep
from fp8lint.documents.pyedit import Change as Change
from fp8lint.documents.pyedit import Rewrite as Rewrite
from fp8lint.documents.pyedit import argument_removed as argument_removed
from fp8lint.documents.pyedit import attribute_renamed as attribute_renamed
from fp8lint.documents.pyedit import expression as expression
from fp8lint.documents.pyedit import keyword_added as keyword_added
from fp8lint.documents.pyedit import keyword_renamed as keyword_renamed
from fp8lint.documents.pyedit import minimal_edit as minimal_edit
from fp8lint.documents.pyedit import replaced as replaced
from fp8lint.documents.pyedit import statement_removed as statement_removed
from fp8lint.documents.pyfacts import STRINGS, string_node
from fp8lint.documents.pyfacts import AttrSet as AttrSet
from fp8lint.documents.pyfacts import Facts as Facts
from fp8lint.documents.pyfacts import children as children
from fp8lint.documents.pyfacts import collect as collect
from fp8lint.documents.pyfacts import dotted as dotted
from fp8lint.documents.pyfacts import is_literal_name as is_literal_name
from fp8lint.documents.pyfacts import last_name as last_name
from fp8lint.documents.pyfacts import literal as literal
from fp8lint.documents.pyfacts import short as short
from fp8lint.documents.pylocals import (
    FunctionLocals,
    dotted_roots,
    import_locals,
    inner_imports,
    view_of,
)
from fp8lint.documents.pyscan import DEEP as DEEP
from fp8lint.documents.pyscan import MAX_BOOL as MAX_BOOL
from fp8lint.documents.pyscan import MAX_BRACKET_WORK as MAX_BRACKET_WORK
from fp8lint.documents.pyscan import MAX_BRACKETS as MAX_BRACKETS
from fp8lint.documents.pyscan import MAX_CHAIN as MAX_CHAIN
from fp8lint.documents.pyscan import MAX_CHAIN_WORK as MAX_CHAIN_WORK
from fp8lint.documents.pyscan import MAX_DEPTH as MAX_DEPTH
from fp8lint.documents.pyscan import WORD, blank, statement_lines
from fp8lint.documents.pyscan import Shape as Shape
from fp8lint.documents.pyscan import prune as prune
from fp8lint.documents.pyscan import scan as scan
from fp8lint.documents.pyscopes import scopes
from fp8lint.documents.pyspans import Located
from fp8lint.documents.text import ParseError, SourceFile

if TYPE_CHECKING:
    from libcst.metadata import Scope

MAX_CHARS = 1_000_000  # characters of Python libcst is asked to parse in one file
_MAX_FOLLOW = 8  # how many `a = b` links a value is followed through


# ----------------------------------------------------------------------------- parsing

_TOO_DEEP = re.compile(r"too many nested|too many levels|too many indentation|too complex|stack")
_AT = re.compile(r"error at (\d+):(\d+)")


def parse(file: SourceFile, relevant: re.Pattern[str] | None = None) -> PyModule:
    """The file's module (kept on the `SourceFile`): parsed by libcst after `scan`, without
    the top-level definitions `relevant` does not reach (see `prune`).  Raises `ParseError`
    with a line and column for what libcst cannot read.  Call it inside `deep`.  A module
    already on the file (the fix loop's check parsed the whole text) stands for the parse
    when nothing is left out."""
    cached = file.parsed
    if isinstance(cached, PyModule) and cached.relevant is relevant:
        return cached
    bom = 1 if file.text.startswith("\ufeff") else 0
    whole = cached if isinstance(cached, cst.Module) and not bom else None
    source = file.text[bom:]
    shape = scan(source)
    dropped: list[tuple[int, int]] = []
    if relevant is not None:
        text, starts, dropped = prune(source, shape, relevant)
    else:
        text, starts = source, [s for s, _ in shape.statements]
    size = len(text) - text.count("\n") - text.count("\r")
    if size > MAX_CHARS:
        raise ParseError(
            f"too long to read as Python: {size} characters of code to parse (the limit is "
            f"{MAX_CHARS})",
            1,
            1,
        )
    try:
        module = whole if whole is not None and text is source else cst.parse_module(text)
    except cst.ParserSyntaxError as err:
        raise _syntax_error(text, err, file.path) from None
    except RecursionError:
        raise ParseError(DEEP, 1, 1) from None
    found = PyModule(file, module, text, bom, relevant)
    found.left_out = (shape, dropped)
    if shape.plain and not shape.broken:
        found.statement_lines = statement_lines(text, starts, len(module.body))
    file.parsed = found
    return found


_SMALL_UNIT = 300  # names in a function analysed whole rather than once per name
_SLICES = 64  # names used at module level analysed in a slice of the module each, at most


def _syntax_error(text: str, err: cst.ParserSyntaxError, path: str) -> ParseError:
    """libcst's verdict, with a usable position.  libcst's messages carry no reliable one
    (a tokenizer error always says line 1), so CPython's compiler is asked where the text
    fails (compiled to a tree only, never run): its position and message are the ones
    Python users know.  When CPython reads the text (syntax newer than libcst knows),
    libcst's own message stands, at the position it names."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text, filename=path)
    except (RecursionError, MemoryError):
        return ParseError(DEEP, 1, 1)
    except SyntaxError as exc:
        message = exc.msg or "invalid syntax"
        if _TOO_DEEP.search(message):
            return ParseError(DEEP, exc.lineno or 1, exc.offset or 1)
        return ParseError(f"Python syntax error: {message}", exc.lineno or 1, exc.offset or 1)
    except ValueError as exc:
        return ParseError(f"Python syntax error: {exc}", 1, 1)
    message = str(err.message).strip()
    if _TOO_DEEP.search(message):
        return ParseError(DEEP, err.raw_line or 1, 1)
    at = _AT.search(message)
    line, column = (int(at.group(1)), int(at.group(2)) + 1) if at else (err.raw_line or 1, 1)
    message = re.sub(r"^(parser|tokenizer) error: (error at \d+:\d+: )?", "", message)
    return ParseError(f"Python syntax error: {message}", max(line, 1), max(column, 1))


# ------------------------------------------------------------------------- the module


@dataclass(frozen=True)
class Followed:
    """Where following a value through names ended: the final expression, the values passed
    on the way, and why it stopped early (None when it did not)."""

    node: cst.CSTNode
    via: tuple[cst.CSTNode, ...]
    why: str | None


class PyModule(Located):
    """One parsed file: the module, its facts, and (resolved on first use) its scopes and
    positions."""

    def __init__(
        self,
        file: SourceFile,
        module: cst.Module,
        text: str,
        bom: int,
        relevant: re.Pattern[str] | None,
    ) -> None:
        super().__init__(file, module, text, bom)
        self.relevant = relevant
        self._facts: Facts | None = None
        self._scopes: Mapping[cst.CSTNode, Scope | None] | None = None
        self._focus: set[int] | None = None
        self._stubbed: dict[int, cst.CSTNode] = {}  # id(definition in the skeleton) -> itself
        # (id(scope), name) -> its assignments: asked once per use, and a name assigned at
        # every use (`r = DelayedScaling()` 20,000 times) made asking each time quadratic
        self._assigned: dict[tuple[int, str], tuple[Any, ...]] = {}
        self._inner: set[str] | None = None
        self._imports: tuple[Scope | None] | None = None
        self._import_locals: FunctionLocals | None = None
        self._by_scope: dict[tuple[Any, ...], Mapping[cst.CSTNode, Scope | None]] = {}
        # name -> the scopes of the module's slice for it, and that slice (`_slice`)
        self._globals: dict[str, tuple[Mapping[cst.CSTNode, Scope | None], cst.Module]] = {}
        self._mentions: dict[int, dict[str, set[int]]] = {}  # top-level index -> `mentions`
        self._function_locals: dict[tuple[int, int], FunctionLocals] = {}
        self._roots: set[str] | None = None
        # the scan of the file and the ranges of it left out of `text`
        self.left_out: tuple[Shape, list[tuple[int, int]]] = (Shape(), [])

    # -- facts -------------------------------------------------------------------------------
    @property
    def facts(self) -> Facts:
        if self._facts is None:
            self._facts = collect(self.module)
        return self._facts

    # -- scopes ------------------------------------------------------------------------------
    def focus(self, statements: set[int]) -> None:
        """Ask scope questions only about nodes of these top-level statements (before the
        first one): the scope analysis then reads the other top-level definitions as their
        signatures only (see `_skeleton`).  A question about a node outside them is still
        answered, by analysing the whole module."""
        if self._scopes is None:
            self._focus = statements

    def scope(self, node: cst.CSTNode) -> Scope | None:
        if self._scopes is None:
            if self._focus is None:
                self._scopes = scopes(self.module)
            else:
                self._scopes = scopes(self._skeleton(self._focus))
        found = self._scopes.get(node)
        if found is None and self._focus is not None:
            self._focus = None  # a node the skeleton left out: analyse the whole module
            self._scopes = scopes(self.module)
            self._assigned.clear()  # keyed by the ids of the scopes just dropped
            found = self._scopes.get(node)
        return found

    def _skeleton(self, focus: set[int]) -> cst.Module:
        """The module with the bodies of its other top-level definitions replaced by `...`.
        A body binds nothing outside itself unless it says `global` or `nonlocal` (those
        statements stay whole); decorators, signatures and names stay, so every name the
        module binds is still bound, in the same scope, by the same kind of statement."""
        stub = signature_body()
        keep = focus | self.facts.scoping
        body: list[cst.BaseStatement] = []
        for i, stmt in enumerate(self.module.body):
            if i not in keep and isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                short = stmt.with_changes(body=stub)
                self._stubbed[id(short)] = stmt
                stmt = short
            body.append(stmt)
        return self.module.with_changes(body=body)

    # -- narrower analyses: the imports alone, or one top-level statement alone -------------
    def _narrow_scope(self, node: cst.CSTNode) -> Scope | FunctionLocals | None:
        """The scope libcst gives `node` (a name or attribute chain), from an analysis of
        less than the module where that gives the same answer; None when it does not.

        The first name is bound outside function, class and lambda bodies by imports and
        top-level `def`/`class` statements at most, and nowhere declared `global`.  A use
        then sees a binding inside the code around it or one of those, so it is analysed
        with them alone: the imports, those definitions as signatures, and the outermost
        function holding the use (the top-level statement, when none: a function sees its
        globals past any class around it).  Of the imports alone when nothing else binds
        the name anywhere.  Without any analysis when the function binds the name nowhere
        (the module's answer) or only plainly in its own scope (`pylocals`)."""
        base = node
        while isinstance(base, cst.Attribute):
            base = base.value
        if not isinstance(base, cst.Name):
            return None
        facts = self.facts
        name = base.value
        if name in facts.declared_global:
            return None
        shared = name in facts.module_bound  # bound at module level by more than imports
        imported = name in facts.module_imported
        defs = tuple(facts.module_defined.get(name, ()))
        if (
            imported
            and not defs
            and not (name in facts.bound or name in facts.defined or name in self._inner_imports())
        ):
            return self._imported(name)
        if id(node) in facts.module_use:  # seen from the global scope (or a comprehension)
            if not shared:
                return self._global_scope(name, imported, defs)
            if name not in self._globals and (self._scopes or len(self._globals) >= _SLICES):
                return None  # the whole module's analysis answers, once made or once cheaper
            return self._slice(name, imported, defs)[0].get(node)
        top = facts.statement.get(id(node))
        if top is None:
            return None
        unit = facts.unit_of.get(id(node), -1)
        if unit >= 0:
            function, _ = facts.units[unit]
            if function is not self.module.body[top] and function.name.value == name:
                unit = -1  # a method's own name, which its class binds, not the module
            else:
                own = facts.unit_scopes[unit]
                if name not in own.bound:
                    # nothing in the function binds it: every use there is the module's
                    return self._global_scope(name, imported, defs)
                view = view_of(facts, node, name)
                if view is not None and name not in own.unsure and self._plain(node, name):
                    found = self._locals(unit, view)
                    if name in found:  # bound plainly in the function's own scope
                        if view >= 0 or found.before(node, name, *facts.direct[id(node)]):
                            return found
                    if name not in own.own:  # bound in other nested scopes only
                        return self._global_scope(name, imported, defs)
        if shared:
            return None  # the analyses below leave out the module's other bindings
        return self._unit_scopes(top, unit, imported, defs, name).get(node)

    def _plain(self, node: cst.CSTNode, name: str) -> bool:
        """False for `name.attr` when the module imports `name.x` without `as`."""
        if self._roots is None:
            self._roots = dotted_roots(self.facts.module_imports)
        return not isinstance(node, cst.Attribute) or name not in self._roots

    def _locals(self, unit: int, view: int = -1) -> FunctionLocals:
        """The unit's own bindings, as its scope (`view` -1) or a nested scope sees them."""
        found = self._function_locals.get((unit, view))
        if found is None:
            own = self._function_locals.get((unit, -1))
            if own is None:
                own = self._function_locals[(unit, -1)] = self.facts.unit_scopes[unit].locals()
            found = self._function_locals[(unit, view)] = (
                own.seen_from_inside() if view >= 0 else own
            )
        return found

    def _inner_imports(self) -> set[str]:
        """The names imports inside a function or class body bind."""
        if self._inner is None:
            self._inner = inner_imports(self.facts.imports, self.facts.module_imports)
        return self._inner

    def _imported(self, name: str) -> Scope | FunctionLocals | None:
        """The scope of a name only the module's imports bind: the imports read plainly,
        or libcst's analysis of them (a dotted `import a.b`, two in one statement)."""
        if self._import_locals is None:
            self._import_locals = import_locals(self.facts.module_imports)
        if name in self._import_locals:
            return self._import_locals
        if self._imports is None:
            body = [cst.SimpleStatementLine(body=[x]) for x in self.facts.module_imports]
            module = cst.Module(body=body)
            self._imports = (scopes(module).get(module),)
        return self._imports[0]

    def _global_scope(self, name: str, imports: bool, defs: tuple[int, ...]) -> Scope | None:
        """For a use the global scope sees: the global scope of the module's slice for
        `name`, which holds all its bindings there."""
        found, module = self._slice(name, imports, defs)
        return found.get(module)

    def _slice(
        self, name: str, imports: bool, defs: tuple[int, ...]
    ) -> tuple[Mapping[cst.CSTNode, Scope | None], cst.Module]:
        """The scopes of a module of the imports and top-level definitions (as signatures)
        that bind `name`, and the other top-level statements that bind it or use it outside
        every body, their blocks cut to the statements holding it: libcst's answers there
        for every such use and binding are its answers in the whole module (the bindings of
        `name` in the global scope are all there, in the same order, with its uses)."""
        found = self._globals.get(name)
        if found is None:
            facts = self.facts
            whole = facts.module_binders.get(name, set()) | facts.module_mentions.get(name, set())
            whole -= set(defs)
            parts = [
                p
                for p in binding_parts(
                    facts, self.module, self._stubbed, name, imports, defs, None, False
                )
                if p[0] not in whole
            ]
            for index in whole:  # a block's statements that do not hold the name bind none
                held = self._mentions.get(index)
                if held is None:
                    held = self._mentions[index] = mentions(self.module.body[index])
                cut = only_holding(self.module.body[index], held.get(name, set()), self._stubbed)
                parts.append((index, 0, cut))
            body = [p[2] for p in sorted(parts, key=lambda p: (p[0], p[1]))]
            module = cst.Module(body=body)  # type: ignore[arg-type]
            found = self._globals[name] = (scopes(module), module)
        return found

    def _unit_scopes(
        self, top: int, unit: int, imports: bool, defs: tuple[int, ...], name: str
    ) -> Mapping[cst.CSTNode, Scope | None]:
        """Scopes from a module of (in source order) the module's imports if `imports`, the
        top-level definitions `defs` as signatures, and the function `unit` (the top-level
        statement `top` when -1) in place of its top-level statement.  For a function, only
        the imports and the statements of its body that hold `name`: the others bind none
        of it."""
        facts = self.facts
        # a small function is analysed once, whole, for every name without a top-level
        # definition: each analysis has a fixed cost of its own
        whole = unit >= 0 and not defs and facts.unit_names[unit] <= _SMALL_UNIT
        key = (top, unit, imports or whole, defs, name if unit >= 0 and not whole else "")
        found = self._by_scope.get(key)
        if found is None:
            held: cst.CSTNode = self.module.body[top]
            if whole:
                held = facts.units[unit][0]
            elif unit >= 0:
                function = facts.units[unit][0]
                keep = {i for chain in facts.mentions.get((unit, name), ()) for i in chain}
                held = only_holding(function, keep, self._stubbed)
            every = unit < 0 or whole
            parts = [
                (top, 1, held),
                *binding_parts(
                    self.facts,
                    self.module,
                    self._stubbed,
                    name,
                    imports or whole,
                    defs,
                    held,
                    every,
                ),
            ]
            body = [p[2] for p in sorted(parts, key=lambda p: (p[0], p[1]))]
            found = self._by_scope[key] = scopes(cst.Module(body=body))  # type: ignore[arg-type]
        return found

    def imported_names(self, node: cst.CSTNode) -> tuple[str, ...]:
        """The dotted names `node` (a name or attribute chain) has through the file's imports,
        however spelled: `DS` from `... import DelayedScaling as DS`, `r.DelayedScaling` after
        `import transformer_engine.common.recipe as r`.  Sorted; empty when none."""
        scope = self._narrow_scope(node) or self.scope(node)
        if scope is None:
            return ()
        found = scope.get_qualified_names_for(node)
        return tuple(sorted(q.name for q in found if q.source is QualifiedNameSource.IMPORT))

    def assignments(self, name: cst.Name) -> tuple[Any, ...]:
        """libcst's assignments of `name` in the scope its use sees (builtins and `x: int`
        declarations without a value do not count), in source order."""
        scope = self._narrow_scope(name) or self.scope(name)
        if scope is None:
            return ()
        key = (id(scope), name.value)
        found = self._assigned.get(key)
        if found is None:
            declared = self.facts.declared_only
            found = tuple(
                sorted(
                    (
                        a
                        for a in scope[name.value]
                        if hasattr(a, "node") and id(a.node) not in declared
                    ),
                    key=lambda a: a._index,
                )
            )
            self._assigned[key] = found
        return found

    def defines_locally(self, name: cst.Name) -> bool:
        """Whether `name`, where used, is a function or class the file defines itself."""
        return any(
            isinstance(a.node, (cst.FunctionDef, cst.ClassDef)) for a in self.assignments(name)
        )

    def bindings(self, node: cst.CSTNode) -> list[cst.CSTNode | None] | None:
        """The values a name or dotted attribute is bound to (None for a binding without a
        plain value: a parameter, an import, a loop target, an unpacking), or None when it
        is not bound in the file."""
        if isinstance(node, cst.Name):
            found = self.assignments(node)
            if not found:
                return None
            values: list[cst.CSTNode | None] = []
            for a in found:
                if isinstance(a.node, (cst.FunctionDef, cst.ClassDef)):
                    values.append(self._stubbed.get(id(a.node), a.node))
                else:
                    values.append(self.facts.values.get(id(a.node)))
            return values
        key = get_full_name_for_node(node)
        if key is None:
            return None
        bound = self.facts.attr_bindings.get(key)
        return list(bound) if bound else None

    def follow(self, node: cst.CSTNode) -> Followed:
        """Follow a name (or `obj.attr`) bound exactly once, in the scope the use sees, to
        its value, and on through names (at most `_MAX_FOLLOW` links)."""
        via: list[cst.CSTNode] = []
        for _ in range(_MAX_FOLLOW):
            if not isinstance(node, (cst.Name, cst.Attribute)) or is_literal_name(node):
                break
            bound = self.bindings(node)
            if not bound:
                return Followed(node, tuple(via), None)
            if len(bound) > 1:
                shown = short(self.source(node))
                return Followed(
                    node,
                    tuple(via),
                    f"`{shown}` is not a literal fp8lint can read (it is assigned "
                    f"{len(bound)} times)",
                )
            value = bound[0]
            if value is None or isinstance(value, (cst.FunctionDef, cst.ClassDef)):
                return Followed(value or node, tuple(via), None)
            via.append(value)
            node = value
        return Followed(node, tuple(via), None)

    def attr_sets(self, key: str, where: cst.CSTNode) -> list[AttrSet]:
        """`key.field = value` statements made in the scope of `where`."""
        found = [s for s in self.facts.attr_sets if s.base == key]
        # all from the narrower analyses (one per top-level statement: two statements never
        # share a scope a body binds in), or all from the module's
        here = self._narrow_scope(where)
        if here is not None:
            scopes = [self._narrow_scope(s.target) for s in found]
            if all(x is not None for x in scopes):
                return [s for s, x in zip(found, scopes, strict=True) if x is here]
        for s in found:  # every scope first: one of them may widen the analysis
            self.scope(s.target)
        scope = self.scope(where)
        return [s for s in found if self.scope(s.target) is scope]

    def bound_once_where(self, target: cst.BaseExpression) -> bool:
        """Whether an assignment target (a name or dotted attribute) is bound exactly once."""
        if isinstance(target, cst.Name):
            return len(self.assignments(target)) == 1
        key = get_full_name_for_node(target)
        return key is not None and len(self.facts.attr_bindings.get(key, [])) == 1

    # -- whole-file questions -----------------------------------------------------------------
    def words(self) -> list[str]:
        """Every identifier of the whole file (names, attributes, definitions, parameters,
        keywords, imports) and every string literal without spaces, for questions about the
        file as a whole.  The definitions left out of the parse are read from the scan: their
        words of code, and their string literals."""
        out: list[str] = []
        stack: list[cst.CSTNode] = [self.module]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Name):
                out.append(node.value)
                continue
            if isinstance(node, STRINGS):
                ok, value = literal(node)
                if ok and isinstance(value, str) and value.split() == [value]:
                    out.append(value)
            elif isinstance(node, cst.FormattedStringText):
                if node.value.split() == [node.value]:
                    out.append(node.value)
            if isinstance(node, cst.Arg) and node.keyword is not None:
                out.append(node.keyword.value)
            stack.extend(children(node))
        shape, dropped = self.left_out
        if dropped:
            source = self.file.text[self._bom :]
            code = blank(source, shape.prose)
            for a, b in dropped:
                out.extend(WORD.findall(code, a, b))
            for a, b in shape.prose:
                if source[a] != "#" and any(x <= a < y for x, y in dropped):
                    ok, value = literal(string_node(source[a:b]))
                    if ok and isinstance(value, str) and value.split() == [value]:
                        out.append(value)
        return out

    def strings_in(self, node: cst.CSTNode) -> list[str]:
        """The string literals inside `node` (f-string text included)."""
        out: list[str] = []
        stack: list[cst.CSTNode] = [node]
        while stack:
            item = stack.pop()
            if isinstance(item, STRINGS):
                ok, value = literal(item)
                if ok and isinstance(value, str):
                    out.append(value)
                    continue
            elif isinstance(item, cst.FormattedStringText):
                out.append(item.value)
            stack.extend(children(item))
        return out
