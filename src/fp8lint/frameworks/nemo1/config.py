"""NeMo 1.x Hydra configs and NeMo-Framework-Launcher training configs (`model.fp8*`).

NeMo 1.x turns `model.fp8` + `fp8_e4m3`/`fp8_hybrid` into Megatron's `fp8` format (e4m3 is
checked first) and raises when FP8 is on and neither is set
(`nemo/collections/nlp/models/language_modeling/megatron_gpt_model.py`).  On the Megatron-Core
path (`mcore_gpt: true`) every other TransformerConfig field is copied from `model.` when
present, otherwise Megatron's default applies — so a missing `fp8_amax_history_len` is 1, not
the 1024 of NeMo's own legacy path; and `reduce_amax` is not a TransformerConfig field, so it
is ignored there (`megatron_base_model.py`, `build_transformer_config`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fp8lint.documents.editing import Editor
from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, as_int, written
from fp8lint.frameworks.shared.transformer_config import (
    MODEL_TO_CONFIG,
    Profile,
    SurfaceDefaults,
    as_bool,
    build_site,
)
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import Fp8Format, Fp8Site, Framework, Setting, SourceNote

# Megatron-Core path: Megatron's defaults; legacy path: NeMo's (`reduce_amax` is reported by
# `build_site` as TE's, and the format keys are read here)
MCORE_DEFAULTS = SurfaceDefaults(None)
NEMO_LEGACY_DEFAULTS = SurfaceDefaults(
    "nemo1",
    drop=("fp8", "fp8_e4m3", "fp8_hybrid", "transformer_engine", "reduce_amax"),
)
_REDUCE_AMAX_IGNORED = (
    "`model.reduce_amax` is not read on NeMo's Megatron-Core path (`mcore_gpt: true`)"
)
_REDUCE_AMAX_WHY = (
    "it is not a TransformerConfig field; Megatron always reduces amax (TE's "
    "`reduce_amax=True`) over its amax-reduction group"
)
_RENAMES = {
    "encoder_seq_length": "seq_length",
    "fp8_params": "fp8_param_gather",
    "activations_checkpoint_granularity": "recompute_granularity",
}


def _fine_tune(file: SourceFile, root: Node, fields: dict[str, Arg], model: Node) -> Arg | None:
    """What says the run fine-tunes a trained model: `model.restore_from_path` (NeMo's SFT and
    PEFT configs start from a `.nemo` file; `???` is a required value, still a fine-tune) or
    a `model.peft.peft_scheme` (NVIDIA/NeMo `examples/nlp/language_modeling/tuning/conf/
    megatron_gpt_finetuning_config.yaml` @00780235)."""
    restore = fields.get("restore_from_path")
    if restore is not None and (not restore.known or restore.value is not None):
        return replace(restore, value=True, known=True, note="starts from a trained model")
    peft = model.get("peft")
    if peft is not None and peft[1].is_map:
        found = args_of_map(file, root, ("model", "peft"), peft[1], "model.peft.{key}")
        scheme = found.get("peft_scheme")
        if scheme is not None and scheme.known and scheme.value not in (None, "none"):
            return replace(scheme, value=True, note=f"PEFT ({scheme.value})")
    return None


def from_tree(file: SourceFile, doc: Document, base_missing: bool = False) -> list[Fp8Site]:
    """The `model:` section of a NeMo 1.x config.  `base_missing`: the tree holds only a
    NeMo 1.x program's command-line overrides (its config is not in the repository), so the
    program, not the keys, says it is NeMo 1.x, and what the config would set is unknown."""
    root = doc.root
    if root is None or not root.is_map:
        return []
    pair = root.get("model")
    if pair is None or not pair[1].is_map:
        return []
    model = pair[1].deref()
    keys = set(model.keys())
    nemo_keys = {"fp8_hybrid", "fp8_e4m3"} & keys or (
        "fp8" in keys and "transformer_engine" in keys
    )
    if not nemo_keys and not (base_missing and "fp8" in keys):
        return []
    fields = args_of_map(file, root, ("model",), model, "model.{key}")
    for old, new in _RENAMES.items():
        if old in fields and new not in fields:
            fields[new] = fields.pop(old)
    mcore_arg = fields.get("mcore_gpt")
    mcore = not (mcore_arg is not None and mcore_arg.known and as_bool(mcore_arg.value) is False)

    # world size from the trainer section
    trainer = root.get("trainer")
    if trainer is not None and trainer[1].is_map:
        targs = args_of_map(file, root, ("trainer",), trainer[1].deref(), "trainer.{key}")
        devices, nodes = targs.get("devices"), targs.get("num_nodes")
        d = as_int(devices.value) if devices is not None and devices.known else None
        n = as_int(nodes.value) if nodes is not None and nodes.known else 1
        if devices is not None and d is not None and d > 0 and n is not None and n > 0:
            fields["world_size"] = replace(
                devices,
                key="trainer.devices x trainer.num_nodes",
                value=d * n,
                note=f"{d} devices x {n} nodes",
            )
        steps = targs.get("max_steps")  # -1: run `max_epochs` instead, a length not known here
        if steps is not None and steps.known and (as_int(steps.value) or 0) > 0:
            fields["train_iters"] = steps
    tune = _fine_tune(file, root, fields, model)
    if tune is not None:
        fields["finetune"] = tune

    notes: list[SourceNote] = []
    checked = surfaces.check("nemo1", fields)  # before `fp8` (a boolean here) is taken out
    good = checked.values
    fp8 = fields.pop("fp8", None)
    e4m3, hybrid = fields.get("fp8_e4m3"), fields.get("fp8_hybrid")
    if fp8 is None:
        enabled = Setting[bool].model_construct(
            value=False, known=True, provenance="default", key="model.fp8", default_of="NeMo 1.x"
        )
    elif not fp8.known:
        enabled = written(fp8, None)
    else:
        on = good.get("fp8")
        enabled = written(fp8, on) if on is not None else written(replace(fp8, known=False), None)
    is_e4m3 = bool(good.get("fp8_e4m3"))
    is_hybrid = bool(good.get("fp8_hybrid"))
    fmt: Setting[Fp8Format]
    if is_e4m3:
        assert e4m3 is not None
        fmt = written(e4m3, Fp8Format.E4M3)
    elif is_hybrid:
        assert hybrid is not None
        fmt = written(hybrid, Fp8Format.HYBRID)
    else:
        fmt = Setting[Fp8Format].model_construct(known=False)
    if enabled.value is True and fp8 is not None:
        if is_e4m3 and is_hybrid:
            assert e4m3 is not None and hybrid is not None
            notes.append(
                SourceNote.model_construct(
                    kind="conflict",
                    key="model.fp8_e4m3",
                    span=hybrid.span,
                    message="`model.fp8_e4m3` and `model.fp8_hybrid` are both true; "
                    "`fp8_hybrid` is ignored",
                    why="NeMo checks `fp8_e4m3` first, so E4M3 is used in both passes",
                )
            )
        elif (
            not base_missing  # the missing config may set the format
            and not is_e4m3
            and not is_hybrid
            and (e4m3 is None or "fp8_e4m3" in good)
            and (hybrid is None or "fp8_hybrid" in good)
        ):
            notes.append(
                SourceNote.model_construct(
                    kind="conflict",
                    key="model.fp8",
                    span=fp8.span,
                    message="`model.fp8` is true but neither `model.fp8_e4m3` nor "
                    "`model.fp8_hybrid` is",
                    why='NeMo raises "fp8 enabled but fp8_format (fp8_e4m3 | fp8_hybrid) is '
                    'not set" at launch',
                )
            )
    reduce = fields.get("reduce_amax")
    if mcore and reduce is not None and reduce.known and as_bool(reduce.value) is False:
        notes.append(
            SourceNote.model_construct(
                kind="ignored",
                key=reduce.key,
                span=reduce.span,
                message=_REDUCE_AMAX_IGNORED,
                why=_REDUCE_AMAX_WHY,
            )
        )
    profile = Profile(
        framework=Framework.NEMO1,
        label="Megatron-LM (NeMo 1.x Megatron-Core path)" if mcore else "NeMo 1.x",
        defaults=MCORE_DEFAULTS if mcore else NEMO_LEGACY_DEFAULTS,
        surface="nemo1",
        prefix="model.",
        kind="NeMo 1.x model config",
        ignored={"reduce_amax": _REDUCE_AMAX_IGNORED} if mcore else {},
    )
    span = file.span(pair[0].start, pair[1].end)
    profile = replace(profile, edit=edit_info(file, doc, model, MODEL_TO_CONFIG))
    return [
        build_site(
            fields, profile, file.path, span, enabled=enabled, fmt=fmt, notes=notes, checked=checked
        )
    ]


def write_format(editor: Editor, site: Fp8Site, value: Any, raw: list[tuple[int, int, str]]) -> str:
    """NeMo 1.x spells the format as two booleans, `fp8_e4m3` and `fp8_hybrid` (e4m3 wins when
    both are true), so a new format rewrites or adds both."""
    want = {"fp8_e4m3": value.value == "e4m3", "fp8_hybrid": value.value == "hybrid"}
    text = editor.file.text
    for key, flag in want.items():
        span = editor.container.values.get(key)
        if span is not None:
            start, end = editor.range_of(span)
            raw.append((start, end, editor.literal(flag, text[start:end])))
        elif flag:
            at, content = editor.insertion(key, editor.literal(flag, None))
            raw.append((at, at, content))
    return ""
