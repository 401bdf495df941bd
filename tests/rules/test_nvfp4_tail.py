"""FP8701: NVFP4 with no BF16 tail is a warning only on a known long pre-training run;
NVIDIA's own NVFP4 presets stay quiet or info; unknown switches stay silent."""

from __future__ import annotations

from fp8lint.diagnostics import Severity
from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.rules import rule_by_code

ARGS = "MODEL_ARGS:\n  --fp4-format: e2m1\n  --num-layers: 32\n"
LONG = "  --train-iters: 500000\n  --global-batch-size: 1024\n  --seq-length: 8192\n"


def _findings(name: str, text: str, kind: str = "yaml") -> list[Severity]:
    rule = rule_by_code("FP8701")
    assert rule is not None
    out: list[Severity] = []
    for site in parse_file(SourceFile(name, text), kind):
        for f in rule().check(site, rule.option_defaults()):
            out.append(f.severity or rule.severity)
    return out


def test_long_pretraining_without_tail_warns_and_with_tail_passes() -> None:
    assert _findings("a.yaml", ARGS + LONG) == [Severity.WARNING]
    tail = "  --first-last-layers-bf16: true\n  --num-layers-at-end-in-bf16: 4\n"
    assert _findings("b.yaml", ARGS + LONG + tail) == []


def test_short_fine_tune_and_backward_override_are_info() -> None:
    assert _findings("s.yaml", ARGS + "  --train-iters: 50\n") == [Severity.INFO]
    assert _findings("f.yaml", ARGS + LONG + "  --finetune: true\n") == [Severity.INFO]
    assert _findings("u.yaml", ARGS) == [Severity.INFO]  # length unknown


def test_unknown_switch_or_fp8_stays_silent() -> None:
    assert _findings("v.yaml", ARGS + LONG + "  --first-last-layers-bf16: ${EDGES}\n") == []
    fp8 = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: mxfp8\n" + LONG
    assert _findings("w.yaml", fp8) == []


def test_bridge_presets() -> None:
    """The perf preset (no BF16 layer, length unknown here) is info; Super keeps 14: quiet."""
    py = (
        "from megatron.bridge.training.mixed_precision import get_mixed_precision_config\n"
        "cfg = get_mixed_precision_config('{}')\n"
    )
    assert _findings("p.py", py.format("bf16_with_nvfp4_mixed"), "python") == [Severity.INFO]
    assert _findings("q.py", py.format("nemotron_3_super_bf16_with_nvfp4_mixed"), "python") == []
