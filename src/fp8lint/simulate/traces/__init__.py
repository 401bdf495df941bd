"""Amax traces: CSV, JSON, Transformer Engine debug statistics logs, and a synthetic generator.

Every input becomes a `Trace`: per tensor, its amaxes in update order (one per micro-batch)
and whether it is a forward or a backward tensor (which sets FP8_MAX under HYBRID).

One module per format: `csv` (streamed with pyarrow), `json`, `te_log` (Transformer Engine
debug statistics logs), `synthetic`; `base` holds the `Trace` they all make.

A row whose amax is NaN or negative is not replayed: it is reported with its row (CSV line,
JSON entry or log line) and counted, and the run goes on.

Rows are ordered by `step` with a stable sort, so several rows with the same step are
consecutive micro-batches of one optimizer step, in file order.

**Pass** (forward or backward), for each tensor, first match wins: `--pass fwd|bwd` forces it
for every tensor; otherwise a `pass` column or key (`fwd`/`forward`/`bwd`/`backward`);
otherwise a name suffix `:fwd`/`:forward` or `:bwd`/`:backward`/`:grad`; otherwise
backward when the name contains `grad` (TE's `gradient`, `dgrad`, `wgrad`, `grad_output`),
forward otherwise.
"""

from __future__ import annotations

import os

from fp8lint.simulate.traces.base import (
    F64,
    INPUT_FORMATS,
    MAX_SKIPS_LISTED,
    PASSES,
    Reread,
    TensorTrace,
    Trace,
    TraceError,
    pass_from_name,
    read_text,
)
from fp8lint.simulate.traces.csv import read_csv, stream_csv
from fp8lint.simulate.traces.json import read_json
from fp8lint.simulate.traces.synthetic import SYNTHETIC_TENSORS, SyntheticSpec, synthetic
from fp8lint.simulate.traces.te_log import TE_LINE, read_te_log

__all__ = [
    "F64",
    "INPUT_FORMATS",
    "MAX_SKIPS_LISTED",
    "PASSES",
    "READERS",
    "SYNTHETIC_TENSORS",
    "Reread",
    "SyntheticSpec",
    "TensorTrace",
    "Trace",
    "TraceError",
    "load",
    "pass_from_name",
    "read_csv",
    "read_json",
    "read_te_log",
    "sniff",
    "stream_csv",
    "synthetic",
]


def sniff(path: str, text: str) -> str:
    """Guess the input format from the extension, then from the content."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".csv":
        return "csv"
    if ext == ".json":
        return "json"
    if ext in (".log", ".txt") and TE_LINE.search(text):
        return "te-log"
    stripped = text.lstrip()
    if stripped.startswith(("[", "{")):
        return "json"
    first = stripped.split("\n", 1)[0].lower()
    if "step" in first and "amax" in first and "," in first:
        return "csv"
    if any(TE_LINE.search(line) for line in stripped.splitlines()[:1000]):
        return "te-log"
    raise TraceError(
        f"{path}: cannot tell the trace format (expected a CSV with a step,tensor,amax header, "
        "a JSON list, or a TE debug statistics log); pass --input-format"
    )


READERS = {"csv": read_csv, "json": read_json, "te-log": read_te_log}


def load(path: str, input_format: str = "auto", force_pass: str = "auto") -> Trace:
    """The trace in `path`: a CSV streams in columns (see `traces.csv`), the other
    formats are read whole."""
    auto_csv = input_format == "auto" and os.path.splitext(path)[1].lower() == ".csv"
    if input_format == "csv" or auto_csv:
        fast = stream_csv(path, force_pass)
        if fast is not None:
            return fast
    text = read_text(path)
    kind = sniff(path, text) if input_format == "auto" else input_format
    if kind == "csv" and not (input_format == "csv" or auto_csv):
        fast = stream_csv(path, force_pass)
        if fast is not None:
            return fast
    return READERS[kind](text, path, force_pass)
