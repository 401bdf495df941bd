"""FP8402: a setting that is written but has no effect."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import Fp8Site, Recipe, Setting, SourceNote
from fp8lint.rule import Example, Finding, FixPlan, RemoveEntry, RenameKey, Rule

# The values the stacks ship as defaults for the delayed-scaling knobs: Transformer Engine's
# DelayedScaling (margin 0, history 1024, `max`) and Megatron's TransformerConfig (0, 1,
# `most_recent`).  A knob left at one of them under another recipe is harmless, and common in
# NVIDIA's own files, so it is not reported.
STOCK_VALUES: dict[str, tuple[object, ...]] = {
    "margin": (0,),
    "amax_history_len": (1024, 1),
    "amax_compute_algo": ("max", "most_recent"),
}


class IgnoredSetting(Rule):
    code = "FP8402"
    name = "ignored-setting"
    severity = Severity.INFO
    severity_note = "warning for Accelerate wizard keys"
    fix = Applicability.SAFE
    summary = "A setting that is written but ignored (dead key, removed knob, misspelling)"
    valid = (
        Example(
            "interval1.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-interval: 1\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
        ),
        Example(
            "cs_defaults.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --fp8-margin: 0\n  --fp8-amax-history-len: 1\n  --first-last-layers-bf16: true\n",
        ),
    )
    invalid = (
        Example(
            "interval.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-interval: 4\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
        Example(
            "wizard.yaml",
            "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 1024\n",
            lines=(4,),
            fixed="mixed_precision: fp8\nfp8_config:\n  backend: TE\n",
        ),
        Example(
            "wizard_rename.yaml",
            "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_compute_algorithm: max\n",
            lines=(4,),
            fixed="mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_compute_algo: max\n",
        ),
        Example(
            "ds.json",
            '{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true},\n'
            '  "fp8": {"enabled": true}\n}\n',
            lines=(4,),
            fixed='{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true}\n}\n',
            unsafe=True,
        ),
        Example(
            "cs_margin.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
            "  --fp8-margin: 2\n  --first-last-layers-bf16: true\n",
            lines=(4,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n"
                "  --first-last-layers-bf16: true\n"
            ),
            unsafe=True,
        ),
        Example(
            "wgrad.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --no-fp8-wgrad: true\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            lines=(3,),
            fixed=(
                "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                "  --fp8-amax-compute-algo: max\n"
            ),
            unsafe=True,
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        for n in site.notes:
            if n.kind in ("ignored", "misspelled"):
                yield Finding(
                    span=n.span,
                    message=n.message,
                    note=n.why,
                    severity=Severity.WARNING if n.kind == "misspelled" else None,
                    fix=_note_fix(site, n),
                )
        if not site.is_on:
            return
        interval = site.interval
        if (
            interval.written
            and interval.value is not None
            and interval.value != 1
            and interval.span
        ):
            yield Finding(
                span=interval.span,
                message=f"`{interval.key}` {interval.value} is ignored: scales update every step",
                note="TE ignores the amax update interval since v1.8 and removed it in v2.3",
                fix=_removal(interval, "interval"),
            )
        olp = site.override_linear_precision
        if olp.written and olp.value and "true" in olp.value and olp.span:
            yield Finding(
                span=olp.span,
                message=f"`{olp.key}` {olp.value} has no effect on TE >= 2.0",
                note=(
                    "TE 2.0 removed override_linear_precision and drops it silently, so "
                    "those GEMMs still run in FP8"
                ),
                fix=_removal(olp, "override_linear_precision"),
            )
        wgrad = site.fp8_wgrad
        if wgrad.written and wgrad.value is False and site.is_delayed and wgrad.span:
            yield Finding(
                span=wgrad.span,
                message=f"`{wgrad.key}` has no effect on TE >= 2.0: wgrad still runs in FP8",
                note=(
                    "Megatron passes it to TE as override_linear_precision, which TE 2.0 "
                    "removed and drops silently"
                ),
                fix=_removal(wgrad, "fp8_wgrad"),
            )
        recipe = site.recipe.value
        if recipe is None or recipe in (Recipe.DELAYED, Recipe.MSAMP, Recipe.CUSTOM):
            return
        for setting, name in (
            (site.margin, "margin"),
            (site.amax_history_len, "amax_history_len"),
            (site.amax_compute_algo, "amax_compute_algo"),
        ):
            if not setting.written or setting.span is None or setting.value is None:
                continue
            value = getattr(setting.value, "value", setting.value)
            if value in STOCK_VALUES[name]:
                continue  # left at a default: harmless, and common in NVIDIA's own files
            if any(n.kind == "conflict" and n.key == setting.key for n in site.notes):
                continue  # the stack refuses it (FP8403): not merely ignored
            yield Finding(
                span=setting.span,
                message=f"`{setting.key}` {value} does nothing under the {recipe.value} recipe",
                note=(
                    "only delayed scaling reads it; current-scaling recipes compute their "
                    "scales from the current tensor"
                ),
                fix=_removal(setting, name),
            )


# the setting a misspelled Accelerate key was meant to set
_MEANT = {"amax_history_len": "amax_history_len", "amax_compute_algo": "amax_compute_algo"}


def _removal(setting: Setting[Any], field: str) -> FixPlan | None:
    """Delete a dead key with its line; the field falls back to its (equivalent) default."""
    if setting.entry is None:
        return None
    return FixPlan(
        Applicability.SAFE,
        f"remove `{setting.key}`",
        (RemoveEntry(setting.entry, setting.key.rsplit(".", 1)[-1], field),),
    )


def _note_fix(site: Fp8Site, n: SourceNote) -> FixPlan:
    old = n.key.rsplit(".", 1)[-1]
    if n.kind == "misspelled" and n.replacement:
        new = n.replacement.rsplit(".", 1)[-1]
        taken = site.edit is not None and new in site.edit.values
        if not taken:
            return FixPlan(
                Applicability.SAFE,
                f"rename `{old}` to `{new}`",
                (RenameKey(n.span, old, new, _MEANT.get(new)),),
            )
    return FixPlan(Applicability.SAFE, f"remove `{n.key}`", (RemoveEntry(n.span, old),))
