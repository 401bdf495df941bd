"""LLaMA-Factory and axolotl training YAML: top-level `fp8`, `fp8_backend` and
`fp8_enable_fsdp_float8_all_gather`, which both hand to Hugging Face Accelerate.

Neither file says anything about scaling: the recipe is fixed in the trainer's code, so every
value but the switch is that code's default (`default_of` names it), and no fix can write a
key (the site has no `edit`).

LLaMA-Factory (hiyouga/LLaMA-Factory at ff6d4d12, the corpus commit):
`src/llamafactory/hparams/training_args.py` `Fp8Arguments` (`fp8` False, `fp8_backend`
"auto", `fp8_enable_fsdp_float8_all_gather` False); `src/llamafactory/train/fp8_utils.py`
`create_fp8_kwargs` / `patch_accelerator_for_fp8`: backend `te` gives Accelerate's TE handler
with HYBRID, amax_history_len 16 and amax_compute_algo max (margin and interval stay at
Accelerate's 0 and 1); `torchao` and `auto` give `AORecipeKwargs` with torchao's `rowwise`
recipe and a module filter that skips names containing embed, lm_head, output or classifier;
any other backend (`msamp`) gives `AORecipeKwargs(config=None)`, Accelerate's tensorwise
default, with the same filter.  The all-gather flag is only logged there.  Gradient
checkpointing is on unless `disable_gradient_checkpointing: true` (`hparams/model_args.py`,
`model/model_utils/checkpointing.py`, through `gradient_checkpointing_enable`).

axolotl (axolotl-ai-cloud/axolotl at 067b021c): `src/axolotl/utils/schemas/config.py` (`fp8`,
`fp8_enable_fsdp_float8_all_gather`, `gradient_checkpointing`);
`src/axolotl/core/trainers/base.py` `additional_accelerate_args`: `Float8LinearConfig()`
(tensorwise) with the all-gather flag, in `AORecipeKwargs` without a module filter, so
Accelerate's own filter skips the first and last linear layers.
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, as_int, default, invalid_note, written
from fp8lint.frameworks.shared.te_recipes import TE, delayed_defaults
from fp8lint.frameworks.shared.transformer_config import as_bool
from fp8lint.frameworks.shared.tree_args import args_of_map
from fp8lint.model import (
    AmaxAlgo,
    AmaxScope,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

LLAMAFACTORY = "LLaMA-Factory"
AXOLOTL = "axolotl"
FP8_KEYS = ("fp8", "fp8_backend", "fp8_enable_fsdp_float8_all_gather")
# keys of LLaMA-Factory's own argument dataclasses (`hparams/*.py`) seen at the top level
LF_KEYS = frozenset(
    {"stage", "finetuning_type", "template", "cutoff_len", "dataset", "model_name_or_path"}
)
# keys of axolotl's config schema (`utils/schemas/config.py`)
AXOLOTL_KEYS = frozenset({"datasets", "sequence_len", "micro_batch_size", "num_epochs", "adapter"})
# LLaMA-Factory's TE handler: FP8RecipeKwargs/TERecipeKwargs(fp8_format="HYBRID",
# amax_history_len=16, amax_compute_algo="max"); margin and interval are Accelerate's defaults
LF_HISTORY = 16
LF_FILTER_NOTE = (
    "LLaMA-Factory's module filter skips layers named embed, lm_head, output or classifier"
)
ACCELERATE_FILTER_NOTE = "Accelerate's default AO filter skips the first and last linear layers"


def family(root: Node) -> str | None:
    """Which trainer a top-level mapping belongs to, by keys only that trainer has; None when
    it sets none of the FP8 keys or is not positively one of them."""
    keys = set(root.keys())
    if not keys & set(FP8_KEYS):
        return None
    if "fp8_backend" in keys or len(keys & LF_KEYS) >= 2:
        return LLAMAFACTORY
    if "base_model" in keys and keys & AXOLOTL_KEYS:
        return AXOLOTL
    return None


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map or root.merged:
        return []
    which = family(root)
    if which is None:
        return []
    args = args_of_map(file, root, (), root)
    return [_site(file, root, args, which)]


def _run_length(args: dict[str, Arg], anchor: Span) -> dict[str, Setting[Any]]:
    """`max_steps` (Hugging Face's, when positive) and whether the run fine-tunes: every
    `stage` but `pt` does (the default is `sft`), and so does `pt` with an adapter
    (`finetuning_type` other than `full`; the default is `lora`).  hiyouga/LLaMA-Factory
    `src/llamafactory/hparams/finetuning_args.py` @00577a85 (`FinetuningArguments`)."""
    out: dict[str, Setting[Any]] = {}
    steps = args.get("max_steps")
    if steps is not None and steps.known and (as_int(steps.value) or 0) > 0:
        out["train_steps"] = written(steps, as_int(steps.value))
    stage, kind = args.get("stage"), args.get("finetuning_type")
    if any(a is not None and not a.known for a in (stage, kind)):
        return out
    if stage is None:
        out["fine_tune"] = default(True, LLAMAFACTORY, "stage", anchor, "the default stage is sft")
    elif str(stage.value).lower() != "pt":
        out["fine_tune"] = written(stage, True)
    elif kind is None:
        out["fine_tune"] = default(True, LLAMAFACTORY, "finetuning_type", anchor, "LoRA")
    elif str(kind.value).lower() != "full":
        out["fine_tune"] = written(kind, True)
    return out


def _flag(args: dict[str, Arg], key: str, of: str) -> Setting[Any]:
    arg = args.get(key)
    if arg is None:
        return default(surfaces.defaults("llamafactory")[key], of, key, None)
    if not arg.known:
        return written(arg, None)
    return written(arg, as_bool(arg.value))


def _site(file: SourceFile, root: Node, args: dict[str, Arg], which: str) -> Fp8Site:
    enabled = _flag(args, "fp8", which)
    span = file.span_of(root)
    anchor = enabled.span or span
    invalid: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {"enabled": enabled}

    def fixed(value: Any, key: str, note: str | None = None, of: str = which) -> Setting[Any]:
        return default(value, of, key, anchor, note)

    backend = "torchao"
    if which == LLAMAFACTORY:
        arg = args.get("fp8_backend")
        if arg is None:
            backend = surfaces.defaults("llamafactory")["fp8_backend"]
            backend_setting = fixed(backend, "fp8_backend")
        elif not arg.known:
            backend, backend_setting = "", written(arg, None)
        else:
            checked = surfaces.check("llamafactory", {"fp8_backend": arg})
            invalid.extend(checked.invalid)
            # a rejected backend stays as written, case-folded: like msamp, it is none of the
            # three LLaMA-Factory builds a recipe for
            ok = checked.ok("fp8_backend")
            backend = checked.values["fp8_backend"] if ok else str(arg.value).lower()
            backend_setting = written(arg, backend)
        where = backend_setting.span or anchor
        if backend == "te":
            values["recipe"] = Setting[Recipe].model_construct(
                value=Recipe.DELAYED,
                known=True,
                provenance="derived",
                key="fp8_backend",
                span=where,
                note="LLaMA-Factory builds Accelerate's Transformer Engine handler",
            )
            values["fmt"] = fixed(Fp8Format.HYBRID, "fp8_format")
            accelerate = surfaces.defaults("accelerate")  # margin and interval stay Accelerate's
            values["margin"] = fixed(accelerate["margin"], "margin")
            values["amax_history_len"] = fixed(LF_HISTORY, "amax_history_len")
            values["interval"] = fixed(accelerate["interval"], "interval")
            values["amax_compute_algo"] = fixed(AmaxAlgo.MAX, "amax_compute_algo")
            reduce = delayed_defaults()["reduce_amax"]
            values["reduce_amax"] = default(reduce, TE, "reduce_amax", anchor)
            values["amax_scope"] = default(
                AmaxScope.WORLD,
                TE,
                "fp8_group",
                anchor,
                "Accelerate passes no amax group, so TE reduces over the world",
            )
        elif backend in ("torchao", "auto"):
            values["recipe"] = Setting[Recipe].model_construct(
                value=Recipe.ROWWISE,
                known=True,
                provenance="derived",
                key="fp8_backend",
                span=where,
                note="LLaMA-Factory passes torchao's `rowwise` Float8LinearConfig",
            )
            values["fmt"] = fixed(
                Fp8Format.E4M3, "fp8_format", "rowwise casts every operand to E4M3"
            )
            values["output_head_fp8"] = fixed(False, "module_filter_func", LF_FILTER_NOTE)
        elif backend:
            values["recipe"] = Setting[Recipe].model_construct(
                value=Recipe.TENSORWISE,
                known=True,
                provenance="derived",
                key="fp8_backend",
                span=where,
                note="LLaMA-Factory passes no torchao config for this backend: Accelerate's "
                "AO default (tensorwise) applies",
            )
            values["fmt"] = fixed(
                Fp8Format.HYBRID, "fp8_format", "tensorwise casts gradients to E5M2"
            )
            values["output_head_fp8"] = fixed(False, "module_filter_func", LF_FILTER_NOTE)
        off = args.get("disable_gradient_checkpointing")
        if off is None:
            values["recompute_granularity"] = fixed(
                "full",
                "disable_gradient_checkpointing",
                "LLaMA-Factory turns on Hugging Face gradient checkpointing (torch "
                "checkpoint) unless `disable_gradient_checkpointing: true`",
            )
        elif not off.known:
            values["recompute_granularity"] = written(off, None)
        elif as_bool(off.value) is False:
            values["recompute_granularity"] = written(off, "full")
        hf = args.get("gradient_checkpointing")  # Hugging Face's own switch, also honoured
        if hf is not None and hf.known and as_bool(hf.value) is True:
            values["recompute_granularity"] = written(hf, "full")
    else:
        values["recipe"] = fixed(
            Recipe.TENSORWISE, "fp8", "axolotl builds torchao's default Float8LinearConfig()"
        )
        values["fmt"] = fixed(Fp8Format.HYBRID, "fp8", "tensorwise casts gradients to E5M2")
        values["output_head_fp8"] = fixed(
            False, "module_filter_func", ACCELERATE_FILTER_NOTE, of="Accelerate"
        )
        gc = args.get("gradient_checkpointing")
        if gc is not None:
            if not gc.known:
                values["recompute_granularity"] = written(gc, None)
            elif gc.value not in (False, None) and as_bool(gc.value) is not False:
                values["recompute_granularity"] = written(gc, "full")
    if which == LLAMAFACTORY:
        values.update(_run_length(args, anchor))
    gather = args.get("fp8_enable_fsdp_float8_all_gather")
    if gather is not None and gather.known and as_bool(gather.value) is None:
        invalid.append(invalid_note(gather, "expected true or false"))
    return Fp8Site.model_construct(
        path=file.path,
        framework=Framework.ACCELERATE,
        kind=f"{which} config",
        span=span,
        enable_span=enabled.span if enabled.written else None,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )
