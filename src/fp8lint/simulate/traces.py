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

A row whose amax is NaN or negative is not replayed: it is reported with its row (CSV line,
JSON entry or log line) and counted, and the run goes on.

CSV is read in columns with pyarrow, streamed in blocks, so a trace larger than memory replays
in bounded memory when each tensor's rows come in step order (as a training run writes them);
a CSV that the fast reader cannot take as it is (a quoted newline, a blank line, a value it
does not parse) goes through the plain reader, which names the line of any error.

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

INPUT_FORMATS = ("auto", "csv", "json", "te-log")
PASSES = ("auto", "fwd", "bwd")
_PASS_WORDS = {"fwd": False, "forward": False, "bwd": True, "backward": True, "grad": True}
_TE_LINE = re.compile(
    r"(?:^|\s-\s)(?P<name>\S+)\s+iteration=(?P<iteration>-?\d+)\s+value=(?P<value>\S+)\s*$"
)
_TE_AMAX = "_cur_amax"
MAX_SKIPS_LISTED = 10  # skipped rows named one by one in the notes; the rest are counted
BLOCK_BYTES = 1 << 22  # CSV bytes per streamed block (about 90,000 rows)

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Chunk = tuple[I64, I64, F64]  # tensor id, step, amax: rows in file order


class TraceError(Exception):
    """A trace that cannot be read; the message names the file and, where known, the line."""


class Reread(Exception):
    """The streamed CSV needs the plain reader (it holds something the fast reader does not
    take as it is); raised before or between chunks, the replay starts over."""


@dataclass
class TensorTrace:
    name: str
    backward: bool
    steps: list[int] = field(default_factory=list)
    amax: list[float] = field(default_factory=list)

    @property
    def pass_name(self) -> str:
        return "bwd" if self.backward else "fwd"


