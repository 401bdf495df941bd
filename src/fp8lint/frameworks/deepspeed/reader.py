"""DeepSpeed configs: the MS-AMP `msamp` section, and FP8 keys DeepSpeed does not have.

DeepSpeed itself has no FP8 training key: its precision sections are `fp16`, `bf16` and
`amp` (microsoft/DeepSpeed `deepspeed/runtime/config.py`, v0.16.5).  FP8 with DeepSpeed
comes from Accelerate + Transformer Engine or from MS-AMP, whose patched DeepSpeed reads
`"msamp": {"enabled", "opt_level": "O1"|"O2"|"O3", "use_te"}` (MS-AMP user tutorial).
"""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, written
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, SourceNote

# Keys only a DeepSpeed config has at its top level (microsoft/DeepSpeed
# `deepspeed/runtime/config.py`, `constants.py`); `fp16`, `bf16` and `amp` count only as
# sections (`"bf16": {"enabled": true}`), since Hugging Face / LLaMA-Factory / axolotl
# configs write them as plain booleans.
_DS_KEYS = frozenset(
    {
        "train_batch_size",
        "train_micro_batch_size_per_gpu",
        "zero_optimization",
        "steps_per_print",
        "wall_clock_breakdown",
        "zero_allow_untested_optimizer",
        "gradient_clipping",
        "prescale_gradients",
        "communication_data_type",
    }
)
_DS_SECTIONS = frozenset({"fp16", "bf16", "amp", "msamp", "optimizer", "scheduler"})
# a training config that names a DeepSpeed file (`deepspeed: ds_z3.json`) is not one
OPT_LEVELS = ("O1", "O2", "O3")
NO_FP8_KEY = "`{key}` does nothing: DeepSpeed has no FP8 setting"
NO_FP8_WHY = (
    "DeepSpeed's precision sections are `fp16`, `bf16` and `amp`; FP8 comes from Accelerate "
    "+ Transformer Engine (`mixed_precision: fp8`) or MS-AMP's `msamp` section"
)


def is_deepspeed_config(root: Node) -> bool:
    """Positive identification: DeepSpeed's own structure, not keys other trainers share.

    An MS-AMP `msamp` section, or two of DeepSpeed's own keys / sections (`zero_optimization`,
    `train_micro_batch_size_per_gpu`, `"bf16": {...}`, ...).  `gradient_accumulation_steps`
    and a boolean `bf16: true` are Hugging Face Trainer keys too, and a `deepspeed:` key
    (a path to the DeepSpeed file) marks a launcher config, so neither counts."""
    if "deepspeed" in set(root.keys()):
        return False
    own = 0
    for key, value in root.items():
        name = key.raw
        if name is None:
            continue
        if name == "msamp" and value.deref().is_map:
            return True
        if name in _DS_KEYS or (name in _DS_SECTIONS and value.deref().is_map):
            own += 1
    return own >= 2


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    if not is_deepspeed_config(root):
        return []
    notes = [
        SourceNote.model_construct(
            kind="ignored",
            key=k.raw or "",
            span=file.span(k.start, v.end),
            message=NO_FP8_KEY.format(key=k.raw),
            why=NO_FP8_WHY,
        )
        for k, v in root.items()
        if k.raw is not None and "fp8" in k.raw.lower()
    ]
    pair = root.get("msamp")
    if pair is None or not pair[1].is_map:
        # a DeepSpeed config without MS-AMP is still a site (FP8 off), so that removing a
        # dead `fp8` key leaves the file's shape as it was
        return [
            Fp8Site.model_construct(
                path=file.path,
                framework=Framework.DEEPSPEED_MSAMP,
                kind="DeepSpeed config",
                edit=edit_info(file, doc, root, {}),
                span=file.span_of(root),
                enabled=Setting[bool].model_construct(
                    value=False,
                    known=True,
                    provenance="default",
                    key="msamp.enabled",
                    default_of="DeepSpeed",
                ),
                notes=notes,
            )
        ]
    args = args_of_map(file, root, ("msamp",), pair[1].deref(), "msamp.{key}")
    checked = surfaces.check("deepspeed", args)
    en = args.get("enabled")
    if en is None:
        enabled = default(False, "MS-AMP", "msamp.enabled", None)
    elif not checked.ok("enabled"):
        enabled = written(en, None)
    else:
        enabled = written(en, bool(checked.values["enabled"]))
    invalid: list[SourceNote] = list(checked.invalid)
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.DEEPSPEED_MSAMP,
            kind="DeepSpeed MS-AMP section",
            edit=edit_info(file, doc, root, {}),
            span=file.span(pair[0].start, pair[1].end),
            enable_span=enabled.span if enabled.written else None,
            enabled=enabled,
            recipe=Setting[Recipe].model_construct(
                value=Recipe.MSAMP,
                known=True,
                provenance="derived",
                key="msamp",
                span=file.span_of(pair[0]),
            ),
            notes=notes,
            invalid=invalid,
        )
    ]
