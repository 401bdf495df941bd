"""Replaying a trace through a recipe: per-tensor summaries, the sweep, text/JSON and a plot.

`run` makes one pass over the trace's rows (streamed in chunks for a CSV) with the recipe and
every distinct (margin, window) of the sweep at once, so a trace of any length costs memory
for its tensors, not its rows: summaries are totals, and only the recipe's clipped fractions
(for their median) and its first clipped micro-batches per tensor are kept."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fp8lint.simulate.recurrence import (
    ALGOS,
    Clips,
    DelayedSetting,
    Engine,
    OutOfOrder,
    Replay,
    fp8_max,
    replay,
)
from fp8lint.simulate.traces import F64, Reread, Trace

MARGINS = (0, 1, 2, 3, 4)
HISTORIES = (1, 16, 128, 1024)
SWEEP = tuple(DelayedSetting(m, h, a) for m in MARGINS for a in ALGOS for h in HISTORIES)
MAX_LISTED_CLIPS = 1000  # per tensor in the JSON output
MAX_PLOTTED = 4  # tensors in one plot
PROGRESS_BYTES = 64 << 20  # streamed traces at least this large show a progress bar


@dataclass
class Summary:
    """What one replay (or several, merged) did to the micro-batches: totals, so that a
    trace of any length summarizes in constant memory (the clipped fractions are kept only
    for the recipe's own replay, for their median)."""

    updates: int = 0
    clipped: int = 0
    worst: float | None = None  # the largest clipped fraction
    fractions: F64 | None = None  # every clipped fraction, when kept
    margin_sum: float = 0.0
    history_sum: float = 0.0
    lost_count: int = 0  # micro-batches that say something about precision
    history_max: float = 0.0
    history_over_one: int = 0
    zero_amax: int = 0
    nonfinite_amax: int = 0

    @property
    def median(self) -> float | None:
        if self.fractions is None or not self.fractions.size:
            return None
        return float(np.median(self.fractions))

    @property
    def margin_mean(self) -> float:
        return self.margin_sum / self.lost_count if self.lost_count else 0.0

    @property
    def history_mean(self) -> float:
        return self.history_sum / self.lost_count if self.lost_count else 0.0

    @property
    def lost_mean(self) -> float:
        """Mean binades lost at the bottom, margin and history together."""
        return self.margin_mean + self.history_mean

    def add(self, other: Summary) -> None:
        self.updates += other.updates
        self.clipped += other.clipped
        if other.worst is not None:
            self.worst = other.worst if self.worst is None else max(self.worst, other.worst)
        if other.fractions is not None:
            kept = self.fractions if self.fractions is not None else np.empty(0)
            self.fractions = np.concatenate((kept, other.fractions))
        self.margin_sum += other.margin_sum
        self.history_sum += other.history_sum
        self.lost_count += other.lost_count
        self.history_max = max(self.history_max, other.history_max)
        self.history_over_one += other.history_over_one
        self.zero_amax += other.zero_amax
        self.nonfinite_amax += other.nonfinite_amax

    def as_dict(self) -> dict[str, Any]:
        return {
            "updates": self.updates,
            "clipped": self.clipped,
            "clipped_fraction_worst": _r(self.worst),
            "clipped_fraction_median": _r(self.median),
            "binades_lost": {
                "margin_mean": _r(self.margin_mean),
                "history_mean": _r(self.history_mean),
                "history_max": _r(self.history_max),
                "total_mean": _r(self.lost_mean),
                "updates_with_history_loss_over_1": self.history_over_one,
            },
            "zero_amax": self.zero_amax,
            "nonfinite_amax": self.nonfinite_amax,
        }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def summarize(rep: Replay) -> Summary:
    """The summary of one in-memory replay."""
    fractions = rep.clipped_fraction[rep.clipped_fraction > 0.0]
    ok = ~np.isnan(rep.margin_lost)
    hist = rep.history_lost[ok]
    return Summary(
        updates=int(rep.amax.size),
        clipped=int(fractions.size),
        worst=float(fractions.max()) if fractions.size else None,
        fractions=fractions,
        margin_sum=float(rep.margin_lost[ok].sum()),
        history_sum=float(hist.sum()),
        lost_count=int(ok.sum()),
        history_max=float(hist.max()) if hist.size else 0.0,
        history_over_one=int((hist >= 1.0).sum()),
        zero_amax=int((rep.amax == 0.0).sum()),
        nonfinite_amax=int((~np.isfinite(rep.amax)).sum()),
    )


@dataclass
class TensorResult:
    name: str
    backward: bool
    fp8_max: float
    summary: Summary
    clips: Clips  # the first MAX_LISTED_CLIPS clipped micro-batches

    @property
    def pass_name(self) -> str:
        return "bwd" if self.backward else "fwd"


@dataclass
class SweepRow:
    setting: DelayedSetting
    summary: Summary

    def key(self) -> tuple[float, int, int, int]:
        """The order of "cheapest": fewest mean binades lost at the bottom; ties go to the
        smaller margin, the shorter history, then most_recent before max."""
        s = self.setting
        return (round(self.summary.lost_mean, 9), s.margin, s.history, ALGOS.index(s.algo))

    def as_dict(self) -> dict[str, Any]:
        return {
            "margin": self.setting.margin,
            "amax_history_len": self.setting.history,
            "amax_compute_algo": self.setting.algo,
            "clipped": self.summary.clipped,
            "clipped_fraction_worst": _r(self.summary.worst),
            "binades_lost_mean": _r(self.summary.lost_mean),
        }


@dataclass
class Result:
    trace: Trace
    setting: DelayedSetting
    fmt: str
    fnuz: bool
    origin: str
    tensors: list[TensorResult]
    overall: Summary
    sweep: list[SweepRow]
    unfused: bool = False

    @property
    def recommended(self) -> SweepRow | None:
        clean = [row for row in self.sweep if row.summary.clipped == 0]
        return min(clean, key=SweepRow.key) if clean else None


def run(
    trace: Trace,
    setting: DelayedSetting,
    fmt: str = "hybrid",
    *,
    fnuz: bool = False,
    origin: str = "",
    sweep: bool = True,
    unfused: bool = False,
) -> Result:
    """Replay every tensor of the trace through `setting`, and through the sweep grid, in one
    pass over the rows.  A streamed CSV that the fast reader cannot take, or whose steps go
    back across blocks, is replayed again from memory (same results)."""
    try:
        return _run(trace, setting, fmt, fnuz, origin, sweep, unfused)
    except OutOfOrder:
        try:
            trace = trace.materialize()
        except Reread:
            trace = trace.reread()
    except Reread:
        trace = trace.reread()
    return _run(trace, setting, fmt, fnuz, origin, sweep, unfused)


def _run(
    trace: Trace,
    setting: DelayedSetting,
    fmt: str,
    fnuz: bool,
    origin: str,
    sweep: bool,
    unfused: bool,
) -> Result:
    # one replay per (margin, window): most_recent ignores the history, max over 1 is the
    # same, and the recipe's own replay serves its cell of the sweep
    index: dict[tuple[int, int], int] = {(setting.margin, setting.window): 0}
    settings = [setting]
    for s in SWEEP if sweep else ():
        if (s.margin, s.window) not in index:
            index[(s.margin, s.window)] = len(settings)
            settings.append(s)
    engine = Engine(settings, [], unfused=unfused, keep=0, max_clips=MAX_LISTED_CLIPS)
    with _progress(trace) as update:
        trace.progress = update
        for t, st, a in trace.chunks():
            fmax_of = [fp8_max(fmt, b, fnuz) for b in trace.backward]
            engine.feed(t, st, a, fmax_of)
        trace.progress = None
    fmax_of = [fp8_max(fmt, b, fnuz) for b in trace.backward]
    engine.feed(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), fmax_of)
    summaries = [_summaries(engine, k) for k in range(len(settings))]
    fractions = _fractions(engine)
    clips = _clips(engine)
    tensors = []
    overall = Summary()
    for i, name in enumerate(trace.names):
        summary = summaries[0][i]
        summary.fractions = fractions[i]
        overall.add(summary)
        tensors.append(
            TensorResult(name, trace.backward[i], float(engine.fmax[i]), summary, clips[i])
        )
    overall.fractions = overall.fractions if overall.fractions is not None else np.empty(0)
    rows = []
    if sweep:
        totals: dict[tuple[int, int], Summary] = {}
        for key, k in index.items():
            total = Summary()
            for part in summaries[k]:
                total.add(part)
            total.fractions = None  # the sweep shows no median
            totals[key] = total
        rows = [SweepRow(s, totals[(s.margin, s.window)]) for s in SWEEP]
    return Result(trace, setting, fmt, fnuz, origin, tensors, overall, rows, unfused)


