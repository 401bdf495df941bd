"""FP8407: a Hydra `defaults:` parent that fp8lint cannot find next to the config, or does not
read because it lies outside the repository root."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site
from fp8lint.rule import Example, Finding, Rule


class MissingDefaultsParent(Rule):
    code = "FP8407"
    name = "missing-defaults-parent"
    severity = Severity.INFO
    summary = "A `defaults:` parent is not found or not read, so its settings are not checked"
    valid = (
        Example(
            "self_only.yaml",
            "defaults:\n  - _self_\n  - override hydra/launcher: submitit_slurm\n"
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
            "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
        ),
    )
    invalid = (
        Example(
            "gpt_fp8.yaml",
            "defaults:\n  - megatron_gtp_config\n  - _self_\n"
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
            "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        for note in site.notes:
            if note.kind == "missing-parent":
                yield Finding(
                    span=note.span,
                    message=f"`defaults:` parent `{note.key}` is not found next to this file",
                    note="its settings are left out of the effective config: a typo, or a "
                    "config on a search path fp8lint does not read",
                )
            elif note.kind == "parent-outside-repository":
                yield Finding(
                    span=note.span,
                    message=f"`defaults:` parent `{note.key}` is outside the repository, not read",
                    note="fp8lint reads parents only inside the repository root (the nearest "
                    "folder holding `.git`); its settings are left out of the effective config",
                )
