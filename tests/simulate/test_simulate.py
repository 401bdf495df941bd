"""`fp8lint simulate`: the delayed-scaling recurrence on hand-computed traces, the sweep, the
trace readers and the command line."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from fp8lint.cli import main
from fp8lint.simulate import report, traces
from fp8lint.simulate.recurrence import (
    FLT_MAX,
    DelayedSetting,
    Replay,
    current_scaling,
    fp8_max,
    replay,
)
from fp8lint.simulate.traces import (
    SyntheticSpec,
    TensorTrace,
    Trace,
    TraceError,
    pass_from_name,
    read_csv,
    read_json,
    read_te_log,
    synthetic,
)
from fp8lint.simulate.traces import csv as csv_trace

from ..conftest import lint
from . import reference

MR = "most_recent"
E4M3, E5M2 = 448.0, 57344.0


def assert_same(new: Replay, old: reference.Replay) -> None:
    """The vectorized replay equals the plain one: exactly, except the binades lost, whose
    log2 comes from numpy rather than libm and may differ in the last bit."""
    assert new.amax.tolist() == old.amax or any(math.isnan(a) for a in old.amax)
    assert new.scale.tolist() == old.scale
    assert new.calibrated.tolist() == old.calibrated
    assert new.clipped_fraction.tolist() == old.clipped_fraction
    assert new.clipped.tolist() == old.clipped
    assert new.limit.tolist() == old.limit
    for got, want in zip(new.binades_lost(), old.binades_lost(), strict=True):
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def scales(
    amax: list[float], m: int, hist: int, algo: str, fmax: float = E4M3, **kw: bool
) -> reference.Replay:
    """Replay with both implementations, check they agree, and return the plain one's lists
    (so the hand-computed expectations below read as written)."""
    new = replay(amax, DelayedSetting(m, hist, algo), fmax, **kw)
    old = reference.replay(amax, reference.DelayedSetting(m, hist, algo), fmax, **kw)
    assert_same(new, old)
    return old


# --------------------------------------------------------------------------- the recurrence


def test_fp8_max_per_pass_and_format() -> None:
    assert fp8_max("hybrid", backward=False) == 448.0
    assert fp8_max("hybrid", backward=True) == 57344.0
    assert fp8_max("e4m3", backward=True) == 448.0
    assert fp8_max("e5m2", backward=False) == 57344.0
    assert fp8_max("hybrid", backward=False, fnuz=True) == 240.0
    assert fp8_max("e4m3", backward=True, fnuz=True) == 240.0
    assert fp8_max("hybrid", backward=True, fnuz=True) == 57344.0
    with pytest.raises(ValueError):
        fp8_max("e3m4", backward=False)


@pytest.mark.parametrize(("fmax", "backward"), [(E4M3, False), (E5M2, True)])
def test_single_spike_most_recent(fmax: float, backward: bool) -> None:
    assert fp8_max("hybrid", backward) == fmax
    r = scales([1, 1, 2, 1, 1], 0, 1, MR, fmax)
    # initial scale 1, then FP8_MAX / previous amax
    assert r.scale == [1.0, fmax, fmax, fmax / 2, fmax]
    assert r.clipped_fraction == [0, 0, 0.5, 0, 0]
    assert r.clipped == [2]
    assert r.limit == [fmax, 1, 1, 2, 1]
    assert r.calibrated == [False, True, True, True, True]


@pytest.mark.parametrize("fmax", [E4M3, E5M2])
def test_single_spike_max_keeps_it_for_the_window(fmax: float) -> None:
    r = scales([1, 1, 2, 1, 1, 1, 1, 1], 0, 4, "max", fmax)
    # the window of update k is a[k-3..k]: the spike at 2 sets the scale of 3, 4, 5 and 6
    assert r.scale == [1, fmax, fmax, fmax / 2, fmax / 2, fmax / 2, fmax / 2, fmax]
    assert r.clipped == [2]
    lost = r.binades_lost()
    assert lost[0] is None  # TE's initial scale 1 says nothing about precision
    assert [x[1] for x in lost[1:] if x is not None] == [0, 0, 1, 1, 1, 1, 0]
    assert all(x[0] == 0 for x in lost[1:] if x is not None)


def test_margin_absorbs_spikes_up_to_two_to_the_margin() -> None:
    r = scales([1, 2, 1, 3], 1, 1, MR)
    # scale = 448 / amax / 2: a 2x step fits exactly, a 3x one loses 1 - 2/3
    assert r.scale == [1, 224, 112, 224]
    assert r.clipped_fraction[:3] == [0, 0, 0]
    assert r.clipped_fraction[3] == pytest.approx(1 / 3)
    lost = r.binades_lost()
    assert lost[1] == (0.0, 0.0)  # the 2x step used the whole margin
    assert lost[2] == (1.0, 1.0)  # one binade of margin, one of stale reference


@pytest.mark.parametrize("fmax", [E4M3, E5M2])
@pytest.mark.parametrize("algo", [MR, "max"])
def test_ramp_up_clips_every_step_without_margin(algo: str, fmax: float) -> None:
    r = scales([1, 2, 3, 4], 0, 4, algo, fmax)
    assert r.scale == pytest.approx([1, fmax, fmax / 2, fmax / 3])
    assert r.clipped_fraction == pytest.approx([0, 1 / 2, 1 / 3, 1 / 4])


def test_ramp_down_loses_binades_at_the_bottom() -> None:
    mr = scales([4, 3, 2, 1], 0, 4, MR)
    mx = scales([4, 3, 2, 1], 0, 4, "max")
    assert mr.clipped == mx.clipped == []
    assert [x[1] for x in mr.binades_lost()[1:] if x] == pytest.approx(
        [math.log2(4 / 3), math.log2(3 / 2), 1.0]
    )
    assert [x[1] for x in mx.binades_lost()[1:] if x] == pytest.approx([math.log2(4 / 3), 1.0, 2.0])


@pytest.mark.parametrize("fmax", [E4M3, E5M2])
@pytest.mark.parametrize("algo", [MR, "max"])
def test_zero_amax_keeps_the_scale(algo: str, fmax: float) -> None:
    r = scales([1, 0, 2], 0, 2, algo, fmax)
    assert r.scale == [1, fmax, fmax]
    assert r.clipped_fraction == [0, 0, 0.5]
    assert r.binades_lost()[1] is None


def test_zero_amax_fused_does_not_roll_unfused_does() -> None:
    amax = [2.0, 1.0, 0.0, 0.0, 1.5]
    fused = scales(amax, 0, 2, "max")
    unfused = scales(amax, 0, 2, "max", unfused=True)
    # fused kernel: the zeros do not roll, the window still holds the 2
    assert fused.scale == [1, 224, 224, 224, 224]
    assert fused.clipped == []
    # Python path: zeros roll in, the 2 leaves the window, the 1 sets the scale
    assert unfused.scale == [1, 224, 224, 448, 448]
    assert unfused.clipped_fraction[4] == pytest.approx(1 / 3)


@pytest.mark.parametrize("fmax", [E4M3, E5M2])
@pytest.mark.parametrize("algo", [MR, "max"])
def test_inf_amax_freezes_the_scale_while_in_the_window(algo: str, fmax: float) -> None:
    r = scales([1, math.inf, 4, 4, 4, 4], 0, 3, algo, fmax)
    q = fmax / 4
    if algo == MR:
        assert r.scale == [1, fmax, fmax, q, q, q]
        assert r.clipped == [2]
    else:
        # the inf stays in the window of updates 1-3: the scale is frozen at FP8_MAX / 1
        assert r.scale == [1, fmax, fmax, fmax, fmax, q]
        assert r.clipped == [2, 3, 4]
    assert r.clipped_fraction[2] == 0.75
    assert r.clipped_fraction[1] == 0  # a non-finite amax is not counted as a clip


def test_nan_amax_fused_max_skips_it_unfused_keeps_the_scale() -> None:
    amax = [2.0, math.nan, 1.0, 3.0]
    fused = scales(amax, 0, 2, "max")
    unfused = scales(amax, 0, 2, "max", unfused=True)
    assert fused.scale == [1, 224, 224, 448]
    assert fused.clipped_fraction[3] == pytest.approx(2 / 3)
    assert unfused.scale == [1, 224, 224, 224]
    assert unfused.clipped_fraction[3] == pytest.approx(1 / 3)
    assert scales(amax, 0, 1, MR).scale == [1, 224, 224, 448]


def test_tiny_amax_gives_flt_max() -> None:
    r = scales([1e-40, 1.0], 0, 1, MR)
    assert r.scale == [1.0, FLT_MAX]
    assert r.clipped_fraction[1] == pytest.approx(1.0)


def test_first_micro_batch_uses_scale_one() -> None:
    r = scales([500.0, 500.0], 0, 1, MR)
    assert r.clipped_fraction[0] == pytest.approx(1 - 448 / 500)
    assert r.clipped == [0]
    assert scales([500.0], 0, 1, MR, E5M2).clipped == []


@pytest.mark.parametrize("fmax", [E4M3, E5M2])
def test_window_boundary(fmax: float) -> None:
    amax = [1.0] * 16
    amax[2] = amax[6] = amax[10] = amax[15] = 2.0
    r = scales(amax, 0, 4, "max", fmax)
    # 6 and 10 are exactly L = 4 after a spike: still in the window; 15 is 5 after 10
    assert r.clipped == [2, 15]
    r5 = scales(amax, 0, 5, "max", fmax)
    assert r5.clipped == [2]
    assert scales(amax, 0, 3, "max", fmax).clipped == [2, 6, 10, 15]
    assert scales(amax, 0, 1024, MR, fmax).clipped == [2, 6, 10, 15]


def test_max_with_history_one_is_most_recent() -> None:
    amax = [1, 3, 2, 5, 0, 4, math.inf, 1, 2]
    assert scales(amax, 1, 1, "max").scale == scales(amax, 1, 64, MR).scale


def test_current_scaling_never_clips() -> None:
    amax = [1.0, 8.0, 0.5, 0.0, math.inf, 300.0]
    s = current_scaling(amax, E4M3)
    assert [a * x for a, x in zip(amax[:3], s[:3], strict=True)] == [448.0] * 3
    assert s[3] == s[4] == 1.0


def test_setting_validation() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        DelayedSetting(0, 0, "max")
    with pytest.raises(ValueError, match="most_recent or max"):
        DelayedSetting(0, 1, "mean")


# --------------------------------------------------------------------------- Megatron vs NVIDIA


def _trace(amax: list[float], name: str = "fc1.input:fwd") -> Trace:
    return Trace("test", [TensorTrace(name, False, list(range(len(amax))), amax)])


def test_megatron_default_clips_a_single_2x_spike() -> None:
    amax = [1.0] * 2000
    amax[1000] = 2.0
    result = report.run(_trace(amax), DelayedSetting(0, 1, MR), sweep=False)
    assert result.overall.clipped == 1
    assert result.overall.worst == 0.5
    assert result.tensors[0].clips.step.tolist() == [1000]


def test_long_max_window_absorbs_a_recurring_spike() -> None:
    amax = [1.0] * 2000
    for k in (0, 500, 1000, 1500):  # first at step 0, which runs at TE's initial scale 1
        amax[k] = 2.0
    nvidia = report.run(_trace(amax), DelayedSetting(0, 1024, "max"), sweep=False)
    megatron = report.run(_trace(amax), DelayedSetting(0, 1, MR), sweep=False)
    assert nvidia.overall.clipped == 0
    assert megatron.overall.clipped == 3
    # mid-trace, the first occurrence clips under both, the recurrences only under Megatron's
    amax = [1.0] * 2000
    for k in (100, 600, 1100):
        amax[k] = 2.0
    assert report.run(_trace(amax), DelayedSetting(0, 1024, "max")).overall.clipped == 1
    assert report.run(_trace(amax), DelayedSetting(0, 1, MR)).overall.clipped == 3


# --------------------------------------------------------------------------- the sweep


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recommended_setting_clips_nothing_when_replayed(seed: int) -> None:
    trace = synthetic(
        SyntheticSpec(steps=600, spread=0.2, spike_size=3.0, spike_rate=0.01, seed=seed)
    )
    result = report.run(trace, DelayedSetting(0, 1, MR))
    best = result.recommended
    assert best is not None
    again = report.run(trace, best.setting, sweep=False)
    assert again.overall.clipped == 0
    clean = [r for r in result.sweep if r.summary.clipped == 0]
    assert best.key() == min(r.key() for r in clean)
    assert len(result.sweep) == 40


def test_sweep_with_no_clean_setting() -> None:
    amax = [1.0] * 50
    amax[30] = 100.0  # 100x > 2^4 on first sight: every swept setting clips
    result = report.run(_trace(amax), DelayedSetting(0, 1, MR))
    assert result.recommended is None
    assert "Every swept setting clips" in report.render_text(result)


def test_sweep_prefers_fewer_binades_then_smaller_settings() -> None:
    amax = [1.0] * 40  # flat: nothing clips anywhere, margin 0 / L=1 / most_recent is cheapest
    best = report.run(_trace(amax), DelayedSetting(3, 16, "max")).recommended
    assert best is not None and best.setting == DelayedSetting(0, 1, MR)


# --------------------------------------------------------------------------- traces


def test_pass_from_name() -> None:
    assert pass_from_name("fc1:fwd") is False
    assert pass_from_name("fc1:bwd") is True
    assert pass_from_name("fc1:grad") is True
    assert pass_from_name("layers.0.fc1_gradient") is True
    assert pass_from_name("layers.0.fc1_activation") is False


def test_csv_orders_by_step_and_reads_pass() -> None:
    text = (
        "step,tensor,amax,pass\n"
        "2,a,3.0,\n1,a,2.0,\n1,a,2.5,\n"  # equal steps keep file order (micro-batches)
        "1,b,1.0,bwd\n2,b,inf,bwd\n"
    )
    trace = read_csv(text, "t.csv")
    a, b = trace.tensors
    assert (a.steps, a.amax, a.backward) == ([1, 1, 2], [2.0, 2.5, 3.0], False)
    assert b.backward is True and math.isinf(b.amax[1])
    forced = read_csv(text, "t.csv", force_pass="bwd")
    assert all(t.backward for t in forced.tensors)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tensor,amax\n", "t.csv:1: the CSV header must name the columns step, tensor and amax"),
        ("step,tensor,amax\n1,a,1\n2,a,big\n", "t.csv:3: amax must be a number, got 'big'"),
        ("step,tensor,amax\n1,a,-1\n", "t.csv: no amax rows (1 skipped: NaN or negative amax)"),
        ("step,tensor,amax\n1.5,a,1\n", "t.csv: no amax rows (1 skipped: non-integer step)"),
        ("step,tensor,amax\n1,a\n", "t.csv:2: expected 3 fields, got 2"),
        ("step,tensor,amax,pass\n1,a,1,up\n", "t.csv:2: pass must be fwd or bwd"),
        ("step,tensor,amax,pass\n1,a,1,fwd\n2,a,1,bwd\n", "t.csv:3: tensor 'a' changes pass"),
        ("step,tensor,amax\n", "t.csv: no amax rows"),
    ],
)
def test_csv_errors(text: str, message: str) -> None:
    with pytest.raises(TraceError) as exc:
        read_csv(text, "t.csv")
    assert str(exc.value).startswith(message), str(exc.value)


def test_json_reader() -> None:
    text = (
        '[{"step": 0, "tensor": "x:bwd", "amax": 1}, {"step": 1, "tensor": "x:bwd", "amax": "nan"}]'
    )
    trace = read_json(text, "t.json")
    (t,) = trace.tensors
    # issue 13: a NaN amax is not replayed; it is reported with its entry and counted
    assert t.backward and t.amax == [1.0] and t.steps == [0]
    assert trace.skipped == 1
    assert "t.json: entry 1: amax is NaN: row skipped" in trace.all_notes()
    for bad, message in [
        ("{}", "t.json: expected a JSON list"),
        ("[1]", "t.json: entry 0: expected an object"),
        ('[{"step": 0, "tensor": "x"}]', "t.json: entry 0: missing amax"),
        ('[{"step": true, "tensor": "x", "amax": 1}]', "t.json: entry 0: step must be"),
        ('[{"step": 0, "tensor": "x", "amax": 1},', "t.json:1:"),
    ]:
        with pytest.raises(TraceError, match=f"^{bad and message}"):
            read_json(bad, "t.json")


def te_line(second: int, name: str, iteration: int, value: str) -> str:
    """A line as nvdlfw_inspect's default statistics file logger writes it."""
    return (
        f"2025-05-01 10:00:{second:02d},001 - INFO - {name} \t\t\t\t "
        f"iteration={iteration:06d} \t\t\t\t value={value}\n"
    )


