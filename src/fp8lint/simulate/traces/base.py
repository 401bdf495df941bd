"""What every trace format becomes: a `Trace` (tensors, passes, rows as arrays or streamed
chunks, skipped rows), the `Builder` the plain readers fill, and the pass and value rules
they share."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

INPUT_FORMATS = ("auto", "csv", "json", "te-log")
PASSES = ("auto", "fwd", "bwd")
_PASS_WORDS = {"fwd": False, "forward": False, "bwd": True, "backward": True, "grad": True}
MAX_SKIPS_LISTED = 10  # skipped rows named one by one in the notes; the rest are counted

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
        self.bad_steps = 0  # of the skipped rows, those whose step is not an integer
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

    def skip_step(self, where: str, value: object) -> None:
        """A row whose step is not an integer: skipped and reported like a NaN amax."""
        self.skipped += 1
        self.bad_steps += 1
        if len(self.skipped_listed) < MAX_SKIPS_LISTED:
            self.skipped_listed.append(
                f"{where}: step must be an integer, got {value!r}: row skipped"
            )

    def skip_reason(self) -> str:
        """What the skipped rows had: `a NaN or negative amax`, a bad step, or either."""
        if not self.bad_steps:
            return "a NaN or negative amax"
        if self.bad_steps == self.skipped:
            return "a step that is not an integer"
        return "a NaN or negative amax or a step that is not an integer"

    def all_notes(self) -> list[str]:
        out = list(self.notes)
        if self.skipped:
            out += self.skipped_listed
            more = self.skipped - len(self.skipped_listed)
            why = self.skip_reason()
            if more:
                out.append(f"... and {more} more row(s) with {why}")
            out.append(f"skipped {self.skipped} row(s) with {why}")
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


def pass_word(value: str, where: str) -> bool | None:
    word = value.strip().lower()
    if not word:
        return None
    if word not in ("fwd", "forward", "bwd", "backward"):
        raise TraceError(f"{where}: pass must be fwd or bwd, got {value!r}")
    return _PASS_WORDS[word]


def parse_amax(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TraceError(f"{where}: amax must be a number, got {value!r}")
    try:
        return float(value)
    except ValueError:
        raise TraceError(f"{where}: amax must be a number, got {value!r}") from None


def parse_step(value: object, where: str) -> int:
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


class Builder:
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
            why = "NaN or negative amax"
            if trace.bad_steps:
                why = "non-integer step" if trace.bad_steps == trace.skipped else why + " or step"
            extra = f" ({trace.skipped} skipped: {why})" if trace.skipped else ""
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


def read_text(path: str) -> str:
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
