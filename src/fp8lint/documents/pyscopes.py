"""libcst's `ScopeProvider` without the introspection it repeats on every analysis.

Each `MetadataWrapper.resolve(ScopeProvider)` makes a new scope provider and a new
`ExpressionContextProvider`, and libcst's batched visitor lists each one's `visit_*` and
`leave_*` methods with `inspect.getmembers` over some 1,600 attributes: about 2.6 ms per
provider, twice per analysis, five times what the analysis of a small module itself costs.
fp8lint runs many small analyses (`python._narrow_scope`), so `SCOPES` is `ScopeProvider`
with that list made once per class: the same visitors run, and give the same scopes
(`tests/documents/test_scopes.py` holds both against each other)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

from libcst.metadata import ExpressionContextProvider, ScopeProvider

_NAMES: dict[type, tuple[str, ...]] = {}


def _listed(provider: Any) -> Mapping[str, Callable[..., Any]]:
    """libcst's `get_visitors` for `provider`, its method names looked up once per class."""
    kind = type(provider)
    names = _NAMES.get(kind)
    if names is None:
        names = _NAMES[kind] = tuple(
            name
            for name, method in inspect.getmembers(
                provider,
                lambda m: (
                    inspect.ismethod(m)
                    and m.__name__.startswith(("visit_", "leave_"))
                    and not getattr(m, "_is_no_op", False)
                ),
            )
        )
    return {name: getattr(provider, name) for name in names}


class _Context(ExpressionContextProvider):
    def get_visitors(self) -> Mapping[str, Callable[..., Any]]:
        return _listed(self)


class _Scopes(ScopeProvider):
    """`ScopeProvider` reading the expression contexts of `_Context` (the same provider,
    listed once) wherever it asks for `ExpressionContextProvider`'s."""

    METADATA_DEPENDENCIES = (_Context,)

    @classmethod
    def get_inherited_dependencies(cls) -> Collection[Any]:
        return frozenset({_Context})

    def get_metadata(self, key: Any, node: Any, *default: Any) -> Any:
        if key is ExpressionContextProvider:
            key = _Context
        return super().get_metadata(key, node, *default)

    def get_visitors(self) -> Mapping[str, Callable[..., Any]]:
        return _listed(self)


# libcst's own provider wherever its dependencies are not the ones this module stands in for
SCOPES: type[ScopeProvider] = (
    _Scopes
    if tuple(ScopeProvider.METADATA_DEPENDENCIES) == (ExpressionContextProvider,)
    and not ExpressionContextProvider.METADATA_DEPENDENCIES
    else ScopeProvider
)
