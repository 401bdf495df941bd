"""Test-code ranges read from the module a file's sites came from agree with a whole-file
pass, for every line, however the tests are nested."""

from __future__ import annotations

import textwrap

import pytest

from fp8lint.documents import pytests
from fp8lint.documents import python as py
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.python_sites import RELEVANT

SOURCE = textwrap.dedent(
    """\
    import pytest
    from transformer_engine.common.recipe import DelayedScaling


    @pytest.mark.parametrize("m", [0, 1])
    def test_margin(m):
        r = DelayedScaling(margin=m)
        with pytest.raises(ValueError):
            DelayedScaling(margin=-1)


    class TestRecipes:
        def helper(self):
            return DelayedScaling(margin=2)

        def test_nested(self):
            def inner():
                return DelayedScaling(margin=3)

            with open("x") as f, pytest.raises(AssertionError):
                DelayedScaling(margin=4)
            return inner


    def build():
        return DelayedScaling(margin=5)


    if True:
        def test_in_if():
            self.assertRaises(ValueError, DelayedScaling, margin=6)
            with self.assertRaisesRegex(ValueError, "x"):
                DelayedScaling(margin=7)
    """
)


def _ranges_at(source: str, lines: list[int]) -> tuple[list[tuple[int, int]], ...] | None:
    module = py.deep(lambda: py.parse(SourceFile("tests/test_x.py", source), RELEVANT))
    return py.deep(lambda: pytests.test_ranges_at(module, lines))


# a form feed first: the scan does not line the statements up, one positions pass serves all
@pytest.mark.parametrize("source", [SOURCE, "\x0c\n" + SOURCE], ids=["plain", "form-feed"])
def test_every_line_gets_the_whole_file_answer(source: str) -> None:
    raises, tests = pytests.test_ranges(source)
    assert raises and tests  # the file has both kinds
    if source.startswith("\x0c"):
        parsed = py.deep(lambda: py.parse(SourceFile("tests/test_x.py", source), RELEVANT))
        assert parsed.statement_lines is None
    for line in range(1, source.count("\n") + 1):
        found = _ranges_at(source, [line])
        if found is None:  # a blank line between statements: in no test range either
            assert not pytests.within(raises, line) and not pytests.within(tests, line), line
            continue
        at_raises, at_tests = found
        assert pytests.within(at_raises, line) == pytests.within(raises, line), line
        assert pytests.within(at_tests, line) == pytests.within(tests, line), line


def test_a_line_of_a_decorator_is_read_from_the_parsed_module() -> None:
    line = SOURCE.splitlines().index('@pytest.mark.parametrize("m", [0, 1])') + 1
    _, tests = pytests.test_ranges(SOURCE)
    found = _ranges_at(SOURCE, [line])
    assert found is not None  # no second parse of the file
    assert pytests.within(found[1], line) == pytests.within(tests, line)


def test_only_the_statements_holding_the_lines_are_located() -> None:
    line = SOURCE.splitlines().index("    return DelayedScaling(margin=5)") + 1
    module = py.deep(lambda: py.parse(SourceFile("tests/test_x.py", SOURCE), RELEVANT))
    assert py.deep(lambda: pytests.test_ranges_at(module, [line])) == ([], [])  # no test
    assert module._positions is None  # no position pass over the whole module