class Trace:
    """The tensors of a trace (names and passes, in order of first appearance) and its rows,
    held as arrays or streamed in chunks; the rows skipped for a NaN or negative amax."""

    def __init__(
        self,
        source: str,
        tensors: list[TensorTrace] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.source = source
        self.names: list[str] = []
        self.backward: list[bool] = []
        self._ids: dict[str, int] = {}
        self.notes: list[str] = list(notes or [])
        self.skipped = 0
        self.skipped_listed: list[str] = []
        self.rows = 0
        self._chunks: list[Chunk] = []
        self._stream: Callable[[Trace], Iterator[Chunk]] | None = None
        self.size = 0  # bytes of a streamed file, for the progress bar
        self.progress: Callable[[int], None] | None = None
        self._fallback: Callable[[], Trace] | None = None
        if tensors is not None:
            self._set_tensors(tensors)

    def tensor_id(self, name: str, backward: bool, where: str) -> int:
        i = self._ids.get(name)
        if i is None:
            i = self._ids[name] = len(self.names)
            self.names.append(name)
            self.backward.append(backward)
        elif self.backward[i] != backward:
            raise TraceError(f"{where}: tensor {name!r} changes pass (fwd and bwd rows)")
        return i

    def skip(self, where: str, value: float) -> None:
        """A row that is not replayed: reported with its row, counted."""
        self.skipped += 1
        if len(self.skipped_listed) < MAX_SKIPS_LISTED:
            what = "NaN" if math.isnan(value) else f"negative ({value!r})"
            self.skipped_listed.append(f"{where}: amax is {what}: row skipped")

    def all_notes(self) -> list[str]:
        out = list(self.notes)
        if self.skipped:
            out += self.skipped_listed
            more = self.skipped - len(self.skipped_listed)
            if more:
                out.append(f"... and {more} more row(s) with a NaN or negative amax")
            out.append(f"skipped {self.skipped} row(s) with a NaN or negative amax")
        return out

    def chunks(self) -> Iterator[Chunk]:
        if self._stream is not None:
            yield from self._stream(self)
        else:
            yield from self._chunks

    def whole(self) -> Chunk:
        """Every row at once (a streamed trace is read to the end)."""
        parts = list(self.chunks())
        if len(parts) == 1:
            return parts[0]
        if not parts:
            e = np.empty(0, dtype=np.int64)
            return e, e.copy(), np.empty(0, dtype=np.float64)
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
        )

    @property
    def tensors(self) -> list[TensorTrace]:
        """Per tensor, its steps and amaxes in update order (stable by step): for small
        traces, tests and plots."""
        t, st, a = self.whole()
        order = np.lexsort((st, t))
        t, st, a = t[order], st[order], a[order]
        out = [TensorTrace(n, b) for n, b in zip(self.names, self.backward, strict=True)]
        bounds = np.searchsorted(t, np.arange(len(out) + 1))
        for i, tt in enumerate(out):
            tt.steps = st[bounds[i] : bounds[i + 1]].tolist()
            tt.amax = a[bounds[i] : bounds[i + 1]].tolist()
        return out

    @property
    def updates(self) -> int:
        return self.rows

    @property
    def streamed(self) -> bool:
        return self._stream is not None

    def materialize(self) -> Trace:
        """This trace with every row in memory (for a CSV whose steps go back across
        blocks: the stable order by step needs all of a tensor's rows)."""
        rows = self.whole()
        self._chunks, self._stream = [rows], None
        return self

    def reread(self) -> Trace:
        """The plain reader's trace of a streamed file (it names the line of any error)."""
        if self._fallback is None:
            raise TraceError(f"{self.source}: cannot be read again")
        return self._fallback()

    def _set_tensors(self, tensors: list[TensorTrace]) -> None:
        """Rows from per-tensor lists (already in update order)."""
        ids: list[int] = []
        for tt in tensors:
            i = self.tensor_id(tt.name, tt.backward, self.source)
            ids += [i] * len(tt.amax)
        self._chunks = [
            (
                np.asarray(ids, dtype=np.int64),
                np.asarray([s for tt in tensors for s in tt.steps], dtype=np.int64),
                np.asarray([a for tt in tensors for a in tt.amax], dtype=np.float64),
            )
        ]
        self.rows = len(ids)


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
        return float(value)
    except ValueError:
        raise TraceError(f"{where}: amax must be a number, got {value!r}") from None


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
    """Collects rows in file order (a NaN or negative amax is skipped and reported)."""

    def __init__(self, source: str, force: str) -> None:
        self.source = source
        self.force = force
        self.trace = Trace(source)
        self.ids: list[int] = []
        self.steps: list[int] = []
        self.amax: list[float] = []

    @property
    def count(self) -> int:
        return len(self.ids) + self.trace.skipped

    def add(self, step: int, tensor: str, amax: float, backward: bool | None, where: str) -> None:
        if not tensor:
            raise TraceError(f"{where}: empty tensor name")
        if self.force != "auto":
            backward = self.force == "bwd"
        elif backward is None:
            backward = pass_from_name(tensor)
        i = self.trace.tensor_id(tensor, backward, where)
        if math.isnan(amax) or amax < 0.0:
            self.trace.skip(where, amax)
            return
        self.ids.append(i)
        self.steps.append(step)
        self.amax.append(amax)

    def build(self, notes: list[str] | None = None) -> Trace:
        trace = self.trace
        if not self.ids:
            extra = f" ({trace.skipped} skipped: NaN or negative amax)" if trace.skipped else ""
            raise TraceError(f"{self.source}: no amax rows{extra}")
        trace.notes = list(notes or [])
        trace._chunks = [
            (
                np.asarray(self.ids, dtype=np.int64),
                np.asarray(self.steps, dtype=np.int64),
                np.asarray(self.amax, dtype=np.float64),
            )
        ]
        trace.rows = len(self.ids)
        return trace


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
    if not builder.count:
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


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig") as fh:
            return fh.read()
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{path}: is a directory, not a trace file") from None
    except UnicodeDecodeError:
        raise TraceError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load(path: str, input_format: str = "auto", force_pass: str = "auto") -> Trace:
    """The trace in `path`: a CSV streams in columns (see the module docstring), the other
    formats are read whole."""
    auto_csv = input_format == "auto" and os.path.splitext(path)[1].lower() == ".csv"
    if input_format == "csv" or auto_csv:
        fast = stream_csv(path, force_pass)
        if fast is not None:
            return fast
    text = _read_text(path)
    kind = sniff(path, text) if input_format == "auto" else input_format
    if kind == "csv" and not (input_format == "csv" or auto_csv):
        fast = stream_csv(path, force_pass)
        if fast is not None:
            return fast
    return READERS[kind](text, path, force_pass)


