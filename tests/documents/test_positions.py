"""fp8lint's positions pass gives every node the range libcst's `PositionProvider` gives it,
on code with every kind of layout (line endings, form feeds, tabs, continuation lines,
strings across lines, comments, decorators, semicolons, f-strings, a last line without a
newline), and the statement-by-statement ranges of a check equal the whole module's."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from fp8lint.documents import python as py
from fp8lint.documents.pypositions import Ranges, positions
from fp8lint.documents.text import SourceFile

from .test_narrow_scopes import BINDINGS

LAYOUTS = {
    "bindings": BINDINGS,
    "crlf": "import te\r\nr = te.DelayedScaling(\r\n    margin=1,\r\n)\r\n",
    "lone-cr": "x = 1\ry = (2,\r     3)\r",
    "form-feed": "def f():\n\x0c    return 1\n\x0c\nclass C:\n\x0c    x = 2\n",
    "tabs": "if True:\n\tx = 1\n\tif x:\n\t\ty = {'a': 1,\n\t\t     'b': 2}\n",
    "continuation": "total = 1 + \\\n    2 + \\\n    3\nassert total, \\\n    'msg'\n",
    "strings": 's = """one\ntwo\r\nthree"""\nb = b"\\x00"\nf = f"{s!r:>{10}} {b}"\n',
    "comments": "# head\n\nx = 1  # trailing\n# between\n\n\ndef g(  # open\n    a,  # a\n):\n"
    "    pass\n",
    "decorators": "@a.b(c=1)\n@d\nclass K(Base, metaclass=M):\n    @property\n"
    "    def p(self): return 1\n",
    "semicolons": "a = 1; b = 2; c = a + b\nif a: b = 3; c = 4\n",
    "no-newline": "x = [1,\n     2]",
    "unicode": "名前 = 'ü' * 3  # ß\nλ = lambda α: α\n",
    "match": "match p:\n    case {'k': v, **rest} if v:\n        pass\n"
    "    case [x, *_]:\n        pass\n",
    "async": "async def f():\n    async with a as b, c as d:\n        await b\n"
    "    async for i in d:\n        yield i\n",
    "type-params": "def f[T](x: T) -> T:\n    return x\ntype Alias = list[int]\n",
    "empty": "",
    "blank-lines-only": "\n\n\n",
}


def _provider(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int, int, int]]:
    found = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {n: (r.start.line, r.start.column, r.end.line, r.end.column) for n, r in found.items()}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_node_has_the_range_position_provider_gives_it(name: str) -> None:
    module = cst.parse_module(LAYOUTS[name])
    want = _provider(module)
    got = positions(module)
    assert len(got) == len(want)
    for node, expected in want.items():
        r = got[node]
        assert (r.start.line, r.start.column, r.end.line, r.end.column) == expected, node


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_a_shifted_pass_gives_each_node_the_lines_of_its_range(name: str) -> None:
    module = cst.parse_module(LAYOUTS[name])
    want = _provider(module)
    got = positions(module, 7)
    assert isinstance(got, Ranges)
    assert len(got) == len(want)
    for node in got:
        r = got[node]
        assert (r.start.line - 7, r.end.line - 7) == (want[node][0], want[node][2]), node


def test_a_renamed_node_gets_the_range_and_the_old_one_none() -> None:
    module = cst.parse_module(LAYOUTS["decorators"])
    got = positions(module)
    assert isinstance(got, Ranges)
    old = module.body[0]
    before = got[old]
    new = old.with_changes(leading_lines=())
    got.rename(old, new)
    assert got[new] == before
    assert old not in got


def test_a_shift_moves_every_line_and_no_column() -> None:
    module = cst.parse_module(LAYOUTS["decorators"])
    plain, moved = positions(module), positions(module, 40)
    for node, r in plain.items():
        m = moved[node]
        assert (m.start.line, m.end.line) == (r.start.line + 40, r.end.line + 40)
        assert (m.start.column, m.end.column) == (r.start.column, r.end.column)


@pytest.mark.parametrize("name", ["bindings", "crlf", "semicolons", "decorators", "comments"])
def test_statement_ranges_equal_the_whole_module_ranges(name: str) -> None:
    def check() -> int:
        doc = py.parse(SourceFile("f.py", LAYOUTS[name]))
        assert doc.statement_lines is not None
        whole = _provider(doc.module)
        compared = 0
        for index in range(len(doc.module.body)):
            for node, r in doc._statement_positions(index).items():
                if isinstance(node, cst.Module):
                    continue  # the module the statement was written out in
                assert (r.start.line, r.start.column, r.end.line, r.end.column) == whole[node]
                compared += 1
        return compared

    assert py.deep(check) > 0


def _compare_held(doc: py.PyModule, held: dict[int, int]) -> int:
    """Every node `held` names gets `PositionProvider`'s range from `doc._range`; how many."""
    whole = _provider(doc.module)
    compared = 0
    for node in whole:
        if held.get(id(node)) is None:
            continue
        r = doc._range(node)
        assert (r.start.line, r.start.column, r.end.line, r.end.column) == whole[node], node
        compared += 1
    return compared


