"""Where a parsed module's nodes are written in the file, and the nodes found again from a
span for a fix: the half of `python.PyModule` that maps libcst's positions onto the file.

Positions (`pypositions`: libcst's code generation, noting offsets) are made per top-level
statement, for the statements that hold a span, and per method for a span inside a class's
method (one pass over the whole module when the scan could not line the statements up, or
once many statements hold one)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from fp8lint.documents.pyedit import minimal_edit
from fp8lint.documents.pyfacts import children
from fp8lint.documents.pypositions import Ranges, nested_positions, positions
from fp8lint.documents.pyscan import LINE_BREAK
from fp8lint.documents.tree import Pos, line_starts

if TYPE_CHECKING:
    from fp8lint.documents.pyfacts import Facts
    from fp8lint.documents.text import SourceFile
    from fp8lint.model import Span

_N = TypeVar("_N", bound=cst.CSTNode)

# statements positioned one at a time before one pass over the whole module takes over
_STATEMENT_PASSES = 64
_NONE: Mapping[cst.CSTNode, CodeRange] = {}  # a statement without nodes (one object: kept)


class Located:
    """A parsed file's nodes and their places in it; `PyModule` adds what the code says."""

    def __init__(self, file: SourceFile, module: cst.Module, text: str, bom: int) -> None:
        self.file = file
        self.module = module
        self.text = text  # what libcst parsed: the file without its BOM and left-out code
        self._bom = bom
        self._positions: Mapping[cst.CSTNode, CodeRange] | None = None
        self._shift: dict[int, int] | None = None
        self._by_statement: dict[int, Mapping[cst.CSTNode, CodeRange]] = {}
        self._by_unit: dict[int, Ranges | None] = {}  # a method's own pass (None: not made)
        # (unit, id of a statement of its body) -> that statement's own pass (None: not made)
        self._by_block: dict[tuple[int, int], Ranges | None] = {}
        # top-level statement -> (its body statements' passes, first line, last line, unit)
        self._block_lines: dict[int, list[tuple[Ranges, int, int, int]]] = {}
        self._unit_passes = 0
        self._kinds: dict[tuple[int, tuple[type, ...]], list[tuple[cst.CSTNode, int, int]]] = {}
        # top-level statement -> (its methods' passes, first line, last line)
        self._unit_lines: dict[int, list[tuple[Ranges, int, int]]] = {}
        self._text_starts: list[int] | None = None
        self._groups: dict[int, _Group] | None = None
        self._code: dict[int, str] = {}  # top-level statement -> its code, for `rewrite`
        # the first line of each top-level statement, when the scan found them all
        self.statement_lines: list[int] | None = None
        self._firsts: list[int] | None = None  # the same, from positions, when the scan had none
        self._spans: dict[int, Span] = {}

    @property
    def facts(self) -> Facts:
        """The module's walk (`PyModule` makes it): which top-level statement holds a node."""
        raise NotImplementedError

    # -- positions ---------------------------------------------------------------------------
    def _position_map(self) -> Mapping[cst.CSTNode, CodeRange]:
        """Every node's range, from one positions pass over the whole module."""
        if self._positions is None:
            self._positions = positions(self.module)
        return self._positions

    def _statement_positions(self, index: int) -> Mapping[cst.CSTNode, CodeRange]:
        """The ranges of the nodes of top-level statement `index`, from a positions pass
        over that statement alone (a module of its own, moved to its first line): positions
        cost a pass over the code, so only statements that hold a span pay it."""
        found = self._by_statement.get(index)
        if found is None:
            assert self.statement_lines is not None
            module = self.module
            stmt = module.body[index]
            alone = stmt.with_changes(leading_lines=())
            single = cst.Module(
                body=[alone],
                default_indent=module.default_indent,
                default_newline=module.default_newline,
            )
            found = positions(single, self.statement_lines[index] - 1)
            if isinstance(found, Ranges):
                found.rename(alone, stmt)
            else:
                found = {**found, stmt: found[alone]}
            self._by_statement[index] = found
        return found

    def _per_statement(self) -> bool:
        """Whether positions still come one statement at a time: each such pass has a fixed
        cost, so once many statements hold spans (20,000 recipe calls), one pass over the
        whole module is cheaper; both give the same ranges."""
        passes = len(self._by_statement) + self._unit_passes
        return self.statement_lines is not None and (
            self._positions is None and passes < _STATEMENT_PASSES
        )

    def _range(self, node: cst.CSTNode) -> CodeRange:
        if self._per_statement():
            facts = self.facts
            index = facts.statement.get(id(node))
            if index is not None:
                unit = facts.unit_of.get(id(node))
                hit = self._in_unit(unit, index, node) if unit is not None else None
                if hit is not None:
                    return hit
                return self._statement_positions(index)[node]
        return self._position_map()[node]

    def _in_unit(self, unit: int, index: int, node: cst.CSTNode) -> CodeRange | None:
        """A node's range from a pass over less than its top-level statement `index`: the
        pass over its function made already, else one over the statement of the function's
        body that holds it, else one over the function when it is a method; None when the
        statement's own pass serves (made already, or nothing smaller places)."""
        found = self._by_unit.get(unit)
        if found is not None:
            return found[node]
        if index in self._by_statement:
            return None
        block = self.facts.block_of.get(id(node))
        if block is not None:
            alone = self._block_positions(unit, block)
            if alone is not None and node in alone:
                return alone[node]
        found = self._unit_positions(unit)
        return found[node] if found is not None else None

    def _block_positions(self, unit: int, block: int) -> Ranges | None:
        """The ranges of the nodes of one statement of `facts.units[unit]`'s body (`block`:
        its id), from a positions pass over it alone: a recipe function of 500 lines is
        positioned at the line that builds its recipe.  Its code, written under the function's
        (and classes') body indentation, must occur once in its top-level statement's text,
        at a line start: that occurrence is its place.  None when it is not so."""
        key = (unit, block)
        if key in self._by_block:
            return self._by_block[key]
        function, top = self.facts.units[unit]
        lines = self.statement_lines
        outer = self.module.body[top]
        default = self.module.default_indent
        body = function.body
        found: Ranges | None = None
        indents = [] if function is outer else _class_indents(outer, function, default)
        if lines is not None and indents is not None and isinstance(body, cst.IndentedBlock):
            stmt = next((s for s in body.body if id(s) == block), None)
            inside = [*indents, default if body.indent is None else body.indent]
            placed = self._alone(stmt, inside, lines, top) if stmt is not None else None
            if placed is not None:
                found = placed[0]
                self._block_lines.setdefault(top, []).append((*placed, unit))
        self._by_block[key] = found
        return found

    def _unit_positions(self, unit: int) -> Ranges | None:
        """The ranges of the nodes of `facts.units[unit]` when it is a method (a function in
        a top-level class's body, or a nested class's), from a positions pass over it alone:
        a test class or a module class of 2,000 lines is positioned where its findings are,
        not as a whole.  The method's code, written under its classes' indentation, must
        occur once in its class's text, at a line start: that occurrence is its place.  None
        when it is not so (the class's own pass then serves)."""
        if unit in self._by_unit:
            return self._by_unit[unit]
        function, top = self.facts.units[unit]
        lines = self.statement_lines
        stmt = self.module.body[top]
        found: Ranges | None = None
        indents = _class_indents(stmt, function, self.module.default_indent)
        if lines is not None and indents is not None:
            placed = self._alone(function, indents, lines, top)
            if placed is not None:
                found = placed[0]
                self._unit_lines.setdefault(top, []).append(placed)
        self._by_unit[unit] = found
        return found

    def _alone(
        self, node: cst.CSTNode, indents: list[str], lines: list[int], top: int
    ) -> tuple[Ranges, int, int] | None:
        """A positions pass over `node` alone (written under `indents`), placed in top-level
        statement `top` (`_placed`): its ranges, first line and last line."""
        self._unit_passes += 1
        alone = node.with_changes(leading_lines=())
        made = nested_positions(alone, self.module, indents)
        placed = self._placed(made, lines, top) if made is not None else None
        if placed is None:
            return None
        found, first = placed
        found.rename(alone, node)
        return found, first, found[node].end.line

    def _placed(
        self, made: tuple[dict[cst.CSTNode, tuple[int, int]], str], lines: list[int], top: int
    ) -> tuple[Ranges, int] | None:
        """The ranges of code `made` where it occurs once, at a line start, in the text of
        top-level statement `top`, and its first line; None when it does not, and when that
        text holds a form feed (libcst's code drops one from an indentation, so the code
        found could be another line's)."""
        computed, code = made
        text = self.text
        if self._text_starts is None:
            self._text_starts = line_starts(text)
        starts = self._text_starts
        begin = starts[lines[top] - 1]
        end = starts[lines[top + 1] - 1] if top + 1 < len(lines) else len(text)
        if text.find("\x0c", begin, end) >= 0:
            return None
        at = text.find(code, begin, end)
        if at < 0 or text[at - 1 : at] not in ("", "\n", "\r") or text.find(code, at + 1, end) >= 0:
            return None
        line = bisect.bisect_right(starts, at)
        return Ranges(computed, code, line - 1), line

    def _maps_at(self, line: int) -> list[Mapping[cst.CSTNode, CodeRange]]:
        """The position maps that can hold a node starting on `line`."""
        lines = self.statement_lines
        if lines is None:
            return [self._position_map()]
        index = bisect.bisect_right(lines, line) - 1
        if index < 0:
            return []
        if self._per_statement():
            return [self._unit_at(index, line) or self._statement_positions(index)]
        return [self._grouped().get(index, _NONE)]

    def _unit_at(self, index: int, line: int) -> Ranges | None:
        """The pass of a method positioned alone in top-level statement `index` that holds
        `line` (from its first decorator), if one was made, or is made now for a line of a
        statement of its body positioned alone."""
        for found, first, last in self._unit_lines.get(index, ()):
            if first <= line <= last:
                return found
        for _found, first, last, unit in self._block_lines.get(index, ()):
            if first <= line <= last:  # a method's statement positioned alone: its method's
                return self._unit_positions(unit)
        return None

    def ranges_at(
        self, line: int, kinds: tuple[type[cst.CSTNode], ...]
    ) -> list[tuple[cst.CSTNode, int, int]] | None:
        """(node, first line, last line) of the nodes of `kinds` in the top-level statement
        holding `line` (a decorator's line counts): positions of that statement only, as the
        spans of its findings used, and lines made for those nodes alone (a test class holds
        tens of thousands).  None when no statement holds `line`."""
        if not self._holds(line):
            return None
        out: list[tuple[cst.CSTNode, int, int]] = []
        for found in self._maps_at(line):  # each map's nodes of `kinds` are listed once
            key = (id(found), kinds)
            listed = self._kinds.get(key)
            if listed is None:
                listed = self._kinds[key] = [
                    (node, found[node].start.line, found[node].end.line)
                    for node in found
                    if isinstance(node, kinds)
                ]
            out.extend(listed)
        return out

    def _holds(self, line: int) -> bool:
        """Whether a top-level statement (from its first decorator) holds `line`."""
        firsts = self.statement_lines
        if firsts is None:
            if self._firsts is None:
                self._firsts = [self._first_line(i) for i in range(len(self.module.body))]
            firsts = self._firsts
        index = bisect.bisect_right(firsts, line) - 1
        if index >= 0 and self._per_statement() and self._unit_at(index, line) is not None:
            return True
        return index >= 0 and line <= self._range(self.module.body[index]).end.line

    def _block_at(self, line: int) -> Ranges | None:
        """The pass of a statement of a function's body positioned alone that holds `line`,
        if one was made (what a fix's node and statement line are found in)."""
        lines = self.statement_lines
        if lines is None or not self._block_lines or not self._per_statement():
            return None
        index = bisect.bisect_right(lines, line) - 1
        for found, first, last, _unit in self._block_lines.get(index, ()):
            if first <= line <= last:
                return found
        return None

    def _of_kind(
        self, line: int, kinds: type[_N] | tuple[type[_N], ...]
    ) -> Iterator[tuple[_N, CodeRange]]:
        """The nodes of `kinds` (and their ranges) that can start on `line`: the range is
        made only for a node of the kind asked for.  Inside a function, the pass of the
        statement of its body holding `line` when one was made (the node a span was made
        from is in it)."""
        block = self._block_at(line)
        for found in [block] if block is not None else self._maps_at(line):
            for node in found:
                if isinstance(node, kinds):
                    yield node, found[node]

    def _grouped(self) -> dict[int, _Group]:
        """The whole-module ranges grouped by top-level statement: a fix looks only at its
        own statement's nodes (all of the module's, per finding, was quadratic).  A range is
        made when asked for (a test module holds a hundred thousand nodes)."""
        if self._groups is None:
            statement = self.facts.statement
            nodes: dict[int, list[cst.CSTNode]] = {}
            ranges = self._position_map()
            for node in ranges:
                index = statement.get(id(node))
                if index is not None:
                    nodes.setdefault(index, []).append(node)
            self._groups = {index: _Group(ranges, found) for index, found in nodes.items()}
        return self._groups

    def _pos(self, line: int, column: int) -> Pos:
        """A libcst position (1-based line, 0-based character column) as a `Pos`."""
        file = self.file
        starts = file.line_starts
        line0 = min(max(line - 1, 0), len(starts) - 1)
        column += self._shifts().get(line0, 0)
        begin = starts[line0] + (self._bom if line0 == 0 else 0)
        return Pos(line0, column, min(begin + column, len(file.text)))

    def _shifts(self) -> dict[int, int]:
        """Columns libcst's code for a line is short of the file's: it drops a form feed in
        a line's indentation, and its positions come from its code."""
        if self._shift is None:
            self._shift = {}
            if "\x0c" in self.text:
                ours = LINE_BREAK.split(self.text)
                theirs = LINE_BREAK.split(self.module.code)
                for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
                    if a != b and a.endswith(b.lstrip()):
                        self._shift[i] = len(a) - len(a.lstrip()) - (len(b) - len(b.lstrip()))
        return self._shift

    def start(self, node: cst.CSTNode) -> Pos:
        r = self._range(node)
        return self._pos(r.start.line, r.start.column)

    def end(self, node: cst.CSTNode) -> Pos:
        r = self._range(node)
        return self._pos(r.end.line, r.end.column)

    def span(self, node: cst.CSTNode) -> Span:
        found = self._spans.get(id(node))
        if found is None:
            found = self._spans[id(node)] = self.file.span(self.start(node), self.end(node))
        return found

    def span_between(self, first: cst.CSTNode, last: cst.CSTNode) -> Span:
        return self.file.span(self.start(first), self.end(last))

    def source(self, node: cst.CSTNode) -> str:
        """The text `node` is written as in the file (without its own parentheses)."""
        return self.file.text[self.start(node).index : self.end(node).index]

    def where(self, node: cst.CSTNode) -> tuple[int, int, int]:
        """A sort key: line, column, and the walk order for calls that start together."""
        r = self._range(node)
        return r.start.line, r.start.column, self.facts.order.get(id(node), 0)

    # -- edits ---------------------------------------------------------------------------------
    def node_at(self, span: Span, kinds: tuple[type[cst.CSTNode], ...]) -> cst.CSTNode | None:
        """The outermost node of one of `kinds` whose span is `span` (a node a span was made
        from, found again for a fix)."""
        key = (span.line, span.column, span.end_line, span.end_column)
        best: cst.CSTNode | None = None
        for node, r in self._of_kind(span.line, kinds):
            a, b = self._pos(r.start.line, r.start.column), self._pos(r.end.line, r.end.column)
            if (a.line + 1, a.column + 1, b.line + 1, b.column + 1) == key:
                if best is None or _encloses(self, node, best):
                    best = node
        return best

    def line_at(self, span: Span) -> cst.SimpleStatementLine | None:
        """The innermost statement line holding the start of `span`."""
        point = (span.line, span.column)
        best: tuple[tuple[int, int], cst.SimpleStatementLine] | None = None
        for node, r in self._of_kind(span.line, cst.SimpleStatementLine):
            a, b = self._pos(r.start.line, r.start.column), self._pos(r.end.line, r.end.column)
            start = (a.line + 1, a.column + 1)
            if start <= point <= (b.line + 1, b.column + 1) and (best is None or start > best[0]):
                best = (start, node)
        return best[1] if best is not None else None

    def statement_of(self, node: cst.CSTNode) -> int:
        """The index of the top-level statement holding `node`."""
        index = self.facts.statement.get(id(node))
        if index is not None:
            return index
        where = self._range(node)
        target = (where.start.line, where.start.column)
        for i, stmt in enumerate(self.module.body):
            r = self._range(stmt)
            if (self._first_line(i), 0) <= target <= (r.end.line, r.end.column):
                return i
        raise LookupError("no statement holds this node")

    def _first_line(self, index: int) -> int:
        """The line top-level statement `index` starts on (its first decorator's)."""
        if self.statement_lines is not None:
            return self.statement_lines[index]
        stmt = self.module.body[index]
        decorators = getattr(stmt, "decorators", ())
        return self._range(decorators[0] if decorators else stmt).start.line

    def rewrite(
        self, index: int, transformer: cst.CSTTransformer, nodes: list[cst.CSTNode]
    ) -> list[tuple[int, int, str]]:
        """The edits that make top-level statement `index` what `transformer` turns it into,
        where the changes are at `nodes`: (start, end, new text) in the file's characters.

        Each statement line that holds a changed node is rewritten alone, so a fix in a test
        class of 40,000 nodes visits and writes out one line, not the class (once per fix);
        the whole statement is rewritten when a change is outside such a line (a decorator,
        a `with` header) or removes a line."""
        lines: dict[int, cst.SimpleStatementLine] = {}
        for node in nodes:  # the line a node is in (a header or a decorator is in none)
            line = (
                node if isinstance(node, cst.SimpleStatementLine) else self.line_at(self.span(node))
            )
            if line is None:
                return self._rewrite_statement(index, transformer)
            lines[id(line)] = line
        out: list[tuple[int, int, str]] = []
        for line in lines.values():
            new = line.visit(transformer)
            begin = self._pos(self._range(line).start.line, 0).index  # the line's first column
            indent = self.file.text[begin : self.start(line).index]
            if not isinstance(new, cst.SimpleStatementLine) or indent.strip(" \t"):
                return self._rewrite_statement(index, transformer)
            try:
                edit = self._edit(line, new, begin, indent=indent)
            except ValueError:  # not written back exactly alone: the statement as a whole
                return self._rewrite_statement(index, transformer)
            if edit is not None:
                out.append(edit)
        return out

    def _rewrite_statement(
        self, index: int, transformer: cst.CSTTransformer
    ) -> list[tuple[int, int, str]]:
        """The edit that rewrites the whole of top-level statement `index` (or removes it)."""
        stmt = self.module.body[index]
        new = stmt.visit(transformer)
        if not isinstance(new, cst.RemovalSentinel):
            assert isinstance(new, (cst.SimpleStatementLine, cst.BaseCompoundStatement))
        edit = self._edit(stmt, new, self._pos(self._first_line(index), 0).index, index)
        return [edit] if edit is not None else []

    def _edit(
        self,
        old: cst.CSTNode,
        new: cst.CSTNode | cst.RemovalSentinel,
        begin: int,
        index: int | None = None,
        indent: str = "",
    ) -> tuple[int, int, str] | None:
        """The smallest edit that turns statement `old`, written at `begin` under `indent`
        (its blocks' indentation), into `new`; its code is checked against the file's text
        there first.  `index`: a top-level statement's, whose old code is kept for the other
        fixes in it."""
        old_code = self._code.get(index) if index is not None else None
        if old_code is None:
            old_code = self._code_of(old, indent)
            if index is not None:
                self._code[index] = old_code
        new_code = "" if isinstance(new, cst.RemovalSentinel) else self._code_of(new, indent)
        if old_code == new_code:
            return None
        if self.file.text[begin : begin + len(old_code)] != old_code:
            raise ValueError("libcst does not reproduce this statement exactly")
        a, b, content = minimal_edit(old_code, new_code)
        return begin + a, begin + b, content

    def _code_of(self, node: cst.CSTNode, indent: str) -> str:
        """`node`'s code without its leading lines, as written inside blocks indented by
        `indent` (libcst writes a nested statement's continuation lines with its blocks'
        indentation, which `code_for_node` alone leaves out)."""
        from libcst._nodes.internal import CodegenState

        module = self.module
        state = CodegenState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            indent_tokens=[indent] if indent else [],
        )
        node.with_changes(leading_lines=())._codegen(state)
        return "".join(state.tokens)


def _encloses(pm: Located, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    """Whether `outer` is an ancestor of `inner` (they share a span: prefer the outer)."""
    stack = [outer]
    while stack:
        node = stack.pop()
        if node is inner:
            return True
        stack.extend(children(node))
    return False


def _class_indents(outer: cst.CSTNode, target: cst.FunctionDef, default: str) -> list[str] | None:
    """The body indentation of each class from `outer` (a top-level statement) down to the
    one whose body holds `target`; None when class bodies alone do not lead to it."""
    stack: list[tuple[cst.CSTNode, list[str]]] = [(outer, [])]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, cst.ClassDef) or not isinstance(node.body, cst.IndentedBlock):
            continue
        body = node.body
        here = [*path, default if body.indent is None else body.indent]
        for child in body.body:
            if child is target:
                return here
            if isinstance(child, cst.ClassDef):
                stack.append((child, here))
    return None


class _Group(Mapping[cst.CSTNode, CodeRange]):
    """One top-level statement's nodes, with their ranges from the whole module's pass."""

    def __init__(self, ranges: Mapping[cst.CSTNode, CodeRange], nodes: list[cst.CSTNode]):
        self._ranges = ranges
        self._nodes = nodes

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        return self._ranges[node]

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)
