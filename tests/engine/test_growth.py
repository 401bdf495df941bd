"""Work grows linearly with the input on the shapes that were quadratic (issue 20, item 8):
a chain of `${.cN}` interpolations, many YAML documents, many recipe calls in one file.

No wall-clock time is asserted: each test counts the operation that grew, at two sizes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from fp8lint.diagnostics import Diagnostic
from fp8lint.documents import pyspans, tree
from fp8lint.engine import lint_text
from fp8lint.model import Fp8Site, Span
from fp8lint.settings import RunSettings

RISKY = (
    "model:\n  fp8: hybrid\n  fp8_margin: 0\n  fp8_amax_history_len: 1\n"
    "  fp8_amax_compute_algo: most_recent\n"
)
RECIPE = (
    "from transformer_engine.common.recipe import DelayedScaling\n"
    "recipe = DelayedScaling(margin=0, amax_history_len=1, amax_compute_algo='most_recent')\n"
)


@contextmanager
def counting(owner: Any, name: str) -> Iterator[list[int]]:
    """Count the calls of `owner.name` (a function or a class) while the block runs."""
    count = [0]
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(*args, **kwargs)

    setattr(owner, name, counted)
    try:
        yield count
    finally:
        setattr(owner, name, original)


def _lint(path: str, text: str) -> list[Diagnostic]:
    diags, _ = lint_text(path, text, "python" if path.endswith(".py") else "yaml", RunSettings())
    assert not [d for d in diags if d.code == "FP8001"], diags
    return diags


def _chain(n: int) -> str:
    return RISKY + "  c0: 1\n" + "".join(f"  c{i}: ${{.c{i - 1}}}\n" for i in range(1, n))


def _scans(text: str) -> int:
    """Mapping entries visited while linting `text`."""
    count = [0]
    original = tree.Node.items

    def items(self: tree.Node, _depth: int = 0) -> Iterator[tuple[tree.Node, tree.Node]]:
        for entry in original(self, _depth):
            count[0] += 1
            yield entry

    tree.Node.items = items  # type: ignore[method-assign]
    try:
        _lint("model.yaml", text)
    finally:
        tree.Node.items = original  # type: ignore[method-assign]
    return count[0]


def test_an_interpolation_chain_costs_linear_work() -> None:
    """Each `${.cN}` used to look up every link before it, scanning the mapping each time:
    2,000 links took 80 s."""
    small, large = _scans(_chain(150)), _scans(_chain(300))
    assert large < 2.5 * small, (small, large)


def test_an_interpolation_chain_keeps_its_finding() -> None:
    diags = _lint("model.yaml", _chain(300))
    assert [d.code for d in diags if d.severity == "warning"] == ["FP8101"]


def test_many_documents_cost_linear_work_and_share_no_default() -> None:
    """Defaults are plain values, not factories: pydantic inspects a factory's signature on
    every construct (4,000 documents spent seven of twelve seconds there).  The lists a site
    starts with are still its own."""
    assert all(f.default_factory is None for f in Fp8Site.model_fields.values())
    small = _scans("---\n".join([RISKY] * 40))
    large = _scans("---\n".join([RISKY] * 80))
    assert large < 2.5 * small, (small, large)
    diags = _lint("model.yaml", "---\n".join([RISKY] * 80))
    assert sum(d.code == "FP8101" for d in diags) == 80
    span = Span(path="a", line=1, column=1, end_line=1, end_column=2)
    one = Fp8Site.model_construct(path="a", framework="te", kind="x", span=span)
    two = Fp8Site.model_construct(path="b", framework="te", kind="x", span=span)
    assert one.notes == [] and one.notes is not two.notes
    assert one.enabled.known is False and one.enabled is two.enabled  # the shared absent value


@pytest.mark.parametrize("calls", [80, 200])
def test_many_recipe_calls_take_a_bounded_number_of_position_passes(calls: int) -> None:
    """A position pass per statement has a fixed cost: after 64 statements one pass over the
    whole module serves the rest (20,000 recipe calls took 46 s).  Every call still gets its
    finding, at its own line."""
    call = "DelayedScaling(margin=0, amax_history_len=1, amax_compute_algo='most_recent')\n"
    text = RECIPE + call * calls
    with counting(pyspans, "positions") as count:
        diags = _lint("r.py", text)
    assert 0 < count[0] <= pyspans._STATEMENT_PASSES + 3, count[0]
    headroom = sorted(d.line for d in diags if d.code == "FP8101")
    assert headroom == list(range(2, calls + 3)), headroom[:5]


def test_fixes_for_many_recipe_calls_cost_linear_work() -> None:
    """Finding a fix's node again looks at its own statement's nodes only, not the module's."""
    call = "DelayedScaling(margin=0, amax_history_len=1, amax_compute_algo='most_recent')\n"
    counts = []
    for calls in (100, 200):
        with counting(pyspans.Located, "_pos") as count:
            diags = _lint("r.py", RECIPE + call * calls)
        assert sum(d.code == "FP8101" and d.fix is not None for d in diags) == calls + 1
        counts.append(count[0])
    assert counts[1] < 2.5 * counts[0], counts


def test_a_name_read_by_many_recipe_calls_is_looked_up_once() -> None:
    """`PyModule.assignments` keeps each (scope, name)'s assignments: forty calls that read
    `MARGIN` ask libcst's scope for it once, as ten calls do (each call still resolves its
    own callee, which is per call by nature)."""
    import libcst.metadata.scope_provider as scope_provider

    def lookups(calls: int) -> int:
        text = (
            "from transformer_engine.common.recipe import DelayedScaling\nMARGIN = 0\n"
            + "".join(
                f"r{i} = DelayedScaling(margin=MARGIN, amax_history_len=1)\n" for i in range(calls)
            )
        )
        seen = [0]
        original = scope_provider.Scope.__getitem__

        def counted(self: Any, name: str) -> Any:
            # fp8lint's own questions (libcst asks its scopes too while it analyses one)
            caller = sys._getframe(1).f_code.co_filename
            seen[0] += name == "MARGIN" and caller.endswith(os.path.join("documents", "python.py"))
            return original(self, name)

        scope_provider.Scope.__getitem__ = counted  # type: ignore[method-assign]
        try:
            diags = _lint("recipe.py", text)
        finally:
            scope_provider.Scope.__getitem__ = original  # type: ignore[method-assign]
        assert len([d for d in diags if d.code == "FP8101"]) == calls  # every call was read
        return seen[0]

    assert lookups(10) == lookups(40) == 1


def test_functions_at_the_top_level_are_positioned_one_statement_each() -> None:
    """A top-level function's finding is positioned by a pass over the statement of its
    body that holds it (the fix's node is found again in that pass), and only passes made
    count toward the switch to one whole pass."""
    functions = 40  # under the 64 statements positioned one at a time
    body = "".join(
        f"def recipe_{i}():\n    return DelayedScaling(margin=0, amax_history_len=1, "
        "amax_compute_algo='most_recent')\n\n"
        for i in range(functions)
    )
    with counting(pyspans, "positions") as count, counting(pyspans, "nested_positions") as inner:
        diags = _lint("r.py", RECIPE + body)
    assert count[0] == 1, count[0]  # line 2's statement
    assert inner[0] == functions, inner[0]  # each function's `return` line
    assert sum(d.code == "FP8101" for d in diags) == functions + 1