CLASSES = {
    "methods": "import te\n\n\nclass T:\n    '''doc'''\n\n    x = te.R(margin=1)\n\n"
    "    # a comment between\n    @staticmethod\n    @other(  # open\n        1,\n    )\n"
    "    def one(a,\n            b):\n        return te.R(margin=a)  # tail\n\n"
    "    async def two(self):\n        if self:\n            pass\n        else:\n"
    "            r = te.R(\n                margin=2,\n            )\n        # footer\n\n"
    "    class Inner:\n        def three(self):\n            return te.R(margin=3)\n\n\n"
    "def after():\n    return te.R(margin=4)\n",
    "crlf-tabs": "class T:\r\n\tdef one(self):\r\n\t\treturn f(\r\n\t\t\t1)\r\n\r\n"
    "\tdef two(self):\r\n\t\tpass\r\n",
    "mixed-indent": "class A:\n  def f(self):\n        return 1\n  class B:\n     def g(self):\n"
    "      return 2\n",
    "twins": "class T:\n    def same(self):\n        return te.R(margin=0)\n\n"
    "    def same(self):\n        return te.R(margin=0)\n",
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_a_method_positioned_alone_gets_the_whole_module_ranges(name: str) -> None:
    """Each node in a method's body is positioned by a pass over that method alone (where its
    code occurs once in its class), with the ranges libcst gives it in the whole module; the
    class's own pass is never made for them."""

    def check() -> tuple[int, int]:
        doc = py.parse(SourceFile("f.py", CLASSES[name]))
        assert doc.statement_lines is not None
        compared = _compare_held(doc, doc.facts.unit_of)
        alone = sum(found is not None for found in doc._by_unit.values())
        classes = [i for i, s in enumerate(doc.module.body) if isinstance(s, cst.ClassDef)]
        if alone:
            assert not set(classes) & set(doc._by_statement)  # no class-wide pass was needed
        return compared, alone

    compared, alone = py.deep(check)
    assert compared > 0
    if name == "twins":  # identical methods: their text cannot tell them apart, the class's
        assert alone == 0  # pass serves them
    else:
        assert alone > 0


FUNCTIONS = {
    "recipe": "import te\n\n\ndef config(a,\n           b=1):\n    'doc'\n    cfg = Cfg()\n"
    "    # a comment before\n    cfg.recipe = te.R(\n        margin=a,  # tail\n    )\n\n"
    "    if b:\n        cfg.x = te.R(margin=b)\n    else:\n        pass\n"
    "    @decorate(\n        1)\n    def inner():\n        return te.R(margin=2)\n"
    "    with te.autocast(recipe=cfg.recipe): y = 1\n    return cfg\n\n\n"
    "class T:\n    def m(self):\n        r = te.R(margin=3)\n        return r\n",
    "crlf-tabs": "def f():\r\n\tx = g(\r\n\t\t1)\r\n\r\n\treturn x\r\n",
    "twins": "def f(x):\n    if x:\n        return te.R(margin=0)\n    return te.R(margin=0)\n",
    # libcst's code for the last line drops its form feed: the text could not place it
    "form-feed": "def f():\n    s = '''\n    x = R(margin=0)\n'''\n\x0c    x = R(margin=0)\n",
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_a_statement_of_a_function_positioned_alone_gets_the_whole_module_ranges(
    name: str,
) -> None:
    """Each node in a function's body is positioned by a pass over the statement of that
    body holding it (where its code occurs once in its top-level statement), with the ranges
    libcst gives it in the whole module; a wider pass is made only where the text cannot
    place the statement."""

    def check() -> tuple[int, int, int]:
        doc = py.parse(SourceFile("f.py", FUNCTIONS[name]))
        assert (doc.statement_lines is None) == (name == "form-feed")
        compared = _compare_held(doc, doc.facts.block_of)
        placed = sum(found is not None for found in doc._by_block.values())
        made = sum(found is not None for found in doc._by_unit.values())
        return compared, placed, len(doc._by_statement) + made

    compared, placed, wider = py.deep(check)
    assert compared > 0
    if name == "twins":  # `return te.R(margin=0)` twice: the function's statement pass serves
        assert placed == 1 and wider == 1
    elif name == "form-feed":  # one pass over the whole module, as for any form feed
        assert placed == 0 and wider == 0
    else:
        assert placed > 1 and wider == 0


def test_lines_of_a_method_positioned_alone_are_looked_up_in_its_pass() -> None:
    """A fix or a test range asks for the nodes on a line: inside a method positioned alone,
    that method's pass answers, and no class-wide pass is made."""

    def check() -> None:
        doc = py.parse(SourceFile("f.py", CLASSES["methods"]))
        call = next(c for c in doc.facts.calls["R"] if doc.facts.unit_of.get(id(c)) is not None)
        span = doc.span(call)
        assert doc.node_at(span, (cst.Call,)) is call
        line = doc.line_at(span)
        assert line is not None and isinstance(line.body[0], cst.Return)
        assert line.body[0].value is call
        found = doc.ranges_at(span.line, (cst.FunctionDef,))
        assert found is not None and [n.name.value for n, _, _ in found] == ["one"]
        assert not doc._by_statement

    py.deep(check)