def stream_csv(path: str, force_pass: str = "auto") -> Trace | None:
    """A trace that streams `path` in blocks with pyarrow, or None when the header is not
    a plain first line (the plain reader then takes the file and explains any problem)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
            size = os.fstat(fh.fileno()).st_size
    except OSError:
        return None  # the plain reader reports it
    if head.startswith(b"\xef\xbb\xbf") or (b"\n" not in head and len(head) < size):
        return None
    try:
        first = head.split(b"\n", 1)[0].decode("utf-8").rstrip("\r")
        header = next(csv.reader([first]))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None
    names = [c.strip().lower() for c in header]
    if any(c not in names for c in ("step", "tensor", "amax")):
        return None
    columns = {n: i for i, n in reversed(list(enumerate(names)))}
    trace = Trace(path)
    trace.size = size
    trace._stream = lambda t: _csv_blocks(t, path, len(names), columns, force_pass)
    trace._fallback = lambda: read_csv(_read_text(path), path, force_pass)
    return trace


def _csv_blocks(
    trace: Trace, path: str, width: int, columns: dict[str, int], force_pass: str
) -> Iterator[Chunk]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    trace.rows, trace.skipped, trace.skipped_listed = 0, 0, []
    col = [f"c{i}" for i in range(width)]
    wanted = ["step", "tensor", "amax"] + (["pass"] if "pass" in columns else [])
    text_type = pa.dictionary(pa.int32(), pa.string())
    types = {"step": pa.int64(), "amax": pa.float64(), "tensor": text_type, "pass": text_type}
    convert = pacsv.ConvertOptions(
        include_columns=[col[columns[k]] for k in wanted],
        column_types={col[columns[k]]: types[k] for k in wanted},
        null_values=[""],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    read = pacsv.ReadOptions(skip_rows=1, column_names=col, block_size=BLOCK_BYTES)
    parse = pacsv.ParseOptions(ignore_empty_lines=False)
    line = 2  # the first data row; a blank line or a quoted newline sends the file to reread
    with pa.OSFile(path) as fh:
        try:
            reader = pacsv.open_csv(
                fh, read_options=read, parse_options=parse, convert_options=convert
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, StopIteration):
            raise Reread from None
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise Reread from None
            n = batch.num_rows
            got = {k: batch.column(col[columns[k]]) for k in wanted}
            if any(c.null_count for c in got.values()):
                raise Reread
            step = np.asarray(got["step"].to_numpy(), dtype=np.int64)
            amax = np.asarray(got["amax"].to_numpy(), dtype=np.float64)
            tensor = _tensor_ids(trace, got["tensor"], got.get("pass"), force_pass)
            bad = np.flatnonzero(np.isnan(amax) | (amax < 0.0))
            if bad.size:
                for k in bad[:MAX_SKIPS_LISTED].tolist():
                    trace.skip(f"{path}:{line + k}", float(amax[k]))
                trace.skipped += max(0, bad.size - MAX_SKIPS_LISTED)
                keep = np.ones(n, dtype=np.bool_)
                keep[bad] = False
                step, amax, tensor = step[keep], amax[keep], tensor[keep]
            line += n
            trace.rows += int(step.size)
            if trace.progress is not None:
                trace.progress(fh.tell())
            yield tensor, step, amax
    if not trace.rows:
        raise Reread  # the plain reader says why there is nothing to replay


def _tensor_ids(trace: Trace, names: object, passes: object, force_pass: str) -> I64:
    """Tensor ids of a block's rows, tensors registered in order of first appearance."""
    name_idx = np.asarray(names.indices.to_numpy(), dtype=np.int64)  # type: ignore[attr-defined]
    name_dict: list[str] = names.dictionary.to_pylist()  # type: ignore[attr-defined]
    pass_dict: list[str] = []
    key = name_idx
    if passes is not None:
        pass_dict = passes.dictionary.to_pylist()  # type: ignore[attr-defined]
        pass_idx = np.asarray(passes.indices.to_numpy(), dtype=np.int64)  # type: ignore[attr-defined]
        key = name_idx * len(pass_dict) + pass_idx
    uniq, first = np.unique(key, return_index=True)
    ids = np.empty(uniq.size, dtype=np.int64)
    for j in np.argsort(first, kind="stable").tolist():
        u = int(uniq[j])
        name = name_dict[u // max(len(pass_dict), 1)].strip()
        if not name:
            raise Reread
        backward: bool | None = None
        if force_pass != "auto":
            backward = force_pass == "bwd"
        else:
            if pass_dict:
                try:
                    backward = _pass_word(pass_dict[u % len(pass_dict)], "")
                except TraceError:
                    raise Reread from None
            if backward is None:
                backward = pass_from_name(name)
        try:
            ids[j] = trace.tensor_id(name, backward, "")
        except TraceError:
            raise Reread from None
    out: I64 = ids[np.searchsorted(uniq, key)]
    return out


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
