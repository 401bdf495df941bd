"""Where a Python file tests code rather than configures a run: the bodies of `with
pytest.raises(...)` (and unittest's `assertRaises`) blocks, which expect the construction
inside them to fail, and the bodies of `test_*` functions, whose constructions are fixtures.
Line ranges only (1-based, inclusive): the engine decides what a site inside one means."""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from fp8lint.documents.pyspans import Located

# the words without which a file has neither kind of range (checked before parsing)
HINT = re.compile(r"\b(?:raises|assertRaises\w*|def\s+test_\w*)\b")
RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})

Ranges = list[tuple[int, int]]


def test_ranges(text: str) -> tuple[Ranges, Ranges]:
    """(expected-failure blocks, test functions) of `text`; empty when it does not parse."""
    if HINT.search(text) is None:
        return [], []
    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except (cst.ParserSyntaxError, RecursionError):
        return [], []
    visitor = _Ranges()
    wrapper.visit(visitor)
    return visitor.raises, visitor.tests


def test_ranges_at(module: Located, lines: Iterable[int]) -> tuple[Ranges, Ranges] | None:
    """The ranges `test_ranges` would give that hold one of `lines`, from the module already
    parsed for its sites: only the top-level statements holding those lines are located (a
    second parse and a position pass over a whole test module cost more than linting it).
    None when a line is in no statement of the module (left out of it): ask `test_ranges`."""
    raises: Ranges = []
    tests: Ranges = []
    seen: set[int] = set()
    for line in sorted(set(lines)):
        found = module.ranges_at(line, (cst.With, cst.FunctionDef))
        if found is None:
            return None
        for node, first, last in found:
            if id(node) in seen or not first <= line <= last:
                continue
            if isinstance(node, cst.With) and any(_is_raises(i.item) for i in node.items):
                seen.add(id(node))
                raises.append((first, last))
            elif isinstance(node, cst.FunctionDef) and node.name.value.startswith("test"):
                seen.add(id(node))
                tests.append((first, last))
    return raises, tests


class _Ranges(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.raises: Ranges = []
        self.tests: Ranges = []

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        pos = self.get_metadata(PositionProvider, node)
        return pos.start.line, pos.end.line

    def visit_With(self, node: cst.With) -> None:
        if any(_is_raises(item.item) for item in node.items):
            self.raises.append(self._lines(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value.startswith("test"):
            self.tests.append(self._lines(node))


def _is_raises(expr: cst.BaseExpression) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
    return name in RAISES


def within(ranges: Ranges, line: int) -> bool:
    return any(first <= line <= last for first, last in ranges)
