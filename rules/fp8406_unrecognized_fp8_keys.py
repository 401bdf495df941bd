"""FP8406: FP8-looking keys in a file no known config family claims."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Framework
from fp8lint.rule import Example, Finding, Rule

SHOWN = 4  # keys named in the message; the rest are counted


class UnrecognizedFp8Keys(Rule):
    code = "FP8406"
    name = "unrecognized-fp8-keys"
    severity = Severity.INFO
    summary = "FP8 keys in a file of no config family fp8lint knows (not checked, never fixed)"
    reads_unidentified = True
    valid = (
        Example(
            "accelerate.yaml",
            "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: HYBRID\n",
        ),
        Example("plain.yaml", "learning_rate: 0.0001\nbf16: true\n"),
    )
    invalid = (
        Example(
            "trainer.yaml",
            "trainer:\n  precision: bf16\n  enable_fp8: true\n  fp8_scaling: dynamic\n",
            lines=(3,),
        ),
        Example(
            "ds.json",
            '{\n  "gradient_accumulation_steps": 8,\n  "bf16": true,\n  "use_fp8": true\n}\n',
            lines=(4,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.framework != Framework.UNIDENTIFIED:
            return
        keys = [n.key for n in site.notes if n.kind == "unidentified"]
        if not keys:
            return
        named = ", ".join(f"`{k}`" for k in keys[:SHOWN])
        more = f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
        yield Finding(
            span=site.notes[0].span,
            message=f"FP8 keys of no config family fp8lint knows: {named}{more}",
            note="no rule checks them and no fix changes them; fp8lint reads a family only "
            "once it has identified it",
            key="unrecognized-fp8-keys",
        )