FC1 = "decoder.1.mlp.fc1"
TE_LOG = (
    te_line(0, f"{FC1}_activation_cur_amax", 1, "3.5000")
    + te_line(0, f"{FC1}_gradient_cur_amax", 1, "0.0000")
    + te_line(0, f"{FC1}_activation_overflows%", 1, "0.0000")
    + te_line(1, f"{FC1}_activation_cur_amax", 2, "7.2500")
    + te_line(1, f"{FC1}_gradient_cur_amax", 2, "0.0123")
)


def test_te_debug_log_reader() -> None:
    trace = read_te_log(TE_LOG, "rank0.log")
    act, grad = trace.tensors
    assert (act.name, act.backward, act.steps, act.amax) == (
        "decoder.1.mlp.fc1_activation",
        False,
        [1, 2],
        [3.5, 7.25],
    )
    assert (grad.name, grad.backward, grad.amax) == (
        "decoder.1.mlp.fc1_gradient",
        True,
        [0.0, 0.0123],
    )
    assert any("skipped 1 statistics line" in n for n in trace.notes)
    assert any("4 decimals" in n for n in trace.notes)
    with pytest.raises(TraceError, match="enable TE's LogTensorStats"):
        read_te_log(TE_LOG.splitlines()[2], "rank0.log")


