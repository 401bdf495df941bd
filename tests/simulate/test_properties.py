"""The vectorized, streamed `simulate` against the plain implementation it replaced
(`reference.py`), on random traces: the recurrence row by row, the report and the sweep,
chunked and whole, and the streamed CSV reader against the plain one."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fp8lint.simulate import report
from fp8lint.simulate.recurrence import (
    ALGOS,
    DelayedSetting,
    replay,
    sliding_max,
    sliding_maxima,
)
from fp8lint.simulate.traces import Trace, TraceError, load, read_csv
from fp8lint.simulate.traces import csv as csv_trace

from . import reference
from .test_simulate import assert_same

# amaxes that exercise every branch: zero (no update), non-finite, tiny (scale FLT_MAX),
# ties, and ordinary values on both sides of FP8_MAX
AMAX = st.one_of(
    st.sampled_from([0.0, math.inf, 1e-40, 1.0, 2.0, 0.5, 448.0, 1000.0]),
    st.floats(min_value=1e-6, max_value=1e6),
)
SETTING = st.builds(
    DelayedSetting,
    st.integers(min_value=-1, max_value=4),
    st.sampled_from([1, 2, 3, 5, 16]),
    st.sampled_from(ALGOS),
)
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def close(got: Any, want: Any, path: str = "") -> None:
    """Equal, floats within the last printed digit (the means are sums in another order)."""
    if isinstance(want, dict):
        assert set(got) == set(want), path
        for k in want:
            close(got[k], want[k], f"{path}.{k}")
    elif isinstance(want, list):
        assert len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            close(g, w, f"{path}[{i}]")
    elif isinstance(want, float) and isinstance(got, float):
        assert got == pytest.approx(want, abs=2e-6), path
    else:
        assert got == want, path


@FAST
@given(st.lists(st.one_of(AMAX, st.just(math.nan)), max_size=60), SETTING, st.booleans())
def test_replay_matches_the_plain_loop(
    amax: list[float], setting: DelayedSetting, unfused: bool
) -> None:
    new = replay(amax, setting, 448.0, unfused=unfused)
    old = reference.replay(
        amax,
        reference.DelayedSetting(setting.margin, setting.history, setting.algo),
        448.0,
        unfused=unfused,
    )
    assert_same(new, old)


@FAST
@given(
    st.lists(st.floats(min_value=0, max_value=1e3), max_size=80),
    st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=4),
)
def test_sliding_maxima_are_the_window_maxima(values: list[float], widths: list[int]) -> None:
    maxima = sliding_maxima(np.asarray(values, dtype=np.float64), widths)
    assert sorted(maxima) == sorted(set(widths))
    for w in widths:
        want = [max(values[j : j + w]) for j in range(len(values) - w + 1)]
        assert maxima[w].tolist() == want
        assert sliding_max(np.asarray(values, dtype=np.float64), w).tolist() == want


def _trace_in_chunks(
    tensors: list[tuple[str, bool, list[float]]], cuts: list[int]
) -> tuple[Trace, list[tuple[list[float], float]]]:
    """A trace whose rows come step-major (as a training log writes them), split into
    chunks at `cuts`; and the oracle's per-tensor input."""
    trace = Trace("random")
    rows: list[tuple[int, int, float]] = []
    for name, backward, amax in tensors:
        i = trace.tensor_id(name, backward, "random")
        rows += [(k, i, a) for k, a in enumerate(amax)]
    rows.sort(key=lambda r: r[0])
    bounds = sorted({0, len(rows), *(c % (len(rows) + 1) for c in cuts)})
    trace._chunks = [
        (
            np.asarray([r[1] for r in rows[lo:hi]], dtype=np.int64),
            np.asarray([r[0] for r in rows[lo:hi]], dtype=np.int64),
            np.asarray([r[2] for r in rows[lo:hi]], dtype=np.float64),
        )
        for lo, hi in itertools.pairwise(bounds)
    ]
    trace.rows = len(rows)
    oracle = [(amax, 57344.0 if backward else 448.0) for _, backward, amax in tensors]
    return trace, oracle


TENSORS = st.lists(
    st.tuples(st.booleans(), st.lists(AMAX, min_size=1, max_size=40)), min_size=1, max_size=3
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TENSORS, SETTING, st.booleans(), st.lists(st.integers(min_value=0), max_size=4))
def test_report_and_sweep_match_the_plain_implementation(
    spec: list[tuple[bool, list[float]]], setting: DelayedSetting, unfused: bool, cuts: list[int]
) -> None:
    tensors = [(f"t{i}", b, amax) for i, (b, amax) in enumerate(spec)]
    trace, oracle = _trace_in_chunks(tensors, cuts)
    got = report.render_json(report.run(trace, setting, "hybrid", unfused=unfused))
    want = reference.run(
        oracle, reference.DelayedSetting(setting.margin, setting.history, setting.algo), unfused
    )
    close(
        [{k: v for k, v in t.items() if k in want["tensors"][0]} for t in got["tensors"]],
        want["tensors"],
    )
    close(got["overall"], want["overall"])
    close(got["sweep"], want["sweep"])


def _csv(rows: list[tuple[int, str, str]]) -> str:
    return "step,tensor,amax\n" + "".join(f"{s},{t},{a}\n" for s, t, a in rows)


CSV_AMAX = st.one_of(
    st.floats(min_value=1e-3, max_value=1e3).map(repr),
    st.sampled_from(["0", "nan", "-1.5", "inf", "2"]),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.integers(0, 2), CSV_AMAX), min_size=1, max_size=120),
    st.booleans(),
)
def test_streamed_csv_matches_the_plain_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[tuple[int, str]], shuffle: bool
) -> None:
    monkeypatch.setattr(csv_trace, "BLOCK_BYTES", 64)  # many blocks, so state crosses them
    step = [k // 3 for k in range(len(rows))]
    if shuffle:  # steps that go back across blocks: replayed again from memory
        step = step[::-1]
    text = _csv(
        [
            (s, f"layer{t}.{'grad' if t == 2 else 'x'}", a)
            for s, (t, a) in zip(step, rows, strict=True)
        ]
    )
    path = tmp_path / "t.csv"
    path.write_text(text)
    setting = DelayedSetting(1, 3, "max")
    try:
        plain = read_csv(text, str(path))
    except TraceError as exc:  # every amax NaN or negative
        streamed = load(str(path))
        with pytest.raises(TraceError) as caught:
            report.run(streamed, setting)
        assert str(caught.value) == str(exc)
        return
    streamed = load(str(path))
    assert streamed.streamed
    a = report.render_json(report.run(streamed, setting))
    b = report.render_json(report.run(plain, setting))
    assert a["notes"] == b["notes"] and a["skipped_rows"] == b["skipped_rows"]
    close(a, b)
