"""JSON traces: a list of objects `{"step": int, "tensor": str, "amax": number}` with an
optional `"pass"`.  `Infinity`/`NaN` literals and the strings `"inf"`/`"nan"` are accepted."""

from __future__ import annotations

import json

from fp8lint.simulate.traces.base import (
    Builder,
    Trace,
    TraceError,
    parse_amax,
    parse_step,
    pass_word,
)


def read_json(text: str, source: str, force_pass: str = "auto") -> Trace:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, list):
        raise TraceError(f"{source}: expected a JSON list of {{step, tensor, amax}} objects")
    builder = Builder(source, force_pass)
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
        backward = pass_word(raw_pass, where) if raw_pass is not None else None
        builder.add(
            parse_step(item["step"], where),
            tensor.strip(),
            parse_amax(item["amax"], where),
            backward,
            where,
        )
    return builder.build()
