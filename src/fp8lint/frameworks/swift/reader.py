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
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default
from fp8lint.frameworks.shared.megatron_flags import fields_from_flags
from fp8lint.frameworks.shared.shell_args import dashed_flags
from fp8lint.frameworks.shared.transformer_config import (
    Profile,
    SurfaceDefaults,
    build_site,
    key_map,
)
from fp8lint.model import EditInfo, Fp8Site, Framework

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
    return [site]
