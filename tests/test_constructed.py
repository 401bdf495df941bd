"""`Constructed.model_construct` builds exactly what pydantic's `model_construct` builds."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from fp8lint import constructed
from fp8lint.constructed import Constructed
from fp8lint.model import (
    EditInfo,
    Fp8Site,
    PrecisionOverride,
    Setting,
    SourceNote,
    make_span,
)

SPAN = make_span("a.yaml", 1, 2, 1, 9, 1, 8)


def _pydantic(cls: type[BaseModel], **values: Any) -> BaseModel:
    made: BaseModel = BaseModel.model_construct.__func__(cls, **values)  # type: ignore[attr-defined]
    return made


CASES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (Setting[int], {}),
    (Setting[int], {"value": 3, "known": True, "provenance": "written", "span": SPAN}),
    (Setting[Any], {"value": [1], "via": (SPAN,), "unknown_name": 1}),
    (SourceNote, {"kind": "typo", "key": "fp8", "span": SPAN, "message": "m"}),
    (Fp8Site, {}),
    (Fp8Site, {"path": "a.yaml", "family": "te", "margin": Setting[int].model_construct()}),
    (Fp8Site, {"notes": [SourceNote.model_construct()], "layers": ["a", "b"]}),
    (EditInfo, {}),
    (PrecisionOverride, {}),
]


@pytest.mark.parametrize(("cls", "values"), CASES)
def test_the_same_record_as_pydantic_builds(cls: type[BaseModel], values: dict[str, Any]) -> None:
    ours, theirs = cls.model_construct(**values), _pydantic(cls, **values)
    assert constructed._same(ours, theirs)
    assert ours == theirs and type(ours) is type(theirs)
    assert constructed._PLANS[cls] is not None  # the fast path is the one in use


def test_defaults_that_pydantic_copies_are_fresh_per_record() -> None:
    a, b = Fp8Site.model_construct(), Fp8Site.model_construct()
    assert a.notes == [] and a.notes is not b.notes and a.layers is not b.layers
    # the shared absent value is shared, as pydantic shares it
    assert a.margin is b.margin


def test_a_copy_with_changes_works_on_a_built_record() -> None:
    site = Fp8Site.model_construct(path="x")
    other = site.model_copy(update={"family": "te"})  # pydantic adds to the fields set
    assert other.family == "te" and other.model_fields_set == {"path", "family"}
    assert site.model_fields_set == {"path"}


def test_fields_set_given_explicitly_is_kept() -> None:
    site = Fp8Site.model_construct({"path"}, path="x", family="te")
    assert site.model_fields_set == {"path"}


class _Aliased(Constructed, BaseModel):
    name: str = Field(default="", alias="Name")


class _Private(Constructed, BaseModel):
    _hidden: int = 0
    x: int = 1


class _Copied(Constructed, BaseModel):
    items: list[int] = [1, 2]


@pytest.mark.parametrize("cls", [_Aliased, _Private, _Copied])
def test_a_class_the_template_cannot_follow_keeps_pydantics_loop(cls: type[BaseModel]) -> None:
    ours, theirs = cls.model_construct(), _pydantic(cls)
    assert constructed._PLANS[cls] is None
    assert constructed._same(ours, theirs)
