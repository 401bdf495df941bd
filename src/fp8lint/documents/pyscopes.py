"""libcst's scope analysis, run the way `MetadataWrapper.resolve(ScopeProvider)` runs it,
without the two steps of that call that do no work.

`resolve` makes an `ExpressionContextProvider` and a `ScopeProvider`, lists each one's
`visit_*`/`leave_*` methods with `inspect.getmembers` (about 1,600 attributes: 2.6 ms each),
and walks the whole tree once per provider with libcst's batched visitor.  Each provider does
all of its work in `visit_Module`, which runs a visitor of its own over the module; the
batched walks then visit every node and find nothing to call.  fp8lint runs many small
analyses (`python._narrow_scope`), where those fixed costs were most of the time, so
`scopes` calls the two `visit_Module`s directly, in libcst's order, each provider reading
the other's results as its own metadata.  The result is the mapping `resolve` returns
(`tests/documents/test_scopes.py` holds the two against each other); with any other provider
layout (a libcst that adds a batched method), `resolve` itself runs."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import cast

import libcst as cst
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, Scope, ScopeProvider

_direct: bool | None = None  # whether the two providers do all their work in visit_Module


def _only_visit_module(kind: type) -> bool:
    """Whether `visit_Module` is the only visitor method of `kind` libcst's batched walk
    would call (its own test: the names, less those marked as no-ops)."""
    names = {
        name
        for name in dir(kind)
        if name.startswith(("visit_", "leave_"))
        and not getattr(getattr(kind, name), "_is_no_op", False)
    }
    return names == {"visit_Module"}


def _is_direct() -> bool:
    global _direct
    if _direct is None:
        _direct = (
            tuple(ScopeProvider.METADATA_DEPENDENCIES) == (ExpressionContextProvider,)
            and not ExpressionContextProvider.METADATA_DEPENDENCIES
            and _only_visit_module(ScopeProvider)
            and _only_visit_module(ExpressionContextProvider)
            and isinstance(getattr(ScopeProvider(), "_computed", None), dict)  # their results
        )
    return _direct


def scopes(module: cst.Module) -> Mapping[cst.CSTNode, Scope | None]:
    """libcst's `ScopeProvider` metadata of `module` (its nodes themselves, not a copy)."""
    if not _is_direct():
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    contexts = ExpressionContextProvider()
    contexts.visit_Module(module)
    provider = ScopeProvider()
    provider.metadata = {ExpressionContextProvider: MappingProxyType(dict(contexts._computed))}
    provider.visit_Module(module)
    # the mapping `resolve` hands back (libcst's scope provider sets no lazy values)
    return cast(Mapping[cst.CSTNode, Scope | None], MappingProxyType(dict(provider._computed)))
