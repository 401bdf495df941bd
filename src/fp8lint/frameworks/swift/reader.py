"""ModelScope Swift's Megatron CLI: `megatron sft|pt|rlhf --fp8_format hybrid ...`.

Swift parses its own dataclass of Megatron arguments (flags spelled with underscores, booleans
written `true`/`false`), then hands Megatron every value that is not None or False as a dashed
flag, so the semantics are Megatron's.  Its defaults differ from Megatron's where Swift's
dataclass sets a field (modelscope/ms-swift `swift/megatron/argument/megatron_args.py`,
`MegatronArguments`, read at commit 00840e65ad861f8157eddc27d7ddfeac0ebb3d7a):
`fp8_format` None (FP8 off), `fp8_recipe` "delayed", `fp8_amax_history_len` 1024,
`fp8_amax_compute_algo` "max", `fp8_param_gather` False, `recompute_granularity` "selective"
(of `core_attn`).  Swift has no margin, interval or `tp_only_amax_red` argument, so
Megatron's own defaults (margin 0, interval 1, reduction over TP x DP x CP) apply; they can
only be changed through `--megatron_extra_kwargs` JSON, which is read too.  The model's shape
comes from the Hugging Face checkpoint, so no shape default is assumed.

Since ms-swift 4 the arguments live in `swift/megatron/arguments/megatron_args.py` (read at
modelscope/ms-swift@3602360a562313afbf2ef6065fdf61f271a2c5b9, 2026-08-22).  FP4 (PR #9330):
`fp4_format` Literal['e2m1'] default None (L643), `fp4_recipe` Literal['nvfp4'] default
"nvfp4" (L644), `fp4_param_gather` False (L645); Swift copies `fp4_format` to Megatron's
`fp4` (L839).  Besides FP8/FP4 this reader fills what the launch-time failures need:
`padding_free` default True (L524; `--packing true` forces it, `megatron_base_args.py`
L36-37) as `packing`; `tuner_type` (`train_type` before ms-swift 4) 'lora' / 'lora_llm' as
`peft` (L449; 'full' is full training, left unset); `use_precision_aware_optimizer` False
(L504), `exp_avg_dtype` / `exp_avg_sq_dtype` 'fp32' (L507-508), `optimizer` 'adam' (L500),
`use_distributed_optimizer` True (L587).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from typing import Any

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.frameworks.shared.megatron_flags import fields_from_flags
from fp8lint.frameworks.shared.shell_args import dashed_flags
from fp8lint.frameworks.shared.transformer_config import (
    Profile,
    SurfaceDefaults,
    build_site,
    key_map,
)
from fp8lint.model import EditInfo, Fp8Site, Framework, Setting

SUBCOMMANDS = frozenset({"sft", "pt", "rlhf"})
TUNING = frozenset({"sft", "rlhf"})  # `pt` pretrains (or continues pretraining)
LABEL = "ms-swift"
SWIFT_DEFAULTS = SurfaceDefaults("swift", drop=("recompute_granularity",))
EXTRA_KWARGS = ("--megatron_extra_kwargs", "--extra_megatron_kwargs")

# model field -> Swift argument, only for the arguments Swift's dataclass has (a fix may not
# add a flag Swift's parser rejects)
SWIFT_KEYS: dict[str, str] = {
    "fmt": "--fp8_format",
    "recipe": "--fp8_recipe",
    "amax_history_len": "--fp8_amax_history_len",
    "amax_compute_algo": "--fp8_amax_compute_algo",
    "fp8_param_gather": "--fp8_param_gather",
    "tensor_parallel": "--tensor_model_parallel_size",
    "pipeline_parallel": "--pipeline_model_parallel_size",
    "context_parallel": "--context_parallel_size",
    "expert_parallel": "--expert_model_parallel_size",
    "expert_tensor_parallel": "--expert_tensor_parallel_size",
    "sequence_parallel": "--sequence_parallel",
}


def _spell(name: str) -> str:
    """How a Swift user sets a field: its own flag, else a key of the extra-kwargs JSON."""
    flag = "--" + {"fp8": "fp8_format"}.get(name, name)
    if flag in SWIFT_KEYS.values() or name in ("fp8", "recompute_granularity"):
        return flag
    return f"{EXTRA_KWARGS[0]} {name}"


PROFILE = Profile(
    framework=Framework.MEGATRON,
    label=LABEL,
    defaults=SWIFT_DEFAULTS,
    surface="swift",
    keys=key_map(_spell),
    kind="ms-swift `megatron` command",
)


def _entry(command: list[Word]) -> int | None:
    """Index of the subcommand word when `command` runs Swift's `megatron` CLI."""
    for i, word in enumerate(command[:-1]):
        if os.path.basename(word.text) == "megatron" and command[i + 1].text in SUBCOMMANDS:
            return i + 1
    return None


