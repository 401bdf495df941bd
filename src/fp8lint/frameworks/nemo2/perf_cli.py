"""NVIDIA's performance launchers: `scripts/performance/...` in NeMo 2 and Megatron-Bridge,
which take the precision as `-c/--compute_dtype` (and, in NeMo, `-fr/--fp8_recipe`) and
pick a named mixed-precision preset from it.  They are not Megatron entry points, even when
the script is called `pretrain_*.py`: `--fp8_recipe cs` is NeMo's short name, not Megatron's
`--fp8-recipe`.

- NeMo 2 (`scripts/performance/llm/pretrain_*.py`, `finetune_*.py`): `--compute_dtype
  {bf16,fp8}` (default bf16) and `--fp8_recipe {ds,cs,mxfp8,ss}` (default ds): `ds` ->
  `bf16_with_fp8_mixed` (delayed, history 1024, max), `cs` -> `bf16_with_fp8_current_scaling_
  mixed` with the BF16 first/last layers turned off, `mxfp8` -> `bf16_with_mxfp8_mixed`, `ss`
  -> `bf16_with_fp8_subchannel_scaling_mixed` (NVIDIA/NeMo `scripts/performance/
  argument_parser.py` and `helpers.py`, `set_precision_configs`). Parallelism flags
  `-tp/--tensor_parallel_size`, `-pp`, `-cp`, `-ep`, `-et`.
- Megatron-Bridge (`scripts/performance/setup_experiment.py`, `run_script.py`):
  `--compute_dtype {bf16,fp8_cs,fp8_mx,fp8_sc,nvfp4}` (default bf16) through
  `_perf_precision`: `fp8_cs` / `fp8_ds` are the current / delayed presets with the BF16
  first/last layers turned off, `fp8_mx` the MXFP8 preset (NVIDIA-NeMo/Megatron-Bridge
  `scripts/performance/argument_parser.py` at 0011064168ba2ac106177eb8247a50f1e87e45b1 and
  the perf recipes' `_perf_precision`). Parallelism flags `-tp/--tensor_model_parallel_size`,
  `-pp`, `-cp`, `-ep`, `-et`; `--num_moe_experts` (default None) overrides the recipe's
  `model.num_moe_experts` (`scripts/performance/utils/overrides.py` L595-596 @067f987d).

Both take the target hardware as `-g/--gpu` (required): NeMo `{h100,b200,gb200}` (NVIDIA/NeMo
`scripts/performance/argument_parser.py` L43-50 @8cfedd72), Megatron-Bridge the keys of
`NUM_GPUS_PER_NODE_MAP` (`{h100,b200,b300,gb200,gb300,vr200,r100}`, `argument_parser.py`
L30-38 and L686-693 @067f987d).  The written name becomes the site's `gpu`; a name the
launcher does not accept, or one that cannot be read (`-g $GPU`), leaves it unknown.

No fix is offered: the launcher chooses the recipe's values.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.shared.base import Arg, written
from fp8lint.frameworks.shared.mixed_precision import (
    BRIDGE_PROFILE,
    NEMO2_PROFILE,
    PRESET_CHANGES,
    PRESETS,
)
from fp8lint.frameworks.shared.shell_args import word_arg, word_value
from fp8lint.frameworks.shared.transformer_config import build_site
from fp8lint.model import Fp8Site, Setting

ENTRY = re.compile(r"(^|[/.])performance[/.]([\w]+[/.])?\w+(\.py)?$")
RUN_RECIPE = re.compile(r"(^|/)run_recipe\.py$")
NO_BF16_EDGES = {"first_last_layers_bf16": False}
# NeMo 2: --fp8_recipe -> (preset, changes)
NEMO_RECIPES: dict[str, tuple[str, dict[str, Any]]] = {
    "ds": ("bf16_with_fp8_mixed", {}),
    "cs": ("bf16_with_fp8_current_scaling_mixed", NO_BF16_EDGES),
    "mxfp8": ("bf16_with_mxfp8_mixed", {}),
    "ss": ("bf16_with_fp8_subchannel_scaling_mixed", {}),
}
# Megatron-Bridge: --compute_dtype -> (preset, changes)
BRIDGE_DTYPES: dict[str, tuple[str, dict[str, Any]]] = {
    "fp8_cs": ("bf16_with_fp8_current_scaling_mixed", NO_BF16_EDGES),
    "fp8_ds": ("bf16_with_fp8_delayed_scaling_mixed", NO_BF16_EDGES),
    "fp8_mx": ("bf16_with_mxfp8_mixed", {}),
    "fp8_sc": ("bf16_with_fp8_subchannel_scaling_mixed", {}),
    # `nvfp4` -> `bf16_with_nvfp4_mixed()` unchanged (scripts/performance/utils/
    # precision.py L39-41, perf_recipes/_common.py L118-119 @067f987d)
    "nvfp4": ("bf16_with_nvfp4_mixed", {}),
}
DTYPE_FLAGS = ("-c", "--compute_dtype")
GPU_FLAGS = ("-g", "--gpu")
NEMO_GPUS = frozenset({"h100", "b200", "gb200"})
BRIDGE_GPUS = frozenset({"h100", "b200", "b300", "gb200", "gb300", "vr200", "r100"})
RECIPE_FLAGS = ("-fr", "--fp8_recipe")
TOPOLOGY: dict[str, str] = {
    "-tp": "tensor_model_parallel_size",
    "--tensor_parallel_size": "tensor_model_parallel_size",
    "--tensor_model_parallel_size": "tensor_model_parallel_size",
    "-pp": "pipeline_model_parallel_size",
    "--pipeline_parallel_size": "pipeline_model_parallel_size",
    "--pipeline_model_parallel_size": "pipeline_model_parallel_size",
    "-cp": "context_parallel_size",
    "--context_parallel_size": "context_parallel_size",
    "-ep": "expert_model_parallel_size",
    "--expert_parallel_size": "expert_model_parallel_size",
    "--expert_model_parallel_size": "expert_model_parallel_size",
    "-et": "expert_tensor_parallel_size",
    "--expert_tensor_parallel_size": "expert_tensor_parallel_size",
    "-ng": "world_size",
    "--num_gpus": "world_size",
}
BRIDGE_MODEL: dict[str, str] = {"--num_moe_experts": "num_moe_experts"}


def _entry(command: list[Word]) -> int | None:
    for i, word in enumerate(command):
        if RUN_RECIPE.search(word.text):
            return None  # `--recipe NAME KEY=VALUE`: read by `bridge_cli`
        if ENTRY.search(word.text) and "scripts" in word.text:
            return i
    return None


def _flags(file: SourceFile, words: list[Word]) -> dict[str, Arg]:
    """`-x value`, `--flag value` and `--flag=value` words (the launchers' argparse style)."""
    out: dict[str, Arg] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if not w.text.startswith("-") or w.text == "-":
            i += 1
            continue
        name, eq, inline = w.text.partition("=")
        if eq:
            value_word = Word(inline, w.end - len(inline), w.end, w.known)
        elif i + 1 < len(words) and not words[i + 1].text.startswith("-"):
            value_word = words[i + 1]
            i += 1
        else:
            i += 1
            continue
        out[name] = word_arg(file, name, w, value_word, word_value(value_word))
        i += 1
    return out


def _first(flags: dict[str, Arg], names: tuple[str, ...]) -> Arg | None:
    for name in names:
        if name in flags:
            return flags[name]
    return None


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    idx = _entry(command)
    if idx is None:
        return None
    flags = _flags(file, command[idx + 1 :])
    dtype = _first(flags, DTYPE_FLAGS)
    if dtype is None or (dtype.known and str(dtype.value).lower() in ("bf16", "fp16", "fp32")):
        return []  # both launchers default to BF16
    fields: dict[str, Arg] = {}
    for flag, field in TOPOLOGY.items():
        if flag in flags:
            fields[field] = flags[flag]
    value = str(dtype.value).lower() if dtype.known else None
    how = f"`{dtype.key} {dtype.raw}`"
    at = dtype
    if value == "fp8":  # NeMo 2: the recipe is a second flag, delayed by default
        profile = replace(NEMO2_PROFILE, label="NeMo 2 performance launcher")
        recipe = _first(flags, RECIPE_FLAGS)
        name = str(recipe.value).lower() if recipe is not None and recipe.known else "ds"
        if recipe is not None:
            at, how = recipe, f"{how} `{recipe.key} {recipe.raw}`"
        if recipe is not None and not recipe.known:
            choice = None
        else:
            choice = NEMO_RECIPES.get(name)
        values = _values(choice, {}) if choice else None
        gpus = NEMO_GPUS
    else:
        profile = replace(BRIDGE_PROFILE, label="Megatron-Bridge performance launcher")
        choice = BRIDGE_DTYPES.get(value) if value else None
        values = _values(choice, PRESET_CHANGES) if choice else None
        gpus = BRIDGE_GPUS
        for flag, field in BRIDGE_MODEL.items():
            if flag in flags:
                fields[field] = flags[flag]
    if values is None:
        fields["fp8"] = replace(dtype, known=False, value=None)
    else:
        for field, v in values.items():
            source = dtype if field in ("fp8", "fp4") else at  # the dtype turns FP8/FP4 on
            fields[field] = replace(source, value=v, raw=str(v), note=f"from {how}")
    first, last = command[0], command[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end))
    kind = f"NVIDIA performance launcher (`{os.path.basename(command[idx].text)}`)"
    site = build_site(fields, replace(profile, kind=kind), file.path, span)
    gpu = _first(flags, GPU_FLAGS)
    if gpu is not None:
        site = site.model_copy(update={"gpu": _gpu(gpu, gpus)})
    return [site]


def _gpu(arg: Arg, accepted: frozenset[str]) -> Setting[Any]:
    """`-g b200` as written; a name the launcher's `choices` refuse is unknown."""
    if arg.known and str(arg.value) not in accepted:
        note = f"not one of the launcher's GPUs ({', '.join(sorted(accepted))})"
        return written(replace(arg, known=False, value=None), None, note)
    return written(arg, str(arg.value) if arg.known else None)


def _values(
    choice: tuple[str, dict[str, Any]], changes: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    preset, extra = choice
    values = dict(PRESETS[preset])
    values.update(changes.get(preset, {}))
    values.update(extra)
    return values
