"""Replaying a trace through a recipe: per-tensor summaries, the sweep, text/JSON and a plot."""

from __future__ import annotations

import importlib
import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from fp8lint.simulate.recurrence import ALGOS, DelayedSetting, Replay, fp8_max, replay
from fp8lint.simulate.traces import TensorTrace, Trace

MARGINS = (0, 1, 2, 3, 4)
HISTORIES = (1, 16, 128, 1024)
SWEEP = tuple(DelayedSetting(m, h, a) for m in MARGINS for a in ALGOS for h in HISTORIES)
MAX_LISTED_CLIPS = 1000  # per tensor in the JSON output
MAX_PLOTTED = 4  # tensors in one plot


@dataclass
class Summary:
    """What one replay (or several, merged) did to the micro-batches."""

    updates: int = 0
    fractions: list[float] = field(default_factory=list)  # clipped fraction of each clip
    margin_lost: list[float] = field(default_factory=list)
    history_lost: list[float] = field(default_factory=list)
    zero_amax: int = 0
    nonfinite_amax: int = 0

    @property
    def clipped(self) -> int:
        return len(self.fractions)

    @property
    def worst(self) -> float | None:
        return max(self.fractions) if self.fractions else None

    @property
    def median(self) -> float | None:
        return statistics.median(self.fractions) if self.fractions else None

    @property
    def margin_mean(self) -> float:
        return _mean(self.margin_lost)

    @property
    def history_mean(self) -> float:
        return _mean(self.history_lost)

    @property
    def history_max(self) -> float:
        return max(self.history_lost, default=0.0)

    @property
    def lost_mean(self) -> float:
        """Mean binades lost at the bottom, margin and history together."""
        return self.margin_mean + self.history_mean

    @property
    def history_over_one(self) -> int:
        """Micro-batches that lost at least one binade to the reference sitting above them."""
        return sum(h >= 1.0 for h in self.history_lost)

    def add(self, other: Summary) -> None:
        self.updates += other.updates
        self.fractions += other.fractions
        self.margin_lost += other.margin_lost
        self.history_lost += other.history_lost
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


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def summarize(rep: Replay) -> Summary:
    s = Summary(updates=len(rep.amax))
    s.fractions = [f for f in rep.clipped_fraction if f > 0.0]
    for lost in rep.binades_lost():
        if lost is not None:
            s.margin_lost.append(lost[0])
            s.history_lost.append(lost[1])
    s.zero_amax = sum(a == 0.0 for a in rep.amax)
    s.nonfinite_amax = sum(not math.isfinite(a) for a in rep.amax)
    return s


@dataclass
class TensorResult:
    trace: TensorTrace
    replay: Replay
    summary: Summary


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
    """Replay every tensor of the trace through `setting`, and through the sweep grid."""
    tensors = []
    overall = Summary()
    for t in trace.tensors:
        rep = replay(t.amax, setting, fp8_max(fmt, t.backward, fnuz), unfused=unfused)
        summary = summarize(rep)
        overall.add(summary)
        tensors.append(TensorResult(t, rep, summary))
    rows = []
    if sweep:
        cache: dict[tuple[int, int], Summary] = {}
        for s in SWEEP:
            key = (s.margin, s.window)  # most_recent ignores the history; max over 1 is the same
            if key not in cache:
                total = Summary()
                for t in trace.tensors:
                    rep = replay(t.amax, s, fp8_max(fmt, t.backward, fnuz), unfused=unfused)
                    total.add(summarize(rep))
                cache[key] = total
            rows.append(SweepRow(s, cache[key]))
    return Result(trace, setting, fmt, fnuz, origin, tensors, overall, rows, unfused)


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
        f"Trace: {trace.source} ({_plural(len(trace.tensors), 'tensor')}, "
        f"{_plural(trace.updates, 'update')})",
        f"Recipe: {s.label()}, format {result.fmt}{' (fnuz)' if result.fnuz else ''}"
        + (f" ({result.origin})" if result.origin else ""),
    ]
    out += [f"Note: {n}" for n in trace.notes]
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
        rows.append(_row(tr.trace.name, tr.trace.pass_name, _num(tr.replay.fp8_max), tr.summary))
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
            rep = tr.replay
            idx = rep.clipped
            shown = ", ".join(
                f"{tr.trace.steps[k]}: {rep.amax[k] * rep.scale[k] / rep.fp8_max:.3f}x"
                f" ({_pct(rep.clipped_fraction[k])})"
                for k in idx[:5]
            )
            more = f", ... ({len(idx) - 5} more)" if len(idx) > 5 else ""
            out.append(f"  {tr.trace.name}: {shown}{more}")
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
        "notes": result.trace.notes,
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
    rep = tr.replay
    clips = rep.clipped
    return {
        "tensor": tr.trace.name,
        "pass": tr.trace.pass_name,
        "fp8_max": rep.fp8_max,
        **tr.summary.as_dict(),
        "clipped_steps": [
            {
                "step": tr.trace.steps[k],
                "amax": rep.amax[k],
                "limit": rep.fp8_max / rep.scale[k],
                "clipped_fraction": _r(rep.clipped_fraction[k]),
            }
            for k in clips[:MAX_LISTED_CLIPS]
        ],
        "clipped_steps_truncated": len(clips) > MAX_LISTED_CLIPS,
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
            "--plot needs matplotlib, which is not installed (pip install 'fp8lint[plot]')"
        ) from None
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


def plot(result: Result, path: str) -> list[str]:
    """Write a PNG: per tensor, amax, the largest amax that fits (2^margin × reference amax)
    under the recipe and under the recommended setting, and the clipped micro-batches."""
    plt = pyplot()
    shown = result.tensors[:MAX_PLOTTED]
    best = result.recommended
    fig, axes = plt.subplots(len(shown), 1, figsize=(8, 2.4 * len(shown) + 0.6), squeeze=False)
    for ax, tr in zip(axes[:, 0], shown, strict=True):
        steps, rep = tr.trace.steps, tr.replay
        ax.semilogy(steps, rep.amax, color="0.35", lw=0.8, label="amax")
        ax.step(
            steps,
            _calibrated_limit(rep),
            where="post",
            color="tab:blue",
            lw=1.0,
            label=f"2^margin x reference amax ({_short(result.setting)})",
        )
        if best is not None and best.setting != result.setting:
            other = replay(tr.trace.amax, best.setting, rep.fp8_max, unfused=result.unfused)
            ax.step(
                steps,
                _calibrated_limit(other),
                where="post",
                color="tab:green",
                lw=1.0,
                ls="--",
                label=f"cheapest clean ({_short(best.setting)})",
            )
        clips = rep.clipped
        if clips:
            ax.scatter(
                [steps[k] for k in clips],
                [rep.amax[k] for k in clips],
                s=14,
                color="tab:red",
                marker="x",
                zorder=3,
                label=f"clipped ({len(clips)})",
            )
        ax.set_title(
            f"{tr.trace.name} ({tr.trace.pass_name}, FP8_MAX {_num(rep.fp8_max)})", fontsize=9
        )
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
    left = [tr.trace.name for tr in result.tensors[MAX_PLOTTED:]]
    return left


def _calibrated_limit(rep: Replay) -> list[float]:
    """The limit per micro-batch, NaN (not drawn) while TE's initial scale 1 is in use."""
    return [x if cal else math.nan for x, cal in zip(rep.limit, rep.calibrated, strict=True)]


def _short(s: DelayedSetting) -> str:
    return f"m={s.margin}, L={s.history}, {s.algo}"
