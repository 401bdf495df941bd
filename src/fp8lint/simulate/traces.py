"""Amax traces: CSV, JSON, Transformer Engine debug statistics logs, and a synthetic generator.

Every input becomes a `Trace`: per tensor, its amaxes in update order (one per micro-batch)
and whether it is a forward or a backward tensor (which sets FP8_MAX under HYBRID).

* **CSV**: a header with `step,tensor,amax` (any order; an optional `pass` column; other
  columns are ignored), one row per tensor and update.
* **JSON**: a list of objects `{"step": int, "tensor": str, "amax": number}` with an optional
  `"pass"`.  `Infinity`/`NaN` literals and the strings `"inf"`/`"nan"` are accepted.
* **TE debug log**: the statistics file that nvdlfw_inspect's default file logger writes
  (`nvdlfw_inspect_statistics_logs/nvdlfw_inspect_globalrank-<N>.log`).  Each line there is
  `<time> - INFO - <layer>_<tensor>_<stat> iteration=<6 digits> value=<4 decimals>`.  Only
  `cur_amax` lines are read: TE's `LogTensorStats` writes them when `cur_amax` is among its
  `stats`.  `LogFp8TensorStats` logs no amax (its `underflows%`, `overflows%`,
  `scale_inv_min`/`scale_inv_max` and `mse` lines are skipped), so enable `LogTensorStats`
  with `cur_amax` next to it.  The log prints 4 decimals, so amaxes under 5e-5 (typical for
  gradients) read as 0 and are reported; one line is one `debug_api.step()`, which holds the
  maximum over that step's micro-batches.

Rows are ordered by `step` with a stable sort, so several rows with the same step are
consecutive micro-batches of one optimizer step, in file order.

**Pass** (forward or backward), for each tensor, first match wins: `--pass fwd|bwd` forces it
for every tensor; otherwise a `pass` column or key (`fwd`/`forward`/`bwd`/`backward`);
otherwise a name suffix `:fwd`/`:forward` or `:bwd`/`:backward`/`:grad`; otherwise
backward when the name contains `grad` (TE's `gradient`, `dgrad`, `wgrad`, `grad_output`),
forward otherwise.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

INPUT_FORMATS = ("auto", "csv", "json", "te-log")
PASSES = ("auto", "fwd", "bwd")
_PASS_WORDS = {"fwd": False, "forward": False, "bwd": True, "backward": True, "grad": True}
_TE_LINE = re.compile(
    r"(?:^|\s-\s)(?P<name>\S+)\s+iteration=(?P<iteration>-?\d+)\s+value=(?P<value>\S+)\s*$"
)
_TE_AMAX = "_cur_amax"


class TraceError(Exception):
    """A trace that cannot be read; the message names the file and, where known, the line."""


@dataclass
class TensorTrace:
    name: str
    backward: bool
    steps: list[int] = field(default_factory=list)
    amax: list[float] = field(default_factory=list)

    @property
    def pass_name(self) -> str:
        return "bwd" if self.backward else "fwd"


@dataclass
class Trace:
    source: str
    tensors: list[TensorTrace]
    notes: list[str] = field(default_factory=list)

    @property
    def updates(self) -> int:
        return sum(len(t.amax) for t in self.tensors)


def pass_from_name(name: str) -> bool:
    """Backward when the name says so (suffix, else `grad` in it), forward otherwise."""
    _, sep, suffix = name.rpartition(":")
    if sep and suffix.strip().lower() in _PASS_WORDS:
        return _PASS_WORDS[suffix.strip().lower()]
    return "grad" in name.lower()


def _pass_word(value: str, where: str) -> bool | None:
    word = value.strip().lower()
    if not word:
        return None
    if word not in ("fwd", "forward", "bwd", "backward"):
        raise TraceError(f"{where}: pass must be fwd or bwd, got {value!r}")
    return _PASS_WORDS[word]


def _amax(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TraceError(f"{where}: amax must be a number, got {value!r}")
    try:
        a = float(value)
    except ValueError:
        raise TraceError(f"{where}: amax must be a number, got {value!r}") from None
    if a < 0.0:
        raise TraceError(f"{where}: amax must not be negative, got {value!r}")
    return a


def _step(value: object, where: str) -> int:
    if isinstance(value, bool):
        raise TraceError(f"{where}: step must be an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise TraceError(f"{where}: step must be an integer, got {value!r}")


class _Builder:
    """Collects rows, then orders each tensor's updates by step (stable)."""

    def __init__(self, source: str, force: str) -> None:
        self.source = source
        self.force = force
        self.rows: dict[str, list[tuple[int, int, float]]] = {}
        self.passes: dict[str, bool] = {}
        self.count = 0

    def add(self, step: int, tensor: str, amax: float, backward: bool | None, where: str) -> None:
        if not tensor:
            raise TraceError(f"{where}: empty tensor name")
        if self.force != "auto":
            backward = self.force == "bwd"
        elif backward is None:
            backward = pass_from_name(tensor)
        known = self.passes.setdefault(tensor, backward)
        if known != backward:
            raise TraceError(f"{where}: tensor {tensor!r} changes pass (fwd and bwd rows)")
        self.rows.setdefault(tensor, []).append((step, self.count, amax))
        self.count += 1

    def build(self, notes: list[str] | None = None) -> Trace:
        if not self.rows:
            raise TraceError(f"{self.source}: no amax rows")
        tensors = []
        for name, rows in self.rows.items():
            rows.sort()
            tensors.append(
                TensorTrace(name, self.passes[name], [r[0] for r in rows], [r[2] for r in rows])
            )
        return Trace(self.source, tensors, notes or [])


