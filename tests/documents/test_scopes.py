"""`pyscopes.SCOPES` gives what libcst's `ScopeProvider` gives, node for node."""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst
from libcst._batched_visitor import BatchableCSTVisitor
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, Scope, ScopeProvider

from fp8lint.documents import pyscopes
from fp8lint.documents.pyscopes import SCOPES

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
        nonlocal_free = self.recipe
        match nonlocal_free:
            case DS(margin=m):
                return m
        return None
"""


def _summary(scopes: Mapping[cst.CSTNode, Scope | None]) -> list[tuple[str, ...]]:
    """Per node (in walk order): its type, its scope's type, and that scope's bindings and
    the kinds of node it reads."""
    out: list[tuple[str, ...]] = []
    for node, scope in scopes.items():
        if scope is None:
            out.append((type(node).__name__, "None"))
            continue
        names = sorted(a.name for a in scope.assignments)
        used = sorted(type(a.node).__name__ for a in scope.accesses)
        out.append((type(node).__name__, type(scope).__name__, *names, "|", *used))
    return out


def test_the_fast_provider_is_the_one_in_use() -> None:
    # the libcst this project installs has the dependencies the stand-in is written for
    assert SCOPES is not ScopeProvider
    assert issubclass(SCOPES, ScopeProvider)


def test_scopes_are_libcsts() -> None:
    module = cst.parse_module(SOURCE)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    ours = MetadataWrapper(module, unsafe_skip_copy=True).resolve(SCOPES)
    assert list(theirs) == list(ours)
    assert _summary(theirs) == _summary(ours)
    # the same accesses resolve to the same assignments
    scope = theirs[module]
    mine = ours[module]
    assert scope is not None and mine is not None
    for name in ("DS", "Format", "te", "os", "GLOBAL", "build", "Holder"):
        a = sorted(type(x.node).__name__ for x in scope[name])
        b = sorted(type(x.node).__name__ for x in mine[name])
        assert a == b and a, name


def test_the_visitors_listed_once_are_libcsts() -> None:
    for provider in (pyscopes._Scopes(), pyscopes._Context()):
        assert provider.get_visitors().keys() == BatchableCSTVisitor.get_visitors(provider).keys()
        other = type(provider)()  # a second instance reads the list made once
        again = other.get_visitors()
        assert again.keys() == provider.get_visitors().keys()
        assert all(getattr(m, "__self__", None) is other for m in again.values())


def test_expression_contexts_are_read_through_the_stand_in() -> None:
    module = cst.parse_module("x = 1\nprint(x)\n")
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(SCOPES)
    scope = scopes[module]
    assert scope is not None
    assert [type(a.node).__name__ for a in scope["x"]] == ["Name"]
    assert len(list(scope.accesses)) >= 2  # `print` and `x` are read
    # libcst's own context provider was not run a second time beside the stand-in
    assert ExpressionContextProvider not in wrapper._metadata
