"""Transformer Engine's delayed-scaling recurrence, replayed with numpy over whole arrays.

For one quantized tensor (TE keeps one amax history and one scale per tensor slot: input,
weight and output forward; grad-output and grad-input backward) each *update* (an autocast
exit, usually one micro-batch) does:

1. quantize the micro-batch with the current scale ``s_k``; values above ``FP8_MAX / s_k``
   saturate at ``FP8_MAX`` (TE casts saturate silently);
2. record its amax ``a_k`` and roll the history of length ``L``;
3. take the reference amax: the newest entry (``most_recent``) or the largest of the last
   ``L`` entries, the newest included (``max``);
4. set ``s_{k+1} = FP8_MAX / reference / 2^margin`` when the reference is finite and > 0,
   otherwise keep ``s_k``; an infinite scale becomes FLT_MAX.

The history starts as zeros and the scale as 1.  FP8_MAX depends on the pass: 448 (E4M3) or
57344 (E5M2), so under HYBRID 448 forward and 57344 backward; AMD's e4m3fnuz has 240.

This follows TE's fused update (``common/recipe/delayed_scaling.cu``, the bulk kernel that
``FP8GlobalStateManager.reduce_and_update_fp8_tensors`` calls) in two details that the Python
reference (``pytorch/quantization.py``, used with ``NVTE_UNFUSED_FP8_UPDATE=1`` or callable
recipe hooks) does differently; ``unfused=True`` selects the Python behaviour:

* an amax of exactly 0 (a module that did not run, an expert without tokens) leaves the
  history unrolled and the scale unchanged; the Python path rolls a 0 in;
* a NaN amax is skipped by the window maximum (``fmaxf``); the Python path's ``torch.max``
  returns NaN, so the scale is kept.

A micro-batch clips when ``a_k * s_k > FP8_MAX``, i.e. when ``a_k > 2^margin * R_{k-1}`` for
the reference ``R_{k-1}`` of the previous update.  Its largest element is pulled down to
``FP8_MAX / s_k``, so the outlier loses ``1 - FP8_MAX / (a_k * s_k)`` of its magnitude.

Current scaling (``Float8CurrentScaling``) computes the scale from the micro-batch's own amax,
so it never clips and puts the amax exactly on FP8_MAX: it is the reference point for the
binades that delayed scaling loses at the bottom of the range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Mask = NDArray[np.bool_]

FLT_MAX = 3.4028234663852886e38  # float32 max: TE's scale is a float32
FP8_MAX: dict[str, float] = {"e4m3": 448.0, "e5m2": 57344.0, "e4m3fnuz": 240.0, "e5m2fnuz": 57344.0}
FORMATS = ("hybrid", "e4m3", "e5m2")
ALGOS = ("most_recent", "max")
# A product within this relative distance of FP8_MAX fits: float rounding, not clipping.
RTOL = 1e-6


def fp8_max(fmt: str, backward: bool, fnuz: bool = False) -> float:
    """The largest finite value of the FP8 type that a pass uses under a recipe format."""
    if fmt == "hybrid":
        dtype = "e5m2" if backward else "e4m3"
    elif fmt in ("e4m3", "e5m2"):
        dtype = fmt
    else:
        raise ValueError(f"unknown FP8 format {fmt!r} (expected one of {', '.join(FORMATS)})")
    return FP8_MAX[dtype + ("fnuz" if fnuz else "")]


@dataclass(frozen=True, order=True)
class DelayedSetting:
    """The three knobs of delayed scaling that the recurrence depends on."""

    margin: int = 0
    history: int = 1024
    algo: str = "max"

    def __post_init__(self) -> None:
        if self.history < 1:
            raise ValueError(f"amax_history_len must be at least 1, got {self.history}")
        if self.algo not in ALGOS:
            raise ValueError(f"amax_compute_algo must be most_recent or max, got {self.algo!r}")

    @property
    def window(self) -> int:
        """How many amaxes the reference looks at: 1 for `most_recent`, else the history."""
        return 1 if self.algo == "most_recent" else self.history

    def label(self) -> str:
        return (
            f"margin {self.margin}, amax_history_len {self.history}, amax_compute_algo {self.algo}"
        )


def sliding_max(values: F64, width: int) -> F64:
    """`out[j] = max(values[j : j + width])` for every full window."""
    return sliding_maxima(values, [width])[width]


def sliding_maxima(values: F64, widths: Sequence[int]) -> dict[int, F64]:
    """For each width w, `out[w][j] = max(values[j : j + w])` for every full window.

    By doubling: level k holds the maxima of windows of k, and level 2k is the maximum of
    level k and itself shifted by k; a width between two powers of two takes the maximum of
    two overlapping windows of the power below it.  That is log2(w) vectorized passes for
    all the widths together (10 for 1024), each shorter than the last: on a 250,000-value
    chunk, 1.2-1.9 ms per width against 6 ms for a van Herk/Gil-Werman block maximum, whose
    running maxima (`ufunc.accumulate`) do not vectorize."""
    out: dict[int, F64] = {}
    level, k = values, 1
    for w in sorted(set(widths)):
        if w < 1:
            raise ValueError(f"window width must be at least 1, got {w}")
        while 2 * k <= w:
            level = np.maximum(level[:-k], level[k:]) if level.size > k else level[:0]
            k *= 2
        r = w - k
        out[w] = (
            level if r == 0 else np.maximum(level[:-r], level[r:]) if level.size > r else level[:0]
        )
    return out


def group_starts(keys: I64) -> I64:
    """Where each run of equal keys starts in a sorted key array."""
    if keys.size == 0:
        return np.empty(0, dtype=np.int64)
    change = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    return np.concatenate((np.zeros(1, dtype=np.int64), change.astype(np.int64)))


class OutOfOrder(Exception):
    """A streamed chunk holds a step older than one an earlier chunk already replayed."""


@dataclass
class Accumulator:
    """Per-tensor running totals of one setting (what a `Summary` is built from)."""

    clipped: I64
    worst: F64
    margin_sum: F64
    history_sum: F64
    lost_count: I64
    history_max: F64
    history_over_one: I64

    @classmethod
    def empty(cls, n: int) -> Accumulator:
        z = np.zeros(n, dtype=np.float64)
        i = np.zeros(n, dtype=np.int64)
        return cls(i, z.copy(), z.copy(), z.copy(), i.copy(), z.copy(), i.copy())

    def grow(self, n: int) -> None:
        for name, value in vars(self).items():
            if value.size < n:
                extra = np.zeros(n - value.size, dtype=value.dtype)
                setattr(self, name, np.concatenate((value, extra)))


@dataclass
class Clips:
    """The clipped micro-batches of the kept setting, in update order within each tensor."""

    tensor: I64
    step: I64
    amax: F64
    scale: F64
    fraction: F64


@dataclass
class RowDetail:
    """Per-row arrays of the kept setting for one chunk (single-chunk replays only)."""

    scale: F64
    calibrated: Mask
    clipped_fraction: F64
    margin_lost: F64  # NaN where the micro-batch says nothing about precision
    history_lost: F64


class Engine:
    """Replays rows (tensor id, step, amax) for several settings at once, chunk by chunk.

    Each chunk is ordered by (tensor, step) with a stable sort; the state each tensor carries
    into the next chunk is its last `max window - 1` rolled amaxes, and per setting its scale
    and whether that scale came from an amax.  The windowed maximum of a window length is
    computed once per chunk and shared by every margin."""

    def __init__(
        self,
        settings: Sequence[DelayedSetting],
        fmax_of: Sequence[float],
        *,
        unfused: bool = False,
        keep: int | None = None,
        keep_rows: bool = False,
        max_clips: int = 1000,
    ) -> None:
        self.settings = list(settings)
        self.unfused = unfused
        self.keep = keep
        self.keep_rows = keep_rows
        self.max_clips = max_clips
        self.fmax = np.asarray(fmax_of, dtype=np.float64)
        self.tail_len = max(s.window for s in self.settings) - 1
        self.n = 0
        self.tail = np.zeros((0, self.tail_len), dtype=np.float64)
        self.last_step = np.zeros(0, dtype=np.int64)
        self.seen = np.zeros(0, dtype=np.bool_)
        self.updates = np.zeros(0, dtype=np.int64)
        self.zero_amax = np.zeros(0, dtype=np.int64)
        self.nonfinite_amax = np.zeros(0, dtype=np.int64)
        self.scale = [np.zeros(0, dtype=np.float64) for _ in self.settings]
        self.calibrated = [np.zeros(0, dtype=np.bool_) for _ in self.settings]
        self.acc = [Accumulator.empty(0) for _ in self.settings]
        self.fractions: list[tuple[I64, F64]] = []
        self.clip_parts: list[Clips] = []
        self.clip_count = np.zeros(0, dtype=np.int64)
        self.rows: RowDetail | None = None

    def _grow(self, n: int, fmax_of: Sequence[float]) -> None:
        if n <= self.n:
            return
        extra = n - self.n
        self.fmax = np.asarray(fmax_of, dtype=np.float64)[:n]
        self.tail = np.vstack((self.tail, np.zeros((extra, self.tail_len))))
        self.last_step = np.concatenate((self.last_step, np.zeros(extra, dtype=np.int64)))
        self.seen = np.concatenate((self.seen, np.zeros(extra, dtype=np.bool_)))
        for name in ("updates", "zero_amax", "nonfinite_amax", "clip_count"):
            setattr(self, name, np.concatenate((getattr(self, name), np.zeros(extra, np.int64))))
        self.scale = [np.concatenate((s, np.ones(extra))) for s in self.scale]
        self.calibrated = [np.concatenate((c, np.zeros(extra, np.bool_))) for c in self.calibrated]
        for acc in self.acc:
            acc.grow(n)
        self.n = n

    def feed(self, tensor: I64, step: I64, amax: F64, fmax_of: Sequence[float]) -> None:
        """Replay one chunk of rows in file order; `fmax_of[t]` is tensor t's FP8_MAX."""
        self._grow(len(fmax_of), fmax_of)
        n = tensor.size
        if n == 0:
            return
        # stable by tensor (a radix sort for small ids); by (tensor, step) only when a
        # tensor's steps go back inside the chunk
        key = tensor.astype(np.uint16) if self.n <= 1 << 16 else tensor
        order = np.argsort(key, kind="stable")
        t, st = tensor[order], step[order]
        starts = group_starts(t)
        same = t[1:] == t[:-1]
        if np.any(same & (st[1:] < st[:-1])):
            order = np.lexsort((step, tensor))
            t, st = tensor[order], step[order]
        a = amax[order]
        ends = np.concatenate((starts[1:], np.array([n], dtype=np.int64)))
        gt = t[starts]
        if np.any(self.seen[gt] & (st[starts] < self.last_step[gt])):
            raise OutOfOrder
        self.seen[gt] = True
        self.last_step[gt] = st[ends - 1]
        nt = self.n
        finite = np.isfinite(a)
        self.updates[gt] += ends - starts
        self.zero_amax += np.bincount(t[a == 0.0], minlength=nt)
        self.nonfinite_amax += np.bincount(t[~finite], minlength=nt)

        # the updates that roll, laid out per tensor after the history they inherit
        roll = np.arange(n) if self.unfused else np.flatnonzero(a != 0.0)
        rt, rv = t[roll], a[roll]
        rstarts = group_starts(rt)
        g = rstarts.size
        p = self.tail_len
        pos = np.arange(rt.size) + p * (
            np.repeat(np.arange(g), np.diff(np.append(rstarts, rt.size))) + 1
        )
        padded = np.zeros(rt.size + g * p, dtype=np.float64)
        padded[pos] = rv
        rgt = rt[rstarts] if g else rt[:0]
        if p:
            tail_pos = (rstarts + np.arange(g) * p)[:, None] + np.arange(p)[None, :]
            padded[tail_pos] = self.tail[rgt]
        nan = np.isnan(padded)
        values = np.where(nan, 0.0, padded)
        nan_count = np.concatenate(([0], np.cumsum(nan))) if self.unfused else None

        fmax = self.fmax[t]
        positive = (a > 0.0) & finite
        shared = _Shared(
            t=t,
            st=st,
            a=a,
            fmax=fmax,
            limit=fmax * (1.0 + RTOL),
            starts=starts,
            gt=gt,
            nonfinite=np.flatnonzero(~finite),
            nonpositive=np.flatnonzero(~positive),
            positive=positive,
            positive_count=np.add.reduceat(positive, starts, dtype=np.int64),
        )
        windows = sorted({s.window for s in self.settings})
        maxima = sliding_maxima(values, [w for w in windows if w > 1])
        for w in windows:
            if w == 1:
                ref = rv
            else:
                ref = maxima.pop(w)[pos - w + 1]
                if nan_count is not None:
                    ref = np.where(nan_count[pos + 1] - nan_count[pos + 1 - w] > 0, np.nan, ref)
            valid = np.isfinite(ref) & (ref > 0.0)
            ev_rows = roll[valid]
            is_event = np.zeros(n, dtype=np.int64)
            is_event[ev_rows] = 1
            # index (into the events) of the last event before each row, -1 when none
            prev = np.cumsum(is_event) - is_event - 1
            events_before_group = prev[starts] + 1  # events in earlier groups
            last_ev = prev[ends - 1] + is_event[ends - 1]  # last event at or before the end
            done = last_ev >= events_before_group
            # rows with no event before them in their group: up to the group's first event
            first_ev = np.searchsorted(ev_rows, starts)
            after = ev_rows[np.minimum(first_ev, ev_rows.size - 1)] if ev_rows.size else ends
            in_group = (first_ev < ev_rows.size) & (after < ends)
            first_row = np.where(in_group, after, ends - 1)
            lengths = first_row - starts + 1
            offsets = np.repeat(np.cumsum(lengths) - lengths - starts, lengths)
            fresh = np.arange(int(lengths.sum()), dtype=np.int64) - offsets
            win = _Window(
                ev_ref=ref[valid],
                ev_tensor=t[ev_rows],
                prev_at=np.maximum(prev, 0),
                fresh=fresh,
                done=done,
                last_ev=last_ev,
            )
            for si, s in enumerate(self.settings):
                if s.window == w:
                    self._setting(si, s, shared, win)
        if p:
            self._carry_tail(padded, rstarts, rgt, np.diff(np.append(rstarts, rt.size)), p)

    def _carry_tail(self, padded: F64, rstarts: I64, rgt: I64, rcounts: I64, p: int) -> None:
        """Each tensor's last `p` rolled amaxes (inherited history included) for the next chunk."""
        group_end = rstarts + np.arange(rgt.size) * p + p + rcounts
        idx = (group_end - p)[:, None] + np.arange(p)[None, :]
        self.tail[rgt] = padded[idx]

    def _setting(self, si: int, s: DelayedSetting, c: _Shared, w: _Window) -> None:
        t, a = c.t, c.a
        scaled = np.array([float(f) * 2.0 ** (-s.margin) for f in self.fmax], dtype=np.float64)
        cand = np.minimum(scaled[w.ev_tensor] / w.ev_ref, FLT_MAX)
        carried_scale, carried_cal = self.scale[si], self.calibrated[si]
        scale = cand[w.prev_at] if cand.size else np.ones(t.size)
        fresh_t = t[w.fresh]
        scale[w.fresh] = carried_scale[fresh_t]
        uncal = w.fresh[~carried_cal[fresh_t]]  # still on TE's initial scale 1
        done = c.gt[w.done]
        carried_scale[done] = cand[w.last_ev[w.done]]
        carried_cal[done] = True

        x = a * scale
        clip = x > c.limit
        clip[c.nonfinite] = False
        ci = np.flatnonzero(clip)
        frac = 1.0 - c.fmax[ci] / x[ci]
        acc = self.acc[si]
        ct = t[ci]
        cs = group_starts(ct)
        if ci.size:
            acc.clipped[ct[cs]] += np.diff(np.append(cs, ci.size))
            np.maximum.at(acc.worst, ct[cs], np.maximum.reduceat(frac, cs))
        # binades lost at the bottom, over calibrated micro-batches with a positive amax
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            total = np.divide(c.fmax, x)
            np.log2(total, out=total)
        np.maximum(total, 0.0, out=total)
        total[c.nonpositive] = 0.0
        total[uncal] = 0.0
        mpart = np.minimum(total, float(max(s.margin, 0)))
        hpart = np.subtract(total, mpart, out=total)
        g = c.gt
        acc.margin_sum[g] += np.add.reduceat(mpart, c.starts)
        acc.history_sum[g] += np.add.reduceat(hpart, c.starts)
        uncal_positive = uncal[c.positive[uncal]]
        acc.lost_count[g] += c.positive_count - np.bincount(
            np.searchsorted(c.starts, uncal_positive, side="right") - 1,
            minlength=c.starts.size,
        )
        over = np.flatnonzero(hpart >= 1.0)
        acc.history_over_one[g] += np.diff(np.searchsorted(over, np.append(c.starts, t.size)))
        np.maximum.at(acc.history_max, g, np.maximum.reduceat(hpart, c.starts))
        if si != self.keep:
            return
        self.fractions.append((ct, frac))
        if ci.size:
            rank = np.arange(ci.size) - np.repeat(cs, np.diff(np.append(cs, ci.size)))
            take = rank < (self.max_clips - self.clip_count[ct])
            k = ci[take]
            self.clip_parts.append(Clips(t[k], c.st[k], a[k], scale[k], frac[take]))
            self.clip_count += np.bincount(ct, minlength=self.n)
        if self.keep_rows:
            lv = c.positive.copy()
            lv[uncal] = False
            cal = np.ones(t.size, dtype=np.bool_)
            cal[uncal] = False
            fr = np.zeros(t.size)
            fr[ci] = frac
            self.rows = RowDetail(
                scale, cal, fr, np.where(lv, mpart, np.nan), np.where(lv, hpart, np.nan)
            )


