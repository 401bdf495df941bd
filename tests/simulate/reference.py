"""The plain implementation of `fp8lint simulate` before it was vectorized, kept as the
oracle of the tests (`test_properties.py` compares the two on random traces): Transformer
Engine's delayed-scaling recurrence as a loop with a monotonic deque, and the summaries and
the sweep as `fp8lint.simulate.report` computed them, from per-micro-batch lists.  The
recurrence itself (TE's fused update, zero and NaN amaxes, when a micro-batch clips) is
described in `fp8lint.simulate.recurrence`.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# the format table and the recipe's knobs are data, not the algorithm under test: shared
from fp8lint.simulate.recurrence import (
    ALGOS,
    FLT_MAX,
    RTOL,
    DelayedSetting,
)


@dataclass
class Replay:
    """One tensor's replay: per micro-batch, the scale it was quantized with and the result."""

    setting: DelayedSetting
    fp8_max: float
    amax: list[float] = field(default_factory=list)
    scale: list[float] = field(default_factory=list)
    # whether `scale` came from an amax (False while TE's initial scale 1 is still in use)
    calibrated: list[bool] = field(default_factory=list)
    # fraction of the outlier lost to saturation, 0.0 when the micro-batch fits
    clipped_fraction: list[float] = field(default_factory=list)

    @property
    def limit(self) -> list[float]:
        """The largest amax each micro-batch could have had without clipping:
        FP8_MAX / scale, i.e. 2^margin × the reference amax of the previous update."""
        return [self.fp8_max / s for s in self.scale]

    @property
    def clipped(self) -> list[int]:
        """Indices of the micro-batches that clipped."""
        return [k for k, f in enumerate(self.clipped_fraction) if f > 0.0]

    def binades_lost(self) -> list[tuple[float, float] | None]:
        """Per micro-batch, (binades lost to the margin, binades lost to the reference being
        above this amax) compared with current scaling, which puts each amax on FP8_MAX.

        None for micro-batches that say nothing about precision: a zero or non-finite amax,
        or a scale that is still TE's initial 1.  A clipped micro-batch loses nothing at the
        bottom (it is scaled too high, not too low)."""
        m = max(self.setting.margin, 0)
        out: list[tuple[float, float] | None] = []
        for a, s, cal in zip(self.amax, self.scale, self.calibrated, strict=True):
            if not cal or not (a > 0.0 and math.isfinite(a)):
                out.append(None)
                continue
            total = max(0.0, math.log2(self.fp8_max / (a * s)))
            margin_part = min(float(m), total)
            out.append((margin_part, total - margin_part))
        return out


def replay(
    amaxes: Sequence[float],
    setting: DelayedSetting,
    fp8_max_value: float,
    *,
    unfused: bool = False,
) -> Replay:
    """Run the delayed-scaling recurrence over one tensor's amax sequence (one per update)."""
    out = Replay(setting, fp8_max_value)
    scaled_max = fp8_max_value * 2.0 ** (-setting.margin)
    use_max = setting.algo == "max"
    length = setting.history
    scale = 1.0
    calibrated = False
    # (position, value): a decreasing deque whose head is the window maximum
    window: deque[tuple[int, float]] = deque()
    rolled = 0
    last_nan = -1 - length  # position of the newest NaN rolled in (unfused path only)
    limit_ok = fp8_max_value * (1.0 + RTOL)
    for a in amaxes:
        out.amax.append(a)
        out.scale.append(scale)
        out.calibrated.append(calibrated)
        x = a * scale
        out.clipped_fraction.append(
            1.0 - fp8_max_value / x if math.isfinite(a) and x > limit_ok else 0.0
        )
        if a == 0.0 and not unfused:
            continue  # fused kernel: no roll, scale kept
        if use_max:
            value = a
            if math.isnan(a):
                # fmaxf skips NaN, and the running maximum starts at 0; torch.max keeps NaN
                value = 0.0
                if unfused:
                    last_nan = rolled
            while window and window[-1][1] <= value:
                window.pop()
            window.append((rolled, value))
            while window[0][0] <= rolled - length:
                window.popleft()
            reference = math.nan if last_nan > rolled - length else window[0][1]
        else:
            reference = a
        rolled += 1
        if math.isfinite(reference) and reference > 0.0:
            scale = min(scaled_max / reference, FLT_MAX)
            calibrated = True
    return out


def current_scaling(amaxes: Sequence[float], fp8_max_value: float) -> list[float]:
    """Per-tensor current scaling: each micro-batch's scale from its own amax (scale 1 when
    the amax is 0 or not finite), so nothing ever clips."""
    return [
        min(fp8_max_value / a, FLT_MAX) if a > 0.0 and math.isfinite(a) else 1.0 for a in amaxes
    ]


# --------------------------------------------------------------------------- the report


MARGINS = (0, 1, 2, 3, 4)
HISTORIES = (1, 16, 128, 1024)
SWEEP = tuple(DelayedSetting(m, h, a) for m in MARGINS for a in ALGOS for h in HISTORIES)


@dataclass
class Summary:
    updates: int = 0
    fractions: list[float] = field(default_factory=list)
    margin_lost: list[float] = field(default_factory=list)
    history_lost: list[float] = field(default_factory=list)
    zero_amax: int = 0
    nonfinite_amax: int = 0

    def add(self, other: Summary) -> None:
        self.updates += other.updates
        self.fractions += other.fractions
        self.margin_lost += other.margin_lost
        self.history_lost += other.history_lost
        self.zero_amax += other.zero_amax
        self.nonfinite_amax += other.nonfinite_amax

    @property
    def lost_mean(self) -> float:
        return _mean(self.margin_lost) + _mean(self.history_lost)

    def as_dict(self) -> dict[str, Any]:
        f = self.fractions
        return {
            "updates": self.updates,
            "clipped": len(f),
            "clipped_fraction_worst": _r(max(f)) if f else None,
            "clipped_fraction_median": _r(statistics.median(f)) if f else None,
            "binades_lost": {
                "margin_mean": _r(_mean(self.margin_lost)),
                "history_mean": _r(_mean(self.history_lost)),
                "history_max": _r(max(self.history_lost, default=0.0)),
                "total_mean": _r(self.lost_mean),
                "updates_with_history_loss_over_1": sum(h >= 1.0 for h in self.history_lost),
            },
            "zero_amax": self.zero_amax,
            "nonfinite_amax": self.nonfinite_amax,
        }


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _r(value: float) -> float:
    return round(value, 6)


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


def run(
    tensors: list[tuple[list[float], float]], setting: DelayedSetting, unfused: bool = False
) -> dict[str, Any]:
    """Per tensor (amaxes in update order, FP8_MAX): the summaries, the overall one and the
    sweep, as the JSON output showed them."""
    per_tensor = []
    overall = Summary()
    for amax, fmax in tensors:
        summary = summarize(replay(amax, setting, fmax, unfused=unfused))
        overall.add(summary)
        per_tensor.append(summary.as_dict())
    sweep = []
    for s in SWEEP:
        total = Summary()
        for amax, fmax in tensors:
            total.add(summarize(replay(amax, s, fmax, unfused=unfused)))
        sweep.append(
            {
                "margin": s.margin,
                "amax_history_len": s.history,
                "amax_compute_algo": s.algo,
                "clipped": len(total.fractions),
                "clipped_fraction_worst": _r(max(total.fractions)) if total.fractions else None,
                "binades_lost_mean": _r(total.lost_mean),
            }
        )
    return {"tensors": per_tensor, "overall": overall.as_dict(), "sweep": sweep}
