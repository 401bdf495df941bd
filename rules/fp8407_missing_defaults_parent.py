"""FP8407: a Hydra `defaults:` parent that fp8lint cannot find next to the config, or does not
read because it lies outside the repository root; the config a launch names, not found."""

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
    summary = "A `defaults:` parent or a launch's config is not found or not read"
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
        Example(
            "run.sh",
            "python3 main.py training=llama/llama3_405b training.model.fp8=True "
            "training.model.fp8_hybrid=True\n",
            lines=(1,),
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
            elif note.kind == "missing-config":
                yield Finding(
                    span=note.span,
                    message=f"the config `{note.key}` this launch names is not found, not read",
                    note="the values it would set are unknown, so rules that need them stay "
                    "silent: a typo in the selection, or a checkout without its `conf/` tree",
                )
            elif note.kind == "parent-outside-repository":
                yield Finding(
                    span=note.span,
                    message=f"`defaults:` parent `{note.key}` is outside the repository, not read",
                    note="fp8lint reads parents only inside the repository root (the nearest "
                    "folder holding `.git`); its settings are left out of the effective config",
                )