def _summaries(engine: Engine, k: int) -> list[Summary]:
    acc = engine.acc[k]
    out = []
    for i in range(engine.n):
        clipped = int(acc.clipped[i])
        out.append(
            Summary(
                updates=int(engine.updates[i]),
                clipped=clipped,
                worst=float(acc.worst[i]) if clipped else None,
                margin_sum=float(acc.margin_sum[i]),
                history_sum=float(acc.history_sum[i]),
                lost_count=int(acc.lost_count[i]),
                history_max=float(acc.history_max[i]),
                history_over_one=int(acc.history_over_one[i]),
                zero_amax=int(engine.zero_amax[i]),
                nonfinite_amax=int(engine.nonfinite_amax[i]),
            )
        )
    return out


def _fractions(engine: Engine) -> list[F64]:
    """Per tensor, the clipped fractions of the recipe's replay."""
    if engine.fractions:
        t = np.concatenate([p[0] for p in engine.fractions])
        f = np.concatenate([p[1] for p in engine.fractions])
    else:
        t, f = np.empty(0, np.int64), np.empty(0)
    order = np.argsort(t, kind="stable")
    t, f = t[order], f[order]
    bounds = np.searchsorted(t, np.arange(engine.n + 1))
    return [f[bounds[i] : bounds[i + 1]] for i in range(engine.n)]


