"""Light records for the start-up path: what `dataclasses.dataclass` gives these classes
(`__init__`, `__eq__`, `__hash__` when frozen, `__repr__`, frozen attributes, `replace`),
without importing `dataclasses` (which imports `inspect`, `ast`, `dis`, `tokenize`) and
without its per-class code generation: together they cost a pre-commit call on a file
without FP8 settings more than the check itself (issue 14).

Only what the engine's records use is supported: fields with a default or a
`field(default_factory=...)`, `frozen=True`, no inheritance between records.  Type checkers
see a dataclass (`dataclass_transform`).
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any, TypeVar, overload

    # typing has it from 3.11; pydantic brings typing_extensions for mypy
    from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> Callable[[object], object]:
        return lambda f: f


_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record (as `dataclasses.FrozenInstanceError`)."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


if TYPE_CHECKING:

    @overload
    def field(*, default_factory: Callable[[], T]) -> T: ...
    @overload
    def field(*, default: T) -> T: ...


def field(*, default: Any = _MISSING, default_factory: Any = _MISSING) -> Any:
    """A field's default: a plain value, or a factory called for each new record."""
    if default_factory is not _MISSING:
        return _Factory(default_factory)
    return default


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _eq(self: Any, other: Any) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented  # type: ignore[no-any-return]
    fields = self.__record_fields__
    return tuple(getattr(self, f) for f in fields) == tuple(getattr(other, f) for f in fields)


def _hash(self: Any) -> int:
    return hash(tuple(getattr(self, f) for f in self.__record_fields__))


def _repr(self: Any) -> str:
    inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__record_fields__)
    return f"{self.__class__.__qualname__}({inner})"


def _build(cls: Any, frozen: bool) -> Any:
    names = [n for n in vars(cls).get("__annotations__", {}) if not n.startswith("__")]
    params: list[str] = []
    body: list[str] = []
    env: dict[str, Any] = {}
    for n in names:
        value = cls.__dict__.get(n, _MISSING)
        if isinstance(value, _Factory):
            env[f"_f_{n}"] = value.make
            params.append(f"{n}=_MISSING")
            body.append(f"  d[{n!r}] = _f_{n}() if {n} is _MISSING else {n}")
            delattr(cls, n)
            continue
        if value is _MISSING:
            params.append(n)
        else:
            env[f"_d_{n}"] = value
            params.append(f"{n}=_d_{n}")
        body.append(f"  d[{n!r}] = {n}")
    # one small function per class: a generic `__init__` would cost every record it makes
    source = f"def __init__(self, {', '.join(params)}):\n  d = self.__dict__\n"
    source += "\n".join(body) + "\n" if body else "  pass\n"
    env["_MISSING"] = _MISSING
    exec(source, env)  # our own source, built from the class's field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init
    cls.__record_fields__ = tuple(names)
    cls.__match_args__ = tuple(names)  # type: ignore[misc]
    cls.__eq__ = _eq
    cls.__repr__ = _repr
    if frozen:
        cls.__hash__ = _hash
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    else:
        cls.__hash__ = None  # mutable and comparable: unhashable
    return cls


@dataclass_transform(field_specifiers=(field,))
def record(cls: Any = None, /, *, frozen: bool = False) -> Any:
    """`@record` / `@record(frozen=True)`: as `@dataclass`, for the engine's records."""
    if cls is None:
        return lambda c: _build(c, frozen)
    return _build(cls, frozen)


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record `obj` with `changes` (as `dataclasses.replace`)."""
    fields: tuple[str, ...] = obj.__record_fields__  # type: ignore[attr-defined]
    for name in changes:
        if name not in fields:
            raise TypeError(f"{type(obj).__name__} has no field {name!r}")
    values = {f: changes[f] if f in changes else getattr(obj, f) for f in fields}
    return obj.__class__(**values)
