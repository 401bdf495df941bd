"""Transformer Engine debug statistics logs: the file that nvdlfw_inspect's default file
logger writes (`nvdlfw_inspect_statistics_logs/nvdlfw_inspect_globalrank-<N>.log`).

Each line there is `<time> - INFO - <layer>_<tensor>_<stat> iteration=<6 digits>
value=<4 decimals>`.  Only `cur_amax` lines are read: TE's `LogTensorStats` writes them when
`cur_amax` is among its `stats`.  `LogFp8TensorStats` logs no amax (its `underflows%`,
`overflows%`, `scale_inv_min`/`scale_inv_max` and `mse` lines are skipped), so enable
`LogTensorStats` with `cur_amax` next to it.  The log prints 4 decimals, so amaxes under 5e-5
(typical for gradients) read as 0 and are reported; one line is one `debug_api.step()`, which
holds the maximum over that step's micro-batches.
"""

from __future__ import annotations

import re

from fp8lint.simulate.traces.base import Builder, Trace, TraceError, parse_amax

TE_LINE = re.compile(
    r"(?:^|\s-\s)(?P<name>\S+)\s+iteration=(?P<iteration>-?\d+)\s+value=(?P<value>\S+)\s*$"
)
TE_AMAX = "_cur_amax"


def read_te_log(text: str, source: str, force_pass: str = "auto") -> Trace:
    """`cur_amax` lines of an nvdlfw_inspect statistics log (see the module docstring)."""
    builder = Builder(source, force_pass)
    skipped = 0
    zeros = 0
    for line_no, line in enumerate(text.splitlines(), start=1):
        match = TE_LINE.search(line)
        if match is None:
            continue
        name = match["name"]
        if not name.endswith(TE_AMAX) or len(name) == len(TE_AMAX):
            skipped += 1
            continue
        where = f"{source}:{line_no}"
        amax = parse_amax(match["value"], where)
        zeros += amax == 0.0
        builder.add(int(match["iteration"]), name[: -len(TE_AMAX)], amax, None, where)
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