def _clips(engine: Engine) -> list[Clips]:
    """Per tensor, its first clipped micro-batches in update order."""
    parts = engine.clip_parts
    e64, ef = np.empty(0, np.int64), np.empty(0)
    cat = (
        Clips(*(np.concatenate([getattr(p, f) for p in parts]) for f in vars(parts[0])))
        if parts
        else Clips(e64, e64, ef, ef, ef)
    )
    order = np.argsort(cat.tensor, kind="stable")
    cat = Clips(*(getattr(cat, f)[order] for f in vars(cat)))
    bounds = np.searchsorted(cat.tensor, np.arange(engine.n + 1))
    return [
        Clips(*(getattr(cat, f)[bounds[i] : bounds[i + 1]] for f in vars(cat)))
        for i in range(engine.n)
    ]


class _progress:
    """A byte-counting progress bar for a large streamed trace, on a terminal only."""

    def __init__(self, trace: Trace) -> None:
        self.bar: Any = None
        self.done = 0
        if trace.streamed and trace.size >= PROGRESS_BYTES:
            from fp8lint.engine.workers import Progress

            self.bar = Progress(trace.size, "simulating", unit="B")

    def __enter__(self) -> Callable[[int], None]:
        return self.update

    def update(self, position: int) -> None:
        if self.bar is not None and position > self.done:
            self.bar.update(position - self.done)
            self.done = position

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


# --------------------------------------------------------------------------- text


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _num(value: float) -> str:
    return f"{value:g}" if value < 1e6 else f"{value:.3g}"


