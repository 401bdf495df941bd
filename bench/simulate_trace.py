"""Generate a large amax trace CSV (step,tensor,amax) for timing `fp8lint simulate`.

The trace is written in chunks, so a 10^8-row file (about 3.5 GB) never sits in memory:
`python bench/simulate_trace.py OUT.csv --rows 100000000`; `--time` then runs
`fp8lint simulate OUT.csv` (report and sweep) and prints its wall and CPU seconds and peak
RSS.  Amaxes are log-normal per tensor
(forward tensors around 8, gradients around 2^-10) with rare 4x spikes, from a seeded
generator, so a given (rows, tensors, seed) always gives the same file.  Needs the `simulate`
extra (numpy, pyarrow): pip install -e '.[simulate]' in a checkout.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator

CHUNK_STEPS = 8192


def tensor_names(count: int) -> list[str]:
    """`count` names, alternating forward activations and backward gradients."""
    return [f"layers.{i // 2}.fc.{'grad_output' if i % 2 else 'input'}" for i in range(count)]


def chunks(rows: int, tensors: int, seed: int) -> Iterator[tuple[object, object, object]]:
    """(step, tensor, amax) columns, step-major: every tensor once per step."""
    import numpy as np

    rng = np.random.default_rng(seed)
    names = np.array(tensor_names(tensors), dtype=object)
    base = np.where(np.arange(tensors) % 2 == 1, -10.0, 3.0)
    steps_total = -(-rows // tensors)
    done = 0
    for start in range(0, steps_total, CHUNK_STEPS):
        n_steps = min(CHUNK_STEPS, steps_total - start)
        n = min(n_steps * tensors, rows - done)
        step = np.repeat(np.arange(start, start + n_steps, dtype=np.int64), tensors)[:n]
        tid = np.tile(np.arange(tensors), n_steps)[:n]
        log2a = base[tid] + 0.1 * rng.standard_normal(n)
        amax = np.exp2(log2a) * np.where(rng.random(n) < 0.002, 4.0, 1.0)
        yield step, names[tid], amax
        done += n


def write(path: str, rows: int, tensors: int, seed: int) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    schema = pa.schema([("step", pa.int64()), ("tensor", pa.string()), ("amax", pa.float64())])
    options = pacsv.WriteOptions(quoting_style="none")
    with pacsv.CSVWriter(path, schema, write_options=options) as writer:
        for step, name, amax in chunks(rows, tensors, seed):
            writer.write_batch(pa.record_batch([step, name, amax], schema=schema))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", help="CSV file to write")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--tensors", type=int, default=160)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reuse", action="store_true", help="keep OUT if it exists")
    parser.add_argument("--time", action="store_true", help="then time fp8lint simulate on it")
    args = parser.parse_args(argv)
    if args.rows < 1 or args.tensors < 1:
        parser.error("--rows and --tensors must be at least 1")
    if not (args.reuse and os.path.exists(args.out)):
        write(args.out, args.rows, args.tensors, args.seed)
        print(f"wrote {args.rows} rows ({args.tensors} tensors) to {args.out}", file=sys.stderr)
    if args.time:
        print(timed([sys.executable, "-m", "fp8lint", "simulate", args.out]))
    return 0


def timed(command: list[str]) -> str:
    """Run `command` (output discarded); its wall and CPU seconds and peak RSS."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run(command, stdout=subprocess.DEVNULL, check=False).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rss_mb = after.ru_maxrss / 1024  # KiB on Linux
    return f"exit {code}: wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {rss_mb:.0f} MB"


if __name__ == "__main__":
    sys.exit(main())
