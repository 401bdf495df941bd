"""The synthetic trace: a seeded log-normal amax stream with drift and spikes."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from fp8lint.simulate.traces.base import TensorTrace, Trace, TraceError


@dataclass(frozen=True)
class SyntheticSpec:
    """A log-normal amax stream with drift and multiplicative spikes.

    log2 amax_k = log2 base + drift * k / steps + spread * z_k, z_k ~ N(0, 1) i.i.d.; with
    probability `spike_rate` a micro-batch's amax is multiplied by `spike_size`.  One forward
    tensor (base 8) and one backward tensor (base 2^-10) are drawn, in that order, from one
    seeded generator, so a spec always gives the same trace.
    """

    steps: int = 2000
    spread: float = 0.1
    drift: float = 0.0
    spike_size: float = 4.0
    spike_rate: float = 0.002
    seed: int = 0

    def check(self) -> None:
        if self.steps < 1:
            raise TraceError(f"--steps must be at least 1, got {self.steps}")
        if self.spread < 0:
            raise TraceError(f"--spread must not be negative, got {self.spread}")
        if not self.spike_size >= 1.0 or not math.isfinite(self.spike_size):
            raise TraceError(f"--spike-size must be a finite number >= 1, got {self.spike_size}")
        if not 0.0 <= self.spike_rate <= 1.0:
            raise TraceError(f"--spike-rate must be between 0 and 1, got {self.spike_rate}")
        if not math.isfinite(self.drift):
            raise TraceError(f"--drift must be finite, got {self.drift}")

    def describe(self) -> str:
        return (
            f"synthetic: {self.steps} micro-batches, spread {self.spread:g} binades, "
            f"drift {self.drift:g} binades, spikes of {self.spike_size:g}x at rate "
            f"{self.spike_rate:g}, seed {self.seed}"
        )


SYNTHETIC_TENSORS = (
    ("synthetic.activation:fwd", False, 8.0),
    ("synthetic.gradient:bwd", True, 2.0**-10),
)


def synthetic(spec: SyntheticSpec) -> Trace:
    spec.check()
    rng = random.Random(spec.seed)
    tensors = []
    for name, backward, base in SYNTHETIC_TENSORS:
        t = TensorTrace(name, backward)
        for k, z in enumerate(_normals(rng, spec.steps)):
            log2a = math.log2(base) + spec.drift * k / spec.steps + spec.spread * z
            a = 2.0**log2a
            if rng.random() < spec.spike_rate:
                a *= spec.spike_size
            t.steps.append(k)
            t.amax.append(a)
        tensors.append(t)
    return Trace(spec.describe(), tensors)


def _normals(rng: random.Random, n: int) -> Iterable[float]:
    """Standard normal draws by Box-Muller on `rng.random()` (stable across Python versions)."""
    for _ in range(n):
        u1 = 1.0 - rng.random()  # in (0, 1]
        u2 = rng.random()
        yield math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