def render_text(result: Result) -> str:
    trace, s = result.trace, result.setting
    out = [
        f"Trace: {trace.source} ({_plural(len(trace.names), 'tensor')}, "
        f"{_plural(trace.updates, 'update')})",
        f"Recipe: {s.label()}, format {result.fmt}{' (fnuz)' if result.fnuz else ''}"
        + (f" ({result.origin})" if result.origin else ""),
    ]
    out += [f"Note: {n}" for n in trace.all_notes()]
    out.append("")
    rows: list[tuple[str, ...]] = [
        (
            "tensor",
            "pass",
            "FP8_MAX",
            "updates",
            "clipped",
            "worst",
            "median",
            "margin",
            "history mean/max",
            ">=1 binade",
        )
    ]
    for tr in result.tensors:
        rows.append(_row(tr.name, tr.pass_name, _num(tr.fp8_max), tr.summary))
    if len(result.tensors) > 1:
        rows.append(_row("all tensors", "", "", result.overall))
    out += _table(rows, right=(2, 3, 4, 5, 6, 7, 8, 9))
    out += [
        "",
        "worst/median: the share of the outlier's magnitude lost to saturation, over the clipped",
        "micro-batches (1 - 2^margin/g for an amax g times the reference). margin/history:",
        "binades lost at the bottom of the range compared with current scaling (which never",
        "clips), to the margin and to a reference amax above the micro-batch's own (after a",
        "spike of g under max, log2 g binades for up to amax_history_len micro-batches).",
    ]
    clipped = [tr for tr in result.tensors if tr.summary.clipped]
    if clipped:
        out += ["", "First clipped micro-batches (step: amax / largest amax that fits, lost):"]
        for tr in clipped:
            c = tr.clips
            shown = ", ".join(
                f"{int(c.step[k])}: {float(c.amax[k] * c.scale[k]) / tr.fp8_max:.3f}x"
                f" ({_pct(float(c.fraction[k]))})"
                for k in range(min(5, c.step.size))
            )
            n = tr.summary.clipped
            more = f", ... ({n - 5} more)" if n > 5 else ""
            out.append(f"  {tr.name}: {shown}{more}")
    if result.sweep:
        out += ["", "Sweep: micro-batches clipped / mean binades lost at the bottom"]
        grid: list[tuple[str, ...]] = [("margin", "algo", *(f"L={h}" for h in HISTORIES))]
        for m in MARGINS:
            for algo in ALGOS:
                cells = []
                for h in HISTORIES:
                    row = next(r for r in result.sweep if r.setting == DelayedSetting(m, h, algo))
                    cells.append(f"{row.summary.clipped} / {row.summary.lost_mean:.2f}")
                grid.append((str(m), algo, *cells))
        out += _table(grid, right=(2, 3, 4, 5))
        best = result.recommended
        out.append("")
        if best is None:
            out.append(
                "Every swept setting clips on this trace: consider current scaling "
                "(tensorwise), block scaling or MXFP8, which do not clip by construction."
            )
        else:
            out.append(
                f"Cheapest setting that clips nothing on this trace: {best.setting.label()} "
                f"({best.summary.lost_mean:.2f} binades lost at the bottom on average)."
            )
        out.append(
            '"Cheapest" = fewest mean binades lost at the bottom; ties go to the smaller '
            "margin, the shorter history, then most_recent."
        )
    o = result.overall
    out += [
        "",
        f"Result: {o.clipped} of {o.updates} micro-batches clipped"
        + (f" (worst {_pct(o.worst)} of the outlier lost)." if o.clipped else "."),
    ]
    return "\n".join(out) + "\n"


def _row(name: str, pass_name: str, fmax: str, s: Summary) -> tuple[str, ...]:
    return (
        name,
        pass_name,
        fmax,
        str(s.updates),
        str(s.clipped),
        _pct(s.worst),
        _pct(s.median),
        f"{s.margin_mean:.2f}",
        f"{s.history_mean:.2f} / {s.history_max:.2f}",
        str(s.history_over_one),
    )