@dataclass
class _Shared:
    """The arrays of one chunk that every setting reads (rows sorted by tensor, step)."""

    t: I64
    st: I64
    a: F64
    fmax: F64  # per row
    limit: F64  # per row: FP8_MAX (1 + RTOL), above which a product clips
    starts: I64  # where each tensor's rows start
    gt: I64  # the tensor of each group
    nonfinite: I64  # rows whose amax is not finite
    nonpositive: I64  # rows whose amax is 0 or not finite
    positive: Mask
    positive_count: I64  # per group


@dataclass
class _Window:
    """What every margin of one window length shares: the events (updates whose reference
    is finite and > 0), per row the last event before it, and the rows with none before
    them in their tensor (they keep the scale carried in)."""

    ev_ref: F64
    ev_tensor: I64
    prev_at: I64
    fresh: I64
    done: Mask
    last_ev: I64


@dataclass
class Replay:
    """One tensor's replay: per micro-batch, the scale it was quantized with and the result."""

    setting: DelayedSetting
    fp8_max: float
    amax: F64
    scale: F64
    # whether `scale` came from an amax (False while TE's initial scale 1 is still in use)
    calibrated: Mask
    # fraction of the outlier lost to saturation, 0.0 when the micro-batch fits
    clipped_fraction: F64
    margin_lost: F64
    history_lost: F64

    @property
    def limit(self) -> F64:
        """The largest amax each micro-batch could have had without clipping:
        FP8_MAX / scale, i.e. 2^margin × the reference amax of the previous update."""
        out: F64 = self.fp8_max / self.scale
        return out

    @property
    def clipped(self) -> I64:
        """Indices of the micro-batches that clipped."""
        return np.flatnonzero(self.clipped_fraction > 0.0).astype(np.int64)

    def binades_lost(self) -> list[tuple[float, float] | None]:
        """Per micro-batch, (binades lost to the margin, binades lost to the reference being
        above this amax) compared with current scaling, which puts each amax on FP8_MAX.

        None for micro-batches that say nothing about precision: a zero or non-finite amax,
        or a scale that is still TE's initial 1.  A clipped micro-batch loses nothing at the
        bottom (it is scaled too high, not too low)."""
        return [
            None if math.isnan(m) else (m, h)
            for m, h in zip(self.margin_lost.tolist(), self.history_lost.tolist(), strict=True)
        ]