def test_synthetic_is_deterministic() -> None:
    spec = SyntheticSpec(steps=300, spread=0.3, drift=1.0, spike_size=8, spike_rate=0.05, seed=7)
    a, b = synthetic(spec), synthetic(spec)
    assert [t.amax for t in a.tensors] == [t.amax for t in b.tensors]
    assert [t.amax for t in synthetic(SyntheticSpec(steps=300, seed=8)).tensors] != [
        t.amax for t in a.tensors
    ]
    assert [t.backward for t in a.tensors] == [False, True]
    with pytest.raises(TraceError, match="--spike-rate"):
        synthetic(SyntheticSpec(spike_rate=2))


# --------------------------------------------------------------------------- command line

SPIKY_CSV = "step,tensor,amax\n" + "".join(
    f"{k},fc1.input:fwd,{2.0 if k in (10, 30) else 1.0}\n{k},fc1.grad_output,0.001\n"
    for k in range(40)
)


def sim(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["simulate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def row(out: str, name: str) -> list[str]:
    """The fields of a tensor's row in the text table."""
    (line,) = [x for x in out.splitlines() if x.startswith(name + " ")]
    return line.split()


def test_cli_csv_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.csv"
    path.write_text(SPIKY_CSV)
    code, out, _ = sim(capsys, str(path), "--margin", "0", "--history", "1", "--algo", MR)
    assert code == 1
    assert "Recipe: margin 0, amax_history_len 1, amax_compute_algo most_recent" in out
    assert row(out, "fc1.grad_output")[:5] == ["fc1.grad_output", "bwd", "57344", "40", "0"]
    assert "fc1.input:fwd: 10: 2.000x (50.0%), 30: 2.000x (50.0%)" in out
    assert "Result: 2 of 80 micro-batches clipped (worst 50.0% of the outlier lost)." in out
    # the first 2x spike clips under every margin-0 setting; margin 1 absorbs it
    assert (
        "Cheapest setting that clips nothing on this trace: margin 1, amax_history_len 1, "
        "amax_compute_algo most_recent (1.00 binades lost at the bottom on average)." in out
    )


def test_cli_json_input_matches_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [r.split(",") for r in SPIKY_CSV.splitlines()[1:]]
    (tmp_path / "t.json").write_text(
        json.dumps([{"step": int(s), "tensor": t, "amax": float(a)} for s, t, a in rows])
    )
    (tmp_path / "t.csv").write_text(SPIKY_CSV)
    code_j, out_j, _ = sim(capsys, str(tmp_path / "t.json"), "--output-format", "json")
    code_c, out_c, _ = sim(capsys, str(tmp_path / "t.csv"), "--output-format", "json")
    dj, dc = json.loads(out_j), json.loads(out_c)
    assert dj.pop("trace").endswith("t.json") and dc.pop("trace").endswith("t.csv")
    assert dj == dc and code_j == code_c == 1


def test_cli_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = sim(capsys, "--synthetic", "--steps", "400", "--output-format", "json")
    d = json.loads(out)
    assert set(d) == {
        "trace", "notes", "skipped_rows", "recipe", "tensors", "overall", "current_scaling",
        "sweep", "recommended",
    }  # fmt: skip
    assert d["recipe"] == {
        "margin": 0, "amax_history_len": 1024, "amax_compute_algo": "max", "format": "hybrid",
        "fnuz": False, "origin": "Transformer Engine's DelayedScaling defaults",
    }  # fmt: skip
    t = d["tensors"][0]
    assert {"tensor", "pass", "fp8_max", "updates", "clipped", "clipped_fraction_worst",
            "clipped_fraction_median", "binades_lost", "zero_amax", "nonfinite_amax",
            "clipped_steps", "clipped_steps_truncated"} == set(t)  # fmt: skip
    assert set(t["binades_lost"]) == {
        "margin_mean", "history_mean", "history_max", "total_mean",
        "updates_with_history_loss_over_1",
    }  # fmt: skip
    assert [x["pass"] for x in d["tensors"]] == ["fwd", "bwd"]
    assert [x["fp8_max"] for x in d["tensors"]] == [448.0, 57344.0]
    assert d["overall"]["updates"] == 800
    assert len(d["sweep"]) == 40
    assert set(d["sweep"][0]) == {
        "margin", "amax_history_len", "amax_compute_algo", "clipped", "clipped_fraction_worst",
        "binades_lost_mean",
    }  # fmt: skip
    assert d["recommended"] is None or d["recommended"]["clipped"] == 0
    assert code == (1 if d["overall"]["clipped"] else 0)
    for step in t["clipped_steps"]:
        assert step["amax"] > step["limit"]
        expected = 1 - step["limit"] / step["amax"]
        assert step["clipped_fraction"] == pytest.approx(expected, abs=1e-6)


def test_cli_synthetic_deterministic_and_exit_zero(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--synthetic", "--steps", "300", "--spike-rate", "0", "--spread", "0.2")
    assert sim(capsys, *args, "--seed", "3")[1] == sim(capsys, *args, "--seed", "3")[1]
    code, out, _ = sim(capsys, *args, "--margin", "4", "--no-sweep")
    assert code == 0 and "Result: 0 of 600 micro-batches clipped." in out
    assert "Sweep" not in out


def test_cli_recipe_from_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "model.yaml"
    cfg.write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1\n")
    _, out, _ = sim(capsys, "--synthetic", "--steps", "50", "--config", str(cfg), "--no-sweep")
    assert (
        "Recipe: margin 1, amax_history_len 1, amax_compute_algo most_recent, format hybrid" in out
    )
    assert "Megatron-LM" in out
    _, out, _ = sim(
        capsys, "--synthetic", "--steps", "50", "--config", str(cfg), "--history", "1024",
        "--algo", "max", "--no-sweep",
    )  # fmt: skip
    assert "margin 1, amax_history_len 1024, amax_compute_algo max" in out
    assert "--history, --algo from the command line" in out
    te = tmp_path / "recipe.py"
    te.write_text(
        "from transformer_engine.common.recipe import DelayedScaling, Format\n"
        "r = DelayedScaling(margin=2, fp8_format=Format.E4M3, amax_history_len=16)\n"
    )
    _, out, _ = sim(capsys, "--synthetic", "--steps", "50", "--config", str(te), "--no-sweep")
    assert "margin 2, amax_history_len 16, amax_compute_algo max, format e4m3" in out
    assert row(out, "synthetic.gradient:bwd")[:3] == ["synthetic.gradient:bwd", "bwd", "448"]


@pytest.mark.parametrize(
    ("files", "argv", "message"),
    [
        ({}, ["--synthetic", "t.csv"], "give a TRACE file or --synthetic"),
        ({}, [], "give a TRACE file or --synthetic"),
        ({}, ["missing.csv"], "missing.csv: no such file"),
        ({"t.csv": "step,tensor,amax\n1,a,x\n"}, ["t.csv"], "t.csv:2: amax must be a number"),
        ({"t.txt": "hello\n"}, ["t.txt"], "cannot tell the trace format"),
        ({}, ["--synthetic", "--history", "0"], "amax_history_len must be at least 1"),
        ({}, ["--synthetic", "--steps", "0"], "--steps must be at least 1"),
        (
            {"c.yaml": "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"},
            ["--synthetic", "--config", "c.yaml"],
            "c.yaml: no delayed-scaling site (the config uses tensorwise)",
        ),
        ({"c.yaml": "model:\n  hidden: 1\n"}, ["--synthetic", "--config", "c.yaml"], "no FP8"),
    ],
)
def test_cli_usage_and_input_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, out, err = sim(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("fp8lint: error: ") and message in err, err


def test_cli_te_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "nvdlfw_inspect_globalrank-0.log").write_text(TE_LOG)
    code, out, _ = sim(capsys, str(tmp_path / "nvdlfw_inspect_globalrank-0.log"), "--no-sweep")
    assert code == 1  # 3.5 then 7.25: a 2.07x step with margin 0
    assert f"{FC1}_activation: 2: 2.071x (51.7%)" in out
    assert "Note: 1 cur_amax value(s) are 0.0000" in out
    assert row(out, f"{FC1}_gradient")[:3] == [f"{FC1}_gradient", "bwd", "57344"]


def test_cli_plot_without_matplotlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    code, out, err = sim(capsys, "--synthetic", "--plot", str(tmp_path / "p.png"))
    assert code == 2 and out == ""
    assert err == (
        "fp8lint: error: --plot needs matplotlib, which is not installed "
        "(install the plot extra; in a checkout: pip install -e '.[plot]')\n"
    )
    assert not (tmp_path / "p.png").exists()


def test_cli_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "p.png"
    code, out, err = sim(capsys, "--synthetic", "--steps", "300", "--plot", str(png))
    assert code in (0, 1) and out.startswith("Trace: synthetic")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert err == f"Wrote {png}.\n"


def test_cli_plot_counts_the_tensors_it_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace of hundreds of tensors: the plot's stderr line is a short count, not a 5 KB
    list of names (issue 13)."""
    names = [f"module.decoder.layers.{i}.self_attention.linear_qkv_activation" for i in range(161)]
    plotted: list[str] = []

    def fake_plot(result: report.Result, path: str) -> list[str]:
        plotted.append(path)
        return names[report.MAX_PLOTTED :]  # what report.plot returns: the names left out

    monkeypatch.setattr(report, "plot", fake_plot)
    monkeypatch.setattr(report, "pyplot", lambda: None)  # matplotlib need not be installed
    png = tmp_path / "p.png"
    code, out, err = sim(capsys, "--synthetic", "--steps", "50", "--no-sweep", "--plot", str(png))
    assert code in (0, 1)
    assert plotted == [str(png)] and out.startswith("Trace: synthetic")
    assert err == f"Wrote {png}: the first 4 tensors, 157 more tensors left out.\n"
    assert names[-1] not in err and err.count("\n") == 1


def test_cli_fnuz_and_explicit_input_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "stats.txt").write_text(TE_LOG)
    code, out, _ = sim(
        capsys, str(tmp_path / "stats.txt"), "--input-format", "te-log", "--fnuz", "--no-sweep"
    )
    assert code == 1
    assert "format hybrid (fnuz)" in out
    assert row(out, f"{FC1}_activation")[:3] == [f"{FC1}_activation", "fwd", "240"]


# --------------------------------------------------------------------------- headroom in findings

HEADROOM_CASES = [
    ("FP8101", "MODEL_ARGS:\n  --fp8-format: hybrid\n", 0.0, "headroom 0 binades"),
    (
        "FP8102",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1\n  --fp8-amax-history-len: 4\n"
        "  --fp8-amax-compute-algo: max\n",
        1.0,
        "headroom 1 binade: an amax over 2x the largest of the last 4 clips",
    ),
    (
        "FP8103",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 2\n  --fp8-amax-history-len: 1024\n",
        2.0,
        "headroom 2 binades, as with a history of 1: an amax over 4x the previous one clips",
    ),
    (
        "FP8103",
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
        "  fp8_margin: ${oc.env:MARGIN}\n  fp8_amax_history_len: 1024\n"
        "  fp8_amax_compute_algo: most_recent\n",
        None,
        "headroom: the margin (not readable here)",
    ),
    (
        "FP8105",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 5\n  --fp8-amax-history-len: 1024\n"
        "  --fp8-amax-compute-algo: max\n",
        5.0,
        "headroom 5 binades (32x)",
    ),
    (
        "FP8106",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1\n  --fp8-amax-history-len: 1024\n"
        "  --fp8-amax-compute-algo: max\n",
        1.0,
        "headroom 1 binade: an amax over 2x the reference amax clips",
    ),
]


@pytest.mark.parametrize(("code", "text", "headroom", "says"), HEADROOM_CASES)
def test_findings_state_the_guaranteed_headroom(
    code: str, text: str, headroom: float | None, says: str
) -> None:
    (d,) = [d for d in lint("c.yaml", text, select=[code]) if d.code == code]
    assert d.headroom_binades == headroom
    assert says in d.note, d.note  # the why is the note; the message is one short line


def test_headroom_matches_the_simulator() -> None:
    """A spike just above 2^m clips, one at 2^m does not, for each margin the rules report."""
    for m in range(5):
        flat = [1.0] * 10
        ok, over = list(flat), list(flat)
        ok[5], over[5] = 2.0**m, 2.0**m * 1.01
        assert scales(ok, m, 1, MR).clipped == []
        assert scales(over, m, 1, MR).clipped_fraction[5] == pytest.approx(1 - 1 / 1.01)


# --------------------------------------------------------------------------- at scale


def test_cli_skips_nan_and_negative_amax_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 13: a NaN or negative amax is reported with its row, the run goes on, and the
    report counts the skipped rows (the old reader stopped at a negative amax)."""
    monkeypatch.setattr(csv_trace, "BLOCK_BYTES", 64)  # the rows are numbered across blocks
    rows = [f"{k},fc1.input:fwd,1.0\n" for k in range(40)]
    rows[2] = "2,fc1.input:fwd,nan\n"
    rows[30] = "30,fc1.input:fwd,-2\n"
    path = tmp_path / "t.csv"
    path.write_text("step,tensor,amax\n" + "".join(rows))
    code, out, _ = sim(capsys, str(path))
    assert code == 0
    assert "(1 tensor, 38 updates)" in out
    assert f"Note: {path}:4: amax is NaN: row skipped" in out
    assert f"Note: {path}:32: amax is negative (-2.0): row skipped" in out
    assert "Note: skipped 2 row(s) with a NaN or negative amax" in out
    code, out, _ = sim(capsys, str(path), "--output-format", "json")
    d = json.loads(out)
    assert d["skipped_rows"] == 2 and d["overall"]["updates"] == 38
    assert d["overall"]["nonfinite_amax"] == 0


def test_cli_skips_a_row_whose_step_is_not_an_integer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 24: one bad step is reported with its line and skipped, like a NaN amax, instead
    of ending the whole run (exit 2)."""
    rows = [f"{k},fc1.input:fwd,1.0\n" for k in range(10)]
    rows[4] = "4.5,fc1.input:fwd,1.0\n"
    rows[6] = "6,fc1.input:fwd,nan\n"
    path = tmp_path / "t.csv"
    path.write_text("step,tensor,amax\n" + "".join(rows))
    code, out, _ = sim(capsys, str(path))
    assert code == 0
    assert "(1 tensor, 8 updates)" in out
    assert f"Note: {path}:6: step must be an integer, got '4.5': row skipped" in out
    assert f"Note: {path}:8: amax is NaN: row skipped" in out
    assert (
        "Note: skipped 2 row(s) with a NaN or negative amax or a step that is not an integer" in out
    )
    code, out, _ = sim(capsys, str(path), "--output-format", "json")
    assert json.loads(out)["skipped_rows"] == 2


def test_plain_reader_numbers_skipped_rows_too() -> None:
    text = "step,tensor,amax\n0,a,1\n\n1,a,-0.5\n2,a,NaN\n"  # a blank line: the plain reader
    trace = read_csv(text, "t.csv")
    assert trace.skipped == 2 and trace.tensors[0].amax == [1.0]
    assert trace.all_notes()[:2] == [
        "t.csv:4: amax is negative (-0.5): row skipped",
        "t.csv:5: amax is NaN: row skipped",
    ]


def test_many_skipped_rows_are_counted_not_all_listed(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        "step,tensor,amax\n" + "".join(f"{k},a,{-k - 1}\n" for k in range(25)) + "25,a,1\n"
    )
    trace = traces.load(str(path))
    report.run(trace, DelayedSetting())
    notes = trace.all_notes()
    assert trace.skipped == 25 and trace.rows == 1
    assert len([n for n in notes if n.endswith("row skipped")]) == traces.MAX_SKIPS_LISTED
    assert "... and 15 more row(s) with a NaN or negative amax" in notes


def test_streamed_csv_error_late_in_the_file_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(csv_trace, "BLOCK_BYTES", 64)
    rows = [f"{k},a,1.0\n" for k in range(200)]
    rows[150] = "150,a,big\n"
    path = tmp_path / "t.csv"
    path.write_text("step,tensor,amax\n" + "".join(rows))
    code, out, err = sim(capsys, str(path))
    assert code == 2 and out == ""
    assert err == f"fp8lint: error: {path}:152: amax must be a number, got 'big'\n"


def test_streamed_csv_with_steps_going_back_matches_the_plain_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(csv_trace, "BLOCK_BYTES", 64)
    amax = [1.0] * 60
    amax[5] = 3.0
    text = "step,tensor,amax\n" + "".join(f"{59 - k},a,{amax[59 - k]}\n" for k in range(60))
    path = tmp_path / "t.csv"
    path.write_text(text)
    streamed = traces.load(str(path))
    assert streamed.streamed
    got = report.run(streamed, DelayedSetting(0, 1, MR))
    want = report.run(read_csv(text, str(path)), DelayedSetting(0, 1, MR))
    assert got.overall.clipped == want.overall.clipped == 1
    assert got.tensors[0].clips.step.tolist() == [5]
    assert report.render_json(got) == report.render_json(want)


def test_cli_without_the_simulate_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    code, out, err = sim(capsys, "--synthetic")
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("fp8lint: error: `fp8lint simulate` needs numpy and pyarrow")
    assert "install the simulate extra (in a checkout: pip install -e '.[simulate]')" in err


def test_progress_bar_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fp8lint.engine import workers

    path = tmp_path / "t.csv"
    path.write_text(SPIKY_CSV)
    monkeypatch.setattr(report, "PROGRESS_BYTES", 0)
    code, out, err = sim(capsys, str(path))
    assert code == 1 and err == ""  # piped: quiet
    monkeypatch.setattr(workers, "_interactive", lambda: True)
    monkeypatch.setattr(workers, "PROGRESS_DELAY_S", 0)
    code, out2, err = sim(capsys, str(path))
    assert code == 1 and out2 == out
    assert "simulating" in err


@pytest.mark.parametrize("force", ["auto", "fwd", "bwd"])
def test_streamed_csv_reads_names_and_passes_as_the_plain_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force: str
) -> None:
    monkeypatch.setattr(csv_trace, "BLOCK_BYTES", 64)
    rows = []
    for k in range(30):
        rows.append(f"{k}, fc1 ,{2.0 if k == 12 else 1.0},fwd,x\n")  # names are stripped
        rows.append(f"{k},fc1.dgrad,0.001,,y\n")  # no pass: from the name
        rows.append(f"{k},fc2:bwd,{0.5 + k % 3},backward,z\n")
    text = "Step, Tensor ,AMAX,pass,note\n"  # the header is read case- and space-blind
    text += "".join(rows)
    path = tmp_path / "t.csv"
    path.write_text(text)
    streamed = traces.load(str(path), force_pass=force)
    assert streamed.streamed
    got = report.render_json(report.run(streamed, DelayedSetting(0, 4, "max")))
    want = report.render_json(
        report.run(read_csv(text, str(path), force), DelayedSetting(0, 4, "max"))
    )
    assert got == want
    assert [t["tensor"] for t in got["tensors"]] == ["fc1", "fc1.dgrad", "fc2:bwd"]
    if force == "auto":
        assert [t["pass"] for t in got["tensors"]] == ["fwd", "bwd", "bwd"]


def test_streamed_csv_pass_conflict_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(csv_trace, "BLOCK_BYTES", 64)
    rows = "".join(f"{k},a,1.0,fwd\n" for k in range(50)) + "50,a,1.0,bwd\n"
    path = tmp_path / "t.csv"
    path.write_text("step,tensor,amax,pass\n" + rows)
    code, _, err = sim(capsys, str(path))
    assert code == 2
    assert err == f"fp8lint: error: {path}:52: tensor 'a' changes pass (fwd and bwd rows)\n"