def _extra(file: SourceFile, flags: dict[str, Arg]) -> dict[str, Arg]:
    """`--megatron_extra_kwargs '{"fp8_margin": 1}'`: each key is a Megatron argument."""
    out: dict[str, Arg] = {}
    for name in EXTRA_KWARGS:
        arg = flags.get(name)
        if arg is None or not arg.known or not isinstance(arg.value, str):
            continue
        try:
            data = json.loads(arg.value)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            continue
        if isinstance(data, dict):
            for key, value in data.items():
                key = "--" + str(key).replace("-", "_")
                out[key] = replace(arg, key=key, value=value, raw=json.dumps(value))
    return out


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """A Swift `megatron sft|pt|rlhf` command as one Megatron site with Swift's defaults."""
    idx = _entry(command)
    if idx is None:
        return None
    flags, anchor = dashed_flags(file, command[idx + 1 :])
    fields = fields_from_flags({**_extra(file, flags), **flags})
    if "--num_query_groups" in flags:  # Swift derives group_query_attention from it
        fields["num_query_groups"] = flags["--num_query_groups"]
    sub = command[idx]
    if sub.text in TUNING and "finetune" not in fields:  # sft / rlhf start from a trained model
        at = file.span_of_indices(sub.start, sub.end)
        fields["finetune"] = Arg(
            f"megatron {sub.text}", True, at, at, note="post-training from a trained model"
        )
    first, last = command[idx - 1], command[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end))
    edit = None
    if anchor is not None:
        edit = EditInfo.model_construct(
            syntax="shell",
            flow=True,
            insert_after=file.span_of_indices(anchor.start, anchor.end),
            keys=SWIFT_KEYS,
        )
    profile = replace(PROFILE, kind=f"ms-swift `megatron {command[idx].text}` command", edit=edit)
    site = build_site(fields, profile, file.path, span)
    if "recompute_granularity" not in fields:
        anchor_span = site.enabled.span if site.enabled.written else span
        recompute = default(
            surfaces.defaults("swift")["recompute_granularity"],
            LABEL,
            "--recompute_granularity",
            anchor_span,
            "Swift recomputes `core_attn` by default",
        )
        site = site.model_copy(update={"recompute_granularity": recompute})
    return [site.model_copy(update=_run_settings(flags, site))]


# Swift argument -> (model field, Swift's default), read at ms-swift@3602360a
# `swift/megatron/arguments/megatron_args.py`
_RUN_DEFAULTS: dict[str, tuple[str, object]] = {
    "--use_precision_aware_optimizer": ("precision_aware_optimizer", False),  # L504
    "--exp_avg_dtype": ("exp_avg_dtype", "fp32"),  # L507
    "--exp_avg_sq_dtype": ("exp_avg_sq_dtype", "fp32"),  # L508
    "--optimizer": ("optimizer", "adam"),  # L500
    "--use_distributed_optimizer": ("distributed_optimizer", True),  # L587
}
_BOOLS = frozenset({"--use_precision_aware_optimizer", "--use_distributed_optimizer"})
_LORA = frozenset({"lora", "lora_llm"})


def _bool(arg: Arg) -> bool | None:
    if not arg.known:
        return None
    if isinstance(arg.value, bool):
        return arg.value
    text = str(arg.value).lower()
    return {"true": True, "1": True, "false": False, "0": False}.get(text)


def _run_settings(flags: dict[str, Arg], site: Fp8Site) -> dict[str, Setting[Any]]:
    """The optimizer, packing and PEFT settings of a Swift launch, with Swift's defaults."""
    anchor = site.enabled.span if site.enabled.written else site.span
    out: dict[str, Setting[Any]] = {}
    for flag, (name, value) in _RUN_DEFAULTS.items():
        arg = flags.get(flag)
        if arg is None:
            out[name] = default(value, LABEL, flag, anchor)
        elif flag in _BOOLS:
            out[name] = written(arg, _bool(arg))
        else:
            out[name] = written(arg, str(arg.value).lower() if arg.known else None)
    packing, free = flags.get("--packing"), flags.get("--padding_free")
    if packing is not None and _bool(packing) is not False:  # packing forces padding-free
        out["packing"] = written(packing, _bool(packing))
    elif free is not None:
        out["packing"] = written(free, _bool(free))
    else:
        out["packing"] = default(
            True, LABEL, "--padding_free", anchor, "Megatron-SWIFT flattens batches by default"
        )
    tuner = flags.get("--tuner_type") or flags.get("--train_type")
    if tuner is not None and not tuner.known:
        out["peft"] = written(tuner, None)
    elif tuner is not None and str(tuner.value).lower() in _LORA:
        out["peft"] = written(tuner, "lora")
    return out
