"""`pyscopes.scopes` gives what libcst's `MetadataWrapper.resolve(ScopeProvider)` gives, node
for node, and falls back to it where the providers are laid out otherwise."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
import pytest
from libcst._batched_visitor import BatchableCSTVisitor
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, Scope, ScopeProvider

from fp8lint.documents import pyscopes

SOURCE = """\
import os
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling as DS, Format

GLOBAL = DS(margin=0)


def build(margin, *args, fmt=Format.HYBRID, **kw):
    global GLOBAL
    recipe = DS(margin=margin, fp8_format=fmt)
    with te.fp8_autocast(enabled=True, fp8_recipe=recipe) as ctx:
        out = [r for r in (recipe, GLOBAL) if (n := r.margin)]
    try:
        del kw["x"]
    except KeyError as err:
        raise ValueError(err) from None
    return lambda x=recipe: (x, n, ctx, out, os.sep)


class Holder:
    recipe = DS()

    def method(self):
        local = self.recipe
        match local:
            case DS(margin=m):
                return m
        return None
"""


def _summary(found: Mapping[cst.CSTNode, Scope | None]) -> list[tuple[str, ...]]:
    """Per node (in walk order): its type, its scope's type, and that scope's bindings and
    the kinds of node it reads."""
    out: list[tuple[str, ...]] = []
    for node, scope in found.items():
        if scope is None:
            out.append((type(node).__name__, "None"))
            continue
        names = sorted(a.name for a in scope.assignments)
        used = sorted(type(a.node).__name__ for a in scope.accesses)
        out.append((type(node).__name__, type(scope).__name__, *names, "|", *used))
    return out


def test_the_libcst_installed_here_takes_the_direct_path() -> None:
    # both providers do all their work in visit_Module, as libcst's own listing says
    for provider in (ScopeProvider(), ExpressionContextProvider()):
        assert set(BatchableCSTVisitor.get_visitors(provider)) == {"visit_Module"}
    assert pyscopes._is_direct()


@pytest.mark.parametrize("direct", [True, False], ids=["direct", "resolve"])
def test_scopes_are_libcsts(monkeypatch: pytest.MonkeyPatch, direct: bool) -> None:
    monkeypatch.setattr(pyscopes, "_direct", direct)
    module = cst.parse_module(SOURCE)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    ours = pyscopes.scopes(module)
    assert list(theirs) == list(ours)
    assert _summary(theirs) == _summary(ours)
    scope, mine = theirs[module], ours[module]
    assert scope is not None and mine is not None
    for name in ("DS", "Format", "te", "os", "GLOBAL", "build", "Holder"):
        a = sorted(type(x.node).__name__ for x in scope[name])
        b = sorted(type(x.node).__name__ for x in mine[name])
        assert a == b and a, name
    # the names imports give, as fp8lint reads them
    use = next(n for n in ours if isinstance(n, cst.Call))
    assert {q.name for q in mine.get_qualified_names_for(use.func)} == {
        q.name for q in scope.get_qualified_names_for(use.func)
    }


def test_a_provider_with_another_visitor_method_takes_libcsts_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pyscopes, "_direct", None)

    def visit_Name(self: object, node: cst.Name) -> None:
        return None

    monkeypatch.setattr(ExpressionContextProvider, "visit_Name", visit_Name, raising=False)
    assert not pyscopes._is_direct()
    module = cst.parse_module("x = 1\nprint(x)\n")
    found = pyscopes.scopes(module)
    scope = found[module]
    assert scope is not None and [type(a.node).__name__ for a in scope["x"]] == ["Name"]