def _table(rows: list[tuple[str, ...]], right: tuple[int, ...]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


# --------------------------------------------------------------------------- JSON


def render_json(result: Result) -> dict[str, Any]:
    s = result.setting
    best = result.recommended
    return {
        "trace": result.trace.source,
        "notes": result.trace.all_notes(),
        "skipped_rows": result.trace.skipped,
        "recipe": {
            "margin": s.margin,
            "amax_history_len": s.history,
            "amax_compute_algo": s.algo,
            "format": result.fmt,
            "fnuz": result.fnuz,
            "origin": result.origin,
        },
        "tensors": [_tensor_json(tr) for tr in result.tensors],
        "overall": result.overall.as_dict(),
        "current_scaling": {"clipped": 0, "binades_lost_mean": 0.0},
        "sweep": [row.as_dict() for row in result.sweep],
        "recommended": best.as_dict() if best is not None else None,
    }


def _tensor_json(tr: TensorResult) -> dict[str, Any]:
    c = tr.clips
    return {
        "tensor": tr.name,
        "pass": tr.pass_name,
        "fp8_max": tr.fp8_max,
        **tr.summary.as_dict(),
        "clipped_steps": [
            {"step": step, "amax": amax, "limit": tr.fp8_max / scale, "clipped_fraction": _r(f)}
            for step, amax, scale, f in zip(
                c.step.tolist()[:MAX_LISTED_CLIPS],
                c.amax.tolist(),
                c.scale.tolist(),
                c.fraction.tolist(),
                strict=False,
            )
        ],
        "clipped_steps_truncated": tr.summary.clipped > MAX_LISTED_CLIPS,
    }


# --------------------------------------------------------------------------- plot


class PlotUnavailable(Exception):
    pass


def pyplot() -> Any:
    """matplotlib.pyplot with the file-only backend, or PlotUnavailable."""
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise PlotUnavailable(
            "--plot needs matplotlib, which is not installed "
            "(install the plot extra; in a checkout: pip install -e '.[plot]')"
        ) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def plot(result: Result, path: str) -> list[str]:
    """Write a PNG: per tensor, amax, the largest amax that fits (2^margin × reference amax)
    under the recipe and under the recommended setting, and the clipped micro-batches."""
    plt = pyplot()
    shown = result.tensors[:MAX_PLOTTED]
    traces = result.trace.tensors[:MAX_PLOTTED]
    best = result.recommended
    fig, axes = plt.subplots(len(shown), 1, figsize=(8, 2.4 * len(shown) + 0.6), squeeze=False)
    for ax, tr, tt in zip(axes[:, 0], shown, traces, strict=True):
        steps = tt.steps
        rep = replay(tt.amax, result.setting, tr.fp8_max, unfused=result.unfused)
        ax.semilogy(steps, tt.amax, color="0.35", lw=0.8, label="amax")
        ax.step(
            steps,
            _calibrated_limit(rep),
            where="post",
            color="tab:blue",
            lw=1.0,
            label=f"2^margin x reference amax ({_short(result.setting)})",
        )
        if best is not None and best.setting != result.setting:
            other = replay(tt.amax, best.setting, rep.fp8_max, unfused=result.unfused)
            ax.step(
                steps,
                _calibrated_limit(other),
                where="post",
                color="tab:green",
                lw=1.0,
                ls="--",
                label=f"cheapest clean ({_short(best.setting)})",
            )
        clips = rep.clipped.tolist()
        if clips:
            ax.scatter(
                [steps[k] for k in clips],
                [tt.amax[k] for k in clips],
                s=14,
                color="tab:red",
                marker="x",
                zorder=3,
                label=f"clipped ({len(clips)})",
            )
        ax.set_title(f"{tr.name} ({tr.pass_name}, FP8_MAX {_num(rep.fp8_max)})", fontsize=9)
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * (high / low) ** 0.4)  # room for the legend above the data
        ax.set_ylabel("amax", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="upper left", ncol=2)
        ax.grid(True, which="major", alpha=0.3)
    axes[-1, 0].set_xlabel("step (one update per micro-batch)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    left = [tr.name for tr in result.tensors[MAX_PLOTTED:]]
    return left


def _calibrated_limit(rep: Replay) -> list[float]:
    """The limit per micro-batch, NaN (not drawn) while TE's initial scale 1 is in use."""
    out: list[float] = np.where(rep.calibrated, rep.limit, math.nan).tolist()
    return out


def _short(s: DelayedSetting) -> str:
    return f"m={s.margin}, L={s.history}, {s.algo}"