def replay(
    amaxes: Sequence[float] | F64,
    setting: DelayedSetting,
    fp8_max_value: float,
    *,
    unfused: bool = False,
) -> Replay:
    """Run the delayed-scaling recurrence over one tensor's amax sequence (one per update)."""
    a = np.asarray(amaxes, dtype=np.float64)
    engine = Engine([setting], [fp8_max_value], unfused=unfused, keep=0, keep_rows=True)
    engine.feed(
        np.zeros(a.size, dtype=np.int64), np.arange(a.size, dtype=np.int64), a, [fp8_max_value]
    )
    rows = engine.rows
    if rows is None:  # an empty sequence
        e = np.empty(0)
        return Replay(setting, fp8_max_value, a, e, np.empty(0, np.bool_), e, e, e)
    return Replay(
        setting,
        fp8_max_value,
        a,
        rows.scale,
        rows.calibrated,
        rows.clipped_fraction,
        rows.margin_lost,
        rows.history_lost,
    )


def current_scaling(amaxes: Sequence[float] | F64, fp8_max_value: float) -> F64:
    """Per-tensor current scaling: each micro-batch's scale from its own amax (scale 1 when
    the amax is 0 or not finite), so nothing ever clips."""
    a = np.asarray(amaxes, dtype=np.float64)
    ok = (a > 0.0) & np.isfinite(a)
    out: F64 = np.ones(a.size)
    out[ok] = np.minimum(fp8_max_value / a[ok], FLT_MAX)
    return out
