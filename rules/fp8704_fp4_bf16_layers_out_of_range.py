"""FP8704: FP4 training whose BF16 layer counts are out of range.

Megatron-Core checks `num_layers_at_start_in_bf16` and `num_layers_at_end_in_bf16` only
inside `if self.fp8:` of `TransformerConfig.__post_init__`: with `first_last_layers_bf16`
each must lie in 0..num_layers // pipeline_model_parallel_size, or it raises
(`megatron/core/transformer/transformer_config.py` L1400-1429 at core_v0.19.0, L1527-1555
at NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553).  That refusal is FP8403's.
Under FP4 nothing checks them: `get_fp4_context` (`megatron/core/fp4_utils.py` L247-263 at
d98e8a64) keeps a layer in BF16 when its global number is below the start count or at least
num_layers minus the end count.  So a negative count keeps no layer at its end, a count over
one stage's layers is what the FP8 path refuses, and counts that add up to num_layers or more
leave no layer in FP4 at all: the run starts and trains something other than what was meant.
Nothing refuses it, so it is a warning.  Unknown counts, layers or pipeline size leave the
checks that need them silent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Setting
from fp8lint.rule import Example, Finding, Rule, term, where

_FP4 = "MODEL_ARGS:\n  --fp4-format: e2m1\n  --fp4-recipe: nvfp4\n  --num-layers: 32\n"
_EDGES = "  --first-last-layers-bf16: true\n"
_NOTE = "Megatron checks the BF16 layer counts only under FP8 (transformer_config.py L1538)"


class Fp4Bf16LayersOutOfRange(Rule):
    code = "FP8704"
    name = "fp4-bf16-layers-out-of-range"
    severity = Severity.WARNING
    summary = (
        "FP4 with a BF16 layer count negative, over one pipeline stage, or leaving no FP4 layer"
    )
    valid = (
        Example(
            "tail.yaml",
            _FP4 + _EDGES + "  --num-layers-at-start-in-bf16: 0\n"
            "  --num-layers-at-end-in-bf16: 4\n",
        ),
        # the switch is off: the counts are not read
        Example("off.yaml", _FP4 + "  --num-layers-at-end-in-bf16: 40\n"),
        # FP8 refuses it at start-up: FP8403's
        Example(
            "fp8.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n  --num-layers: 32\n"
            + _EDGES
            + "  --num-layers-at-end-in-bf16: 40\n",
        ),
    )
    invalid = (
        Example("negative.yaml", _FP4 + _EDGES + "  --num-layers-at-end-in-bf16: -1\n", lines=(6,)),
        Example(
            "stage.yaml",
            _FP4
            + "  --pipeline-model-parallel-size: 4\n"
            + _EDGES
            + "  --num-layers-at-end-in-bf16: 12\n",
            lines=(7,),
        ),
        Example(
            "all.yaml",
            _FP4 + _EDGES + "  --num-layers-at-start-in-bf16: 16\n"
            "  --num-layers-at-end-in-bf16: 16\n",
            lines=(7,),
        ),
        Example(
            "bridge.py",
            "from megatron.bridge.training.mixed_precision import MixedPrecisionConfig\n"
            "mp = MixedPrecisionConfig(fp4='e2m1', first_last_layers_bf16=True,\n"
            "    num_layers_at_start_in_bf16=-1, num_layers_at_end_in_bf16=4)\n",
            lines=(3,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.fp4_on is not True or site.is_on:
            return  # FP8 on: Megatron refuses the counts itself (FP8403)
        edges = site.first_last_layers_bf16
        if not (edges.known and edges.value is True):
            return
        layers = _int(site.num_layers)
        pp = _int(site.pipeline_parallel)
        most = layers // pp if layers is not None and pp is not None and pp >= 1 else None
        start, end = site.num_layers_at_start_in_bf16, site.num_layers_at_end_in_bf16
        flagged = False
        for count in (start, end):
            value = _int(count)
            if value is None:
                continue
            if value < 0:
                message = f"FP4 BF16 layer count {term(count)} is negative"
            elif most is not None and value > most:
                stage = f"{layers} layers / PP {pp}" if pp != 1 else f"{layers} layers"
                message = f"FP4 BF16 layer count {term(count)} is outside 0..{most} ({stage})"
            else:
                continue
            flagged = True
            yield Finding(span=where(count, site), message=message, note=_NOTE)
        first, last = _int(start), _int(end)
        if flagged or layers is None or first is None or last is None:
            return
        if first + last >= layers:
            yield Finding(
                span=where(end if end.written else start, site),
                message=f"FP4 BF16 layers {term(start)} + {term(end)} leave no FP4 layer "
                f"of {layers}",
                note=_NOTE,
            )


def _int(setting: Setting[Any]) -> int | None:
    """The setting's integer value, when known."""
    value = setting.value
    if setting.known and isinstance(value, int) and not isinstance(value, bool):
        return value
    return None
