"""libcst's node positions at a fraction of `PositionProvider`'s cost.

`PositionProvider` makes two `CodePosition`s and a `CodeRange` for every node and splits
every token on newlines while libcst writes the code back out; on a 80 KB test module that
is 2.5x the parse, and eight times the code generation itself.  The same code generation
here notes character offsets only (a sum of token lengths), with the same rules for which
node owns which whitespace (`record_syntactic_position`), and turns an offset into a line and
column when a node's range is asked for.  `tests/documents/test_positions.py` holds every
node's range against `PositionProvider`'s; on any error the provider itself runs."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

_NEWLINE = re.compile(r"\r\n?|\n")  # what libcst's position state counts as a line break


@dataclass
class _OffsetState(CodegenState):
    """libcst's code generation, noting each node's start and end offsets in the code."""

    offset: int = 0
    popped: str = ""  # the module's last newline, written, counted, then taken back
    starts: list[int] = field(default_factory=list)
    computed: dict[cst.CSTNode, tuple[int, int]] = field(default_factory=dict)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def pop_trailing_newline(self) -> None:
        if self.tokens:
            self.popped = self.tokens.pop()

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        if node not in self.computed:  # a syntactic position noted already stands
            self.computed[node] = (start, self.offset)

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Noted:
        return _Noted(self, node, start_node, end_node)


class _Noted:
    """The context `record_syntactic_position` gives: the node's range is the code written
    inside it (or from `start_node`'s start to `end_node`'s end).  A plain class: libcst
    enters one per node, and a generator-based context manager costs several calls each."""

    __slots__ = ("_end_node", "_node", "_start", "_start_node", "_state")

    def __init__(
        self,
        state: _OffsetState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self._state = state
        self._node = node
        self._start_node = start_node
        self._end_node = end_node
        self._start = state.offset

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        state = self._state
        computed = state.computed
        start = self._start if self._start_node is None else computed[self._start_node][0]
        end = state.offset if self._end_node is None else computed[self._end_node][1]
        computed[self._node] = (start, end)


class Ranges(Mapping[cst.CSTNode, CodeRange]):
    """Node -> `CodeRange`, as `PositionProvider` gives it, `shift` lines further down."""

    def __init__(self, computed: dict[cst.CSTNode, tuple[int, int]], code: str, shift: int):
        self._computed = computed
        self._starts = [0, *(m.end() for m in _NEWLINE.finditer(code))]
        self._shift = shift

    def _at(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self._starts, offset)
        return CodePosition(line + self._shift, offset - self._starts[line - 1])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._computed[node]
        return CodeRange(self._at(start), self._at(end))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._computed)

    def __len__(self) -> int:
        return len(self._computed)

    def rename(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        """Give `old`'s range to `new` (a statement written out as a copy of itself)."""
        self._computed[new] = self._computed.pop(old)


def positions(module: cst.Module, shift: int = 0) -> Mapping[cst.CSTNode, CodeRange]:
    """The range of every node of `module`, its lines moved down by `shift`."""
    state = _OffsetState(
        default_indent=module.default_indent, default_newline=module.default_newline
    )
    try:
        module._codegen(state)
    except Exception:  # libcst's code generation changed under us: its own provider
        return _provided(module, shift)
    return Ranges(state.computed, "".join(state.tokens) + state.popped, shift)


def nested_positions(
    node: cst.CSTNode, module: cst.Module, indents: list[str]
) -> tuple[dict[cst.CSTNode, tuple[int, int]], str] | None:
    """The offsets of `node`'s nodes in its own code as written inside blocks indented by
    `indents` (a method: its classes' body indentations), and that code; None where libcst's
    code generation fails (the caller positions the statement around it instead)."""
    state = _OffsetState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        indent_tokens=list(indents),
    )
    try:
        node._codegen(state)
    except Exception:
        return None
    return state.computed, "".join(state.tokens)


def _provided(module: cst.Module, shift: int) -> Mapping[cst.CSTNode, CodeRange]:
    found = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    if not shift:
        return found
    return {
        node: CodeRange(
            CodePosition(r.start.line + shift, r.start.column),
            CodePosition(r.end.line + shift, r.end.column),
        )
        for node, r in found.items()
    }
