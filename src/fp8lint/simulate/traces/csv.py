"""CSV traces: a header with `step,tensor,amax` (any order; an optional `pass` column; other
columns are ignored), one row per tensor and update.  A row whose step is not an integer or
whose amax is NaN or negative is skipped and reported with its line.

Read in columns with pyarrow, streamed in blocks, so a trace larger than memory replays in
bounded memory when each tensor's rows come in step order (as a training run writes them); a
CSV that the fast reader cannot take as it is (a quoted newline, a blank line, a value it does
not parse) goes through the plain reader, which names the line of any error.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator

import numpy as np

from fp8lint.simulate.traces.base import (
    I64,
    MAX_SKIPS_LISTED,
    Builder,
    Chunk,
    Reread,
    Trace,
    TraceError,
    parse_amax,
    parse_step,
    pass_from_name,
    pass_word,
    read_text,
)

BLOCK_BYTES = 1 << 22  # CSV bytes per streamed block (about 90,000 rows)


def read_csv(text: str, source: str, force_pass: str = "auto") -> Trace:
    reader = csv.reader(io.StringIO(text))
    builder = Builder(source, force_pass)
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
            backward = pass_word(row[columns["pass"]], where) if "pass" in columns else None
            try:
                step = parse_step(row[columns["step"]], where)
            except TraceError:  # one bad row is reported and skipped, as a NaN amax is
                builder.trace.skip_step(where, row[columns["step"]])
                continue
            builder.add(
                step,
                row[columns["tensor"]].strip(),
                parse_amax(row[columns["amax"]].strip(), where),
                backward,
                where,
            )
    except csv.Error as exc:
        raise TraceError(f"{source}:{reader.line_num}: {exc}") from None
    return builder.build()


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
    trace._fallback = lambda: read_csv(read_text(path), path, force_pass)
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
                    backward = pass_word(pass_dict[u % len(pass_dict)], "")
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
