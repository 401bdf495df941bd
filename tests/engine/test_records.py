"""`fp8lint.records` stands in for `dataclasses` on the start-up path: it must behave as the
dataclasses it replaced did, for what the engine uses."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Related, Severity, TextEdit
from fp8lint.records import FrozenInstanceError, field, record, replace
from fp8lint.settings import RunSettings, Selection


def diag(**changes: object) -> Diagnostic:
    base = Diagnostic("FP8101", "zero-headroom", Severity.WARNING, "m", "a.yaml", 1, 2, 1, 9)
    return replace(base, **changes)


def test_init_defaults_and_keywords() -> None:
    d = diag()
    assert (d.related, d.headroom_binades, d.fix, d.source_line, d.key, d.note) == (
        (),
        None,
        None,
        "",
        "",
        "",
    )
    assert Diagnostic(
        code="X", name="n", severity=Severity.INFO, message="m", path="p", line=1, column=1,
        end_line=1, end_column=1, note="why",
    ).note == "why"  # fmt: skip
    with pytest.raises(TypeError):
        Diagnostic("X", "n")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Selection(selekt=())  # type: ignore[call-arg]


def test_factories_make_a_new_value_for_each_record() -> None:
    a, b = RunSettings(), RunSettings()
    assert a.options == {} and a.options is not b.options
    assert a.selection == Selection() and a.selection is not b.selection


def test_equality_hash_and_repr_as_dataclasses() -> None:
    assert diag() == diag() and hash(diag()) == hash(diag())
    assert diag() != diag(line=2) and diag() != "x"
    nan = float("nan")
    assert diag(headroom_binades=nan) == diag(headroom_binades=nan)  # as tuples compare
    assert len({diag(), diag(), diag(key="k")}) == 2
    assert repr(Related("a", 1, 2, "m")) == "Related(path='a', line=1, column=2, message='m')"
    assert repr(Selection()) == "Selection(select=None, extend_select=(), ignore=())"
    with pytest.raises(TypeError):
        hash(RunSettings())  # mutable and comparable, as a non-frozen dataclass


def test_frozen_records_refuse_assignment() -> None:
    d = diag()
    with pytest.raises(FrozenInstanceError):
        d.line = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del d.code  # type: ignore[misc]
    s = RunSettings()
    s.max_bytes = 1  # not frozen
    assert s.max_bytes == 1


def test_replace_copy_and_pickle() -> None:
    edit = TextEdit("x", 1, 1, 1, 2, 0, 1)
    fix = Fix(Applicability.SAFE, "do", (edit,), site=1)
    d = diag(fix=fix)
    assert replace(d, line=5).line == 5 and replace(d, line=5).fix is fix
    with pytest.raises(TypeError):
        replace(d, nope=1)
    assert pickle.loads(pickle.dumps(d)) == d
    assert copy.deepcopy(d) == d and copy.copy(d) == d


def test_a_record_matches_its_dataclass_twin() -> None:
    @record(frozen=True)
    class R:
        a: int
        b: tuple[int, ...] = ()
        c: list[int] = field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class D:
        a: int
        b: tuple[int, ...] = ()
        c: list[int] = dataclasses.field(default_factory=list)

    assert repr(R(1)).split(".")[-1] == repr(D(1)).split(".")[-1].replace("D(", "R(")
    assert R(1) == R(1, ()) != R(2)
    assert R.__match_args__ == D.__match_args__
    match R(1, (2,)):
        case R(a, b):
            assert (a, b) == (1, (2,))
