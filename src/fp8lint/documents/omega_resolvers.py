"""The resolvers fp8lint registers with OmegaConf.  Its registry is process-global: `install`
registers the resolvers it is given (and fp8lint's stand-ins for OmegaConf's own `oc.*`) with
`replace=True`, once, and again only if someone else changed them.  Nothing user-written runs:
`oc.env` never reads the environment, `oc.create`, `oc.decode`, `oc.deprecated`, `oc.coerce`
and `oc.dict.*` leave the value unknown, and `oc.select` (a pure look-up with a default) is
OmegaConf's own."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Resolver = Callable[..., Any]

UNKNOWN_RESOLVER = "fp8lint.unknown"  # stands for a value fp8lint cannot read (custom tag)

# what the last failing fp8lint resolver said (OmegaConf keeps only text)
resolver_notes: list[str] = []
marker_notes: list[str] = []  # notes of the unknown values in the config being resolved
_installed: dict[str, Any] = {}  # name -> the object OmegaConf holds for it after our install
_installed_from: list[Mapping[str, Resolver | str]] = []


class Unknown(Exception):
    """Raised by a resolver whose result fp8lint does not know; `note` says why."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


def _stub(name: str, note: str) -> Resolver:
    def unknown(*args: Any) -> Any:
        shown = ",".join(str(a) for a in args)[:80]
        resolver_notes.append(note.format(name=name, args=shown))
        raise Unknown(note)

    return unknown


def _guarded(name: str, fn: Resolver) -> Resolver:
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except Unknown as exc:
            resolver_notes.append(exc.note)
            raise
        except Exception as exc:
            resolver_notes.append(f"`{name}` cannot compute it from these arguments ({exc})")
            raise Unknown(str(exc)) from None

    return call


def _marker(*args: Any) -> Any:
    index = int(args[0]) if args and str(args[0]).isdigit() else -1
    note = marker_notes[index] if 0 <= index < len(marker_notes) else "a value fp8lint cannot read"
    resolver_notes.append(note)
    raise Unknown(note)


OC_UNKNOWN = {
    "oc.env": "`${{oc.env:{args}}}` comes from the environment at launch; "
    "fp8lint never reads the environment",
    "oc.create": "`oc.create` builds a configuration at run time; fp8lint does not evaluate it",
    "oc.decode": "`oc.decode` parses text at run time; fp8lint does not evaluate it",
    "oc.deprecated": "`oc.deprecated` redirects to another key with a warning; fp8lint does "
    "not follow it",
    "oc.coerce": "`oc.coerce` converts at run time; fp8lint does not evaluate it",
    "oc.dict.keys": "`oc.dict.keys` lists a section's keys, not a single value",
    "oc.dict.values": "`oc.dict.values` lists a section's values, not a single value",
}


def _table(resolvers: Mapping[str, Resolver | str]) -> dict[str, Resolver]:
    from omegaconf.resolvers import oc

    table: dict[str, Resolver] = {name: _stub(name, note) for name, note in OC_UNKNOWN.items()}
    table["oc.select"] = oc.select  # a pure look-up with a default: OmegaConf's own
    table[UNKNOWN_RESOLVER] = _marker
    for name, fn in resolvers.items():
        table[name] = _stub(name, fn) if isinstance(fn, str) else _guarded(name, fn)
    return table


def _registry() -> dict[str, Any] | None:
    from omegaconf.basecontainer import BaseContainer

    found = getattr(BaseContainer, "_resolvers", None)
    return found if isinstance(found, dict) else None


def install(resolvers: Mapping[str, Resolver | str]) -> None:
    """Register fp8lint's resolvers with OmegaConf (replace=True), unless they already are."""
    registry = _registry()
    if (
        _installed_from
        and _installed_from[0] is resolvers
        and registry is not None
        and all(registry.get(name) is held for name, held in _installed.items())
    ):
        return
    import inspect

    from omegaconf import OmegaConf

    # 2.4 registers with `register_resolver` (and deprecates `register_new_resolver`); in 2.3
    # `register_resolver` is the legacy, text-only API without `replace`
    modern = "annotation_validation" in inspect.signature(OmegaConf.register_resolver).parameters
    for name, fn in _table(resolvers).items():
        if modern:
            OmegaConf.register_resolver(name, fn, replace=True, annotation_validation="off")
        else:  # 2.3: register_new_resolver (2.3's register_resolver is the legacy one)
            OmegaConf.register_new_resolver(name, fn, replace=True)
    registry = _registry()
    _installed.clear()
    if registry is not None:
        _installed.update({name: registry.get(name) for name in _table(resolvers)})
    _installed_from[:] = [resolvers]
