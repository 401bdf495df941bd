"""FP8408: an FP8/FP4 flag Megatron-LM does not define, which stops the launch."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule


class UnknownFlag(Rule):
    code = "FP8408"
    name = "unknown-flag"
    severity = Severity.ERROR
    summary = "An FP8/FP4 flag Megatron-LM does not define: its parser stops the launch"
    valid = (
        Example("ok.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: delayed\n"),
        Example(
            "ds.sh",
            "deepspeed pretrain_gpt.py --deepspeed --deepspeed_config ds.json --fp8-hybrid\n",
        ),
    )
    invalid = (
        Example("legacy.yaml", "MODEL_ARGS:\n  --fp8-hybrid: true\n", lines=(2,)),
        Example(
            "attn.sh",
            "torchrun pretrain_gpt.py --fp8-format hybrid \\\n  --fp8-dot-product-attention\n",
            lines=(2,),
        ),
        Example(
            "tp.sh",
            "torchrun pretrain_gpt.py --fp8-format hybrid --tp-only-amax-red\n",
            lines=(1,),
        ),
        Example(
            "typo.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-histroy-len: 1024\n",
            lines=(3,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        for note in site.notes:
            if note.kind == "unknown-flag":
                yield Finding(span=note.span, message=note.message, note=note.why, key=note.key)