def read_csv(text: str, source: str, force_pass: str = "auto") -> Trace:
    reader = csv.reader(io.StringIO(text))
    builder = _Builder(source, force_pass)
    columns: dict[str, int] = {}
    width = 0
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not c.strip() for c in row):
                continue
            if not width:
                names = [c.strip().lower() for c in row]
                missing = [c for c in ("step", "tensor", "amax") if c not in names]
                if missing:
                    raise TraceError(
                        f"{source}:{line}: the CSV header must name the columns step, tensor "
                        f"and amax (missing: {', '.join(missing)})"
                    )
                columns = {n: i for i, n in reversed(list(enumerate(names)))}
                width = len(names)
                continue
            where = f"{source}:{line}"
            if len(row) != width:
                raise TraceError(f"{where}: expected {width} fields, got {len(row)}")
            backward = _pass_word(row[columns["pass"]], where) if "pass" in columns else None
            builder.add(
                _step(row[columns["step"]], where),
                row[columns["tensor"]].strip(),
                _amax(row[columns["amax"]].strip(), where),
                backward,
                where,
            )
    except csv.Error as exc:
        raise TraceError(f"{source}:{reader.line_num}: {exc}") from None
    return builder.build()


def read_json(text: str, source: str, force_pass: str = "auto") -> Trace:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, list):
        raise TraceError(f"{source}: expected a JSON list of {{step, tensor, amax}} objects")
    builder = _Builder(source, force_pass)
    for i, item in enumerate(data):
        where = f"{source}: entry {i}"
        if not isinstance(item, dict):
            raise TraceError(f"{where}: expected an object with step, tensor and amax")
        missing = [k for k in ("step", "tensor", "amax") if k not in item]
        if missing:
            raise TraceError(f"{where}: missing {', '.join(missing)}")
        tensor = item["tensor"]
        if not isinstance(tensor, str):
            raise TraceError(f"{where}: tensor must be a string, got {tensor!r}")
        raw_pass = item.get("pass")
        if raw_pass is not None and not isinstance(raw_pass, str):
            raise TraceError(f"{where}: pass must be fwd or bwd, got {raw_pass!r}")
        backward = _pass_word(raw_pass, where) if raw_pass is not None else None
        builder.add(
            _step(item["step"], where), tensor.strip(), _amax(item["amax"], where), backward, where
        )
    return builder.build()


def read_te_log(text: str, source: str, force_pass: str = "auto") -> Trace:
    """`cur_amax` lines of an nvdlfw_inspect statistics log (see the module docstring)."""
    builder = _Builder(source, force_pass)
    skipped = 0
    zeros = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        match = _TE_LINE.search(line)
        if match is None:
            continue
        name = match["name"]
        if not name.endswith(_TE_AMAX) or len(name) == len(_TE_AMAX):
            skipped += 1
            continue
        where = f"{source}:{line_no}"
        amax = _amax(match["value"], where)
        zeros += amax == 0.0
        builder.add(int(match["iteration"]), name[: -len(_TE_AMAX)], amax, None, where)
    if not builder.rows:
        raise TraceError(
            f"{source}: no `<layer>_<tensor>_cur_amax ... iteration=... value=...` lines "
            f"({skipped} other statistics lines): enable TE's LogTensorStats with "
            "stats: [cur_amax]; LogFp8TensorStats does not log amax"
        )
    notes = []
    if skipped:
        notes.append(f"skipped {skipped} statistics line(s) that are not cur_amax")
    if zeros:
        notes.append(
            f"{zeros} cur_amax value(s) are 0.0000: the log keeps 4 decimals, so amaxes below "
            "5e-5 read as 0 (replayed as a step without an update)"
        )
    return builder.build(notes)


def sniff(path: str, text: str) -> str:
    """Guess the input format from the extension, then from the content."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        return "csv"
    if ext == ".json":
        return "json"
    if ext in (".log", ".txt") and _TE_LINE.search(text):
        return "te-log"
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        return "json"
    first = stripped.split("\n", 1)[0].lower()
    if "step" in first and "amax" in first and "," in first:
        return "csv"
    if any(_TE_LINE.search(line) for line in stripped.splitlines()[:1000]):
        return "te-log"
    raise TraceError(
        f"{path}: cannot tell the trace format (expected a CSV with a step,tensor,amax header, "
        "a JSON list, or a TE debug statistics log); pass --input-format"
    )


READERS = {"csv": read_csv, "json": read_json, "te-log": read_te_log}


def load(path: str, input_format: str = "auto", force_pass: str = "auto") -> Trace:
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: is a directory, not a trace file") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    kind = sniff(path, text) if input_format == "auto" else input_format
    return READERS[kind](text, path, force_pass)


# --------------------------------------------------------------------------- synthetic


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
