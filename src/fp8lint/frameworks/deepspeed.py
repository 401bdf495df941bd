"""DeepSpeed configs: the MS-AMP `msamp` section, and FP8 keys DeepSpeed does not have.

DeepSpeed itself has no FP8 training key: its precision sections are `fp16`, `bf16` and
`amp` (microsoft/DeepSpeed `deepspeed/runtime/config.py`, v0.16.5).  FP8 with DeepSpeed
comes from Accelerate + Transformer Engine or from MS-AMP, whose patched DeepSpeed reads
`"msamp": {"enabled", "opt_level": "O1"|"O2"|"O3", "use_te"}` (MS-AMP user tutorial).
"""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks import surfaces
from fp8lint.frameworks.base import default, written
from fp8lint.frameworks.tree_args import args_of_map, edit_info
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, SourceNote

_DS_KEYS = {
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "zero_optimization",
    "fp16",
    "bf16",
    "msamp",
}
NO_FP8_KEY = (
    "DeepSpeed has no FP8 setting: its precision sections are `fp16`, `bf16` and `amp`, so "
    "`{key}` does nothing. FP8 with DeepSpeed comes from Accelerate + Transformer Engine "
    "(`mixed_precision: fp8`) or from MS-AMP's `msamp` section"
)


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    keys = set(root.keys())
    if len(keys & _DS_KEYS) < 2 and "msamp" not in keys:
        return []
    notes = [
        SourceNote.model_construct(
            kind="ignored",
            key=k.raw or "",
            span=file.span(k.start, v.end),
            message=NO_FP8_KEY.format(key=k.raw),
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
