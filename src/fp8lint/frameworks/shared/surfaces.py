"""Each framework family's FP8 surface as a pydantic model of its keys as written, and the one
hook that validates written values against it.

A module per family (`megatron`, `nemo1`, `nemo2`, `bridge`, `te`, `accelerate`, `deepspeed`,
`torchao`, `torchtitan`) holds `SURFACE`, the model a recognizer's `Arg`s are validated into
(field names are the names the recognizer keys its args by; aliases are the spellings users
write), and `FILE`, the model of a whole file that `fp8lint schema FAMILY` exports.  The
modules cite the upstream source of every spelling and enum.

`check` is the only entry: a recognizer hands it the args it read, and gets back the typed
values that validated and an `invalid-value` note (FP8401) at the value of each that did
not.  pydantic and a family's module are imported, and its `TypeAdapter` built (once per
process), only when a file of that family is linted.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared.base import Arg, invalid_note, written

if TYPE_CHECKING:
    from pydantic import BaseModel, TypeAdapter
    from pydantic_core import ErrorDetails

    from fp8lint.model import Setting, SourceNote

FAMILIES = (
    "megatron",
    "nemo1",
    "nemo2",
    "bridge",
    "te",
    "accelerate",
    "deepspeed",
    "torchao",
    "torchtitan",
)


@dataclass
class Checked:
    """What validation made of one section's written args."""

    values: dict[str, Any] = field(default_factory=dict)  # key -> validated value
    invalid: list[SourceNote] = field(default_factory=list)

    def ok(self, key: str) -> bool:
        return key in self.values


# surfaces that are not one family's: `TransformerConfig` itself, as a mapping spells it
# (`--yaml-cfg`, serialized configs), where Megatron's command-line strictness does not apply
_SHARED = {"tc": "fp8lint.frameworks.shared.tc_surface"}


def surface(family: str) -> type[BaseModel]:
    """The family's `SURFACE` model (its module imported on first use)."""
    module = importlib.import_module(_SHARED.get(family, f"fp8lint.frameworks.{family}.surface"))
    model: type[BaseModel] = module.SURFACE
    return model


@cache
def adapter(family: str) -> TypeAdapter[Any]:
    """One validator per family per process, built the first time a file of it is linted."""
    from pydantic import TypeAdapter

    return TypeAdapter(surface(family))


def check(family: str, args: Mapping[str, Arg]) -> Checked:
    """Validate the known values of `args` (keyed by field name) against the family's surface.

    Keys the surface does not name are left to the recognizer (unknown keys are not this
    rule's business), and so are values that could not be read statically."""
    return _check(surface(family), adapter(family), args)


@cache
def model_adapter(model: type[BaseModel]) -> TypeAdapter[Any]:
    """One validator per model other than a family's surface (a recipe class of a family
    with several), built the first time it is needed."""
    from pydantic import TypeAdapter

    return TypeAdapter(model)


def check_model(model: type[BaseModel], args: Mapping[str, Arg]) -> Checked:
    """`check` against one model of a family rather than its `SURFACE`."""
    return _check(model, model_adapter(model), args)


def _check(model: type[BaseModel], validator: TypeAdapter[Any], args: Mapping[str, Arg]) -> Checked:
    from pydantic import ValidationError

    names = model.model_fields
    raw = {key: arg.value for key, arg in args.items() if arg.known and key in names}
    out = Checked()
    while raw:
        try:
            validated = validator.validate_python(raw)
        except ValidationError as error:
            bad = _by_key(error.errors(include_url=False), raw)
            if not bad:  # an error not tied to one key: nothing to point at
                return out
            for key, detail in bad.items():
                out.invalid.append(invalid_note(args[key], expected(detail)))
                del raw[key]
            continue
        out.values = {key: getattr(validated, key) for key in raw}
        break
    return out


def defaults(family: str) -> dict[str, Any]:
    """The family's defaults, from its surface: every field whose default is a value (a
    `None` default means "derived or left to the framework", not a value)."""
    return defaults_of(surface(family))


def defaults_of(model: type[BaseModel]) -> dict[str, Any]:
    """A surface model's field defaults (the one place a family writes them)."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.is_required():
            continue
        value = info.get_default(call_default_factory=True)
        if value is not None:
            out[name] = value
    return out


def setting_of(
    arg: Arg | None,
    checked: Checked,
    name: str,
    *,
    convert: Callable[[Any], Any] | None = None,
    missing: Callable[[], Setting[Any]] | None = None,
) -> Setting[Any]:
    """One value as a `Setting`, whichever of the four cases it is: not written (`missing()`,
    the family's default, or unset), written but unreadable statically (unknown, at its
    span), accepted by the surface (its validated value, `convert`ed to the model's type), or
    rejected by it (unknown at the value: `check` already made the FP8401 note)."""
    from fp8lint.model import Setting

    if arg is None:
        return missing() if missing is not None else Setting[Any].model_construct(known=False)
    if not arg.known:
        return written(arg, None)
    if name in checked.values:
        value = checked.values[name]
        return written(arg, convert(value) if convert is not None else value)
    return rejected(arg)


def rejected(arg: Arg) -> Setting[Any]:
    """A written value the surface refused: unknown, but where it is written is known."""
    from fp8lint.model import Setting

    return Setting[Any].model_construct(
        known=False, span=arg.value_span, key=arg.key, provenance="written"
    )


def _by_key(errors: list[ErrorDetails], raw: Mapping[str, Any]) -> dict[str, ErrorDetails]:
    bad: dict[str, ErrorDetails] = {}
    for detail in errors:
        loc = detail["loc"]
        if loc and isinstance(loc[0], str) and loc[0] in raw:
            bad.setdefault(loc[0], detail)  # a union reports each branch: keep the first
    return bad


def expected(detail: ErrorDetails) -> str:
    """What the surface wanted, in the words of fp8lint's messages."""
    kind = detail["type"]
    ctx = detail.get("ctx") or {}
    if kind == "literal_error":
        return "expected " + str(ctx.get("expected", "")).replace("'", "`")
    if kind.startswith("int_") or kind in ("less_than", "greater_than_equal"):
        if kind == "greater_than_equal":
            return f"expected an integer of at least {ctx.get('ge')}"
        return "expected an integer"
    if kind.startswith("bool_"):
        return "expected true or false"
    if kind.startswith("string_"):
        return "expected a string"
    return str(detail["msg"]).rstrip(".")
