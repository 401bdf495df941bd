"""`model_construct` for fp8lint's own records, without pydantic's loop over every field.

pydantic's `model_construct` visits each field of the class on every call (its alias, its
validation aliases, then its default, through `get_default` and `smart_deepcopy`).  An
`Fp8Site` has a hundred fields and a source gives a few; a test module with 43 recipe sites
made 1,683 records, a tenth of its lint.  `Constructed.model_construct` starts from a copy of
the class's defaults (the objects pydantic would hand out: each is one `smart_deepcopy`
returns as it is), puts the given values in, calls the default factories of the fields not
given, and sets the attributes pydantic's sets.  A class this cannot follow exactly (an
alias, a factory that reads validated data, private attributes, `extra="allow"`, a
post-init, a default that would be copied) keeps pydantic's own; each class is also checked
against pydantic's on its first record (`tests/test_constructed.py` holds them together)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

if TYPE_CHECKING:
    from typing_extensions import Self

# per class: (defaults in field order, default factories, required names, field names)
_Plan = tuple[
    dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...], frozenset[str], frozenset[str]
]
_PLANS: dict[type, _Plan | None] = {}
_put = object.__setattr__


def _plan(cls: type[BaseModel]) -> _Plan | None:
    """How records of `cls` are built from a template, or None for pydantic's own loop."""
    try:  # pydantic's own test of whether a default is handed out as it is
        from pydantic._internal._utils import smart_deepcopy
    except ImportError:
        return None
    if (
        cls.__pydantic_post_init__
        or cls.__pydantic_root_model__
        or cls.__private_attributes__
        or cls.model_config.get("extra") == "allow"
    ):
        return None
    template: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    required: list[str] = []
    for name, field in cls.__pydantic_fields__.items():
        if field.alias is not None or field.validation_alias is not None:
            return None
        template[name] = None
        if field.default_factory is not None:
            if field.default_factory_takes_validated_data:
                return None
            factories.append((name, field.default_factory))  # type: ignore[arg-type]
        elif field.default is PydanticUndefined:
            required.append(name)
        elif smart_deepcopy(field.default) is field.default:
            template[name] = field.default
        elif type(field.default) in (list, dict, set) and not field.default:
            factories.append((name, field.default.copy))  # pydantic copies an empty one
        else:
            return None
    return template, tuple(factories), frozenset(required), frozenset(template)


def _build(cls: type[BaseModel], plan: _Plan, fields_set: set[str] | None, values: Any) -> Any:
    template, factories, required, names = plan
    record = cls.__new__(cls)
    data = dict(template)
    given = {name for name in values if name in names}  # a set, as pydantic's (it grows)
    for name in given:
        data[name] = values[name]
    for name, factory in factories:
        if name not in given:
            data[name] = factory()
    for name in required:
        if name not in given:
            del data[name]
    _put(record, "__dict__", data)
    _put(record, "__pydantic_fields_set__", given if fields_set is None else fields_set)
    _put(record, "__pydantic_extra__", None)
    _put(record, "__pydantic_private__", None)
    return record


def _same(a: BaseModel, b: BaseModel) -> bool:
    """Whether two records hold the same fields, in the same order, and the same state."""
    return (
        list(a.__dict__.items()) == list(b.__dict__.items())
        and a.__pydantic_fields_set__ == b.__pydantic_fields_set__
        and type(a.__pydantic_fields_set__) is type(b.__pydantic_fields_set__)
        and a.__pydantic_extra__ == b.__pydantic_extra__
        and a.__pydantic_private__ == b.__pydantic_private__
    )


class Constructed:
    """A mixin before `BaseModel` in a record's bases: its `model_construct` skips pydantic's
    per-field loop, with the same result."""

    @classmethod
    def model_construct(cls, _fields_set: set[str] | None = None, **values: Any) -> Self:
        model: Any = cls
        try:
            plan = _PLANS[cls]
        except KeyError:
            plan = _plan(model)
            if plan is not None:  # the first record is made both ways and compared
                theirs = BaseModel.model_construct.__func__(model, _fields_set, **values)  # type: ignore[attr-defined]
                if not _same(_build(model, plan, _fields_set, values), theirs):
                    plan = None
            _PLANS[cls] = plan
        if plan is None:
            record: Self = BaseModel.model_construct.__func__(model, _fields_set, **values)  # type: ignore[attr-defined]
            return record
        built: Self = _build(model, plan, _fields_set, values)
        return built
