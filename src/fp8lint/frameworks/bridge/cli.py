"""Megatron-Bridge launches from the shell: `run_recipe.py --recipe NAME KEY=VALUE ...` (also
through `scripts/training/train.sh`), example entry points `pretrain_*.py` / `finetune_*.py`
given `model.*` / `mixed_precision.*` overrides, and such commands kept in a shell string
(`CMD="python run_recipe.py ... model.fp8=e4m3"`) and run later.

Where the precision comes from, later wins (NVIDIA-NeMo/Megatron-Bridge
`scripts/training/README.md`, "Overrides"; `src/megatron/bridge/training/mixed_precision.py`,
read at 05097809102de3cbe888267e7d701868165153d8):

1. the recipe's name when it carries the precision: the benchmark recipes
   `..._fp8cs_config` (FP8 current scaling), `..._fp8mx_config` / `..._mxfp8_config` (MXFP8),
   `..._bf16_config` (no FP8);
2. `mixed_precision=PRESET`: a registered preset name, `_` or `-` spelling
   (`bf16_with_fp8_current_scaling_mixed`, ...; values in `shared.mixed_precision`);
3. `mixed_precision.FIELD=VALUE`.

`model.fp8*=` overrides set the model provider directly, but `MixedPrecisionConfig.setup`
copies every one of its fields onto the model wherever they differ, so with a
`mixed_precision` config in place (every library recipe sets one) they are overwritten: such
an override is read, and reported as ignored (FP8402) unless a `mixed_precision` value of
the command says the same.  Values nothing sets take `MixedPrecisionConfig`'s defaults
(its surface model's).  No fix is offered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import Reader, SourceFile
from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.mixed_precision import (
    BRIDGE_DEFAULTS,
    BRIDGE_PROFILE,
    PRESETS,
    bridge_preset,
)
from fp8lint.frameworks.shared.shell_args import word_value
from fp8lint.frameworks.shared.transformer_config import build_site
from fp8lint.model import Fp8Site, SourceNote

RUNNER = re.compile(r"(^|/)(run_recipe\.py|training/train\.sh)$")
EXAMPLE = re.compile(r"(^|/)(pretrain|finetune)_\w+\.py$")
OVERRIDE = re.compile(r"(?P<key>(model|mixed_precision)(\.[A-Za-z_]\w*)?)=(?P<value>.*)", re.S)
CONTAINER_KEY = re.compile(r"(model|mixed_precision|train|optimizer|ddp|dataset|checkpoint)\.\w")
# precision tokens of recipe names -> the preset they stand for
# precision tokens of recipe names -> the preset they stand for, and what the benchmark
# recipes' `_perf_precision` changes in it (BF16 first/last layers off for cs and ds)
_NO_EDGES: dict[str, Any] = {"first_last_layers_bf16": False}
NAME_TOKENS: tuple[tuple[re.Pattern[str], str, dict[str, Any]], ...] = (
    (
        re.compile(r"(^|_)(fp8cs|fp8_cs|fp8_current_scaling)(_|$)"),
        "bf16_with_fp8_current_scaling_mixed",
        _NO_EDGES,
    ),
    (re.compile(r"(^|_)(fp8mx|fp8_mx|mxfp8)(_|$)"), "bf16_with_mxfp8_mixed", {}),
    (
        re.compile(r"(^|_)(fp8ds|fp8_ds|fp8_delayed_scaling)(_|$)"),
        "bf16_with_fp8_delayed_scaling_mixed",
        _NO_EDGES,
    ),
    (
        re.compile(r"(^|_)(fp8sc|fp8_subchannel_scaling|fp8_blockwise)(_|$)"),
        "bf16_with_fp8_subchannel_scaling_mixed",
        {},
    ),
)
# library recipes whose names hide the FP8 preset they set (NVIDIA-NeMo/Megatron-Bridge
# 067f987d: `recipes/nemotronh/h100/nemotronh.py` L412 and L554,
# `recipes/nemotronh/h100/nemotron_nano_v2.py` L273, `recipes/llama/llama3.py`, the
# alias of the `fp8cs` low-precision recipe)
HIDDEN_PRESETS: dict[str, str] = {
    "nemotronh_47b_pretrain_config": "nemotron_h_bf16_with_fp8_current_scaling_mixed",
    "nemotronh_47b_pretrain_8gpu_h100_bf16_config": (
        "nemotron_h_bf16_with_fp8_current_scaling_mixed"
    ),
    "nemotronh_56b_pretrain_config": "nemotron_h_bf16_with_fp8_current_scaling_mixed",
    "nemotronh_56b_pretrain_8gpu_h100_bf16_config": (
        "nemotron_h_bf16_with_fp8_current_scaling_mixed"
    ),
    "nemotron_nano_12b_v2_pretrain_config": "nanov2_bf16_with_fp8_current_scaling_mixed",
    "nemotron_nano_12b_v2_pretrain_4gpu_h100_bf16_config": (
        "nanov2_bf16_with_fp8_current_scaling_mixed"
    ),
    "llama3_8b_low_precision_pretrain_config": "bf16_with_fp8_current_scaling_mixed",
}
TP_FLAGS = ("-tp", "--tensor_model_parallel_size")
_FIELD_RENAMES = {"fp8_param": "fp8_param_gather"}
OVERWRITTEN = "overwritten at setup by the recipe's `mixed_precision` config"
# MixedPrecisionConfig's own defaults; the model's shape and topology come from the recipe
PRECISION_KEYS = ("fp8", "first_last", "num_layers_at", "tp_only")


def _entry(words: Sequence[Word]) -> int | None:
    """Index of the Bridge entry point: the runner, or an example script given Bridge
    `ConfigContainer` overrides (Megatron-LM's own `pretrain_*.py` take `--flags` only)."""
    overrides: bool | None = None  # computed once, on the first example-looking word
    for i, word in enumerate(words):
        if RUNNER.search(word.text):
            return i
        if EXAMPLE.search(word.text):
            if overrides is None:
                overrides = any(
                    CONTAINER_KEY.match(w.text) or w.text.startswith("mixed_precision=")
                    for w in words
                ) and not any(w.text.startswith(("--config-name", "--config-path")) for w in words)
            if overrides:
                return i
    return None


def _preset(name: str) -> dict[str, Any] | None:
    name = name.replace("-", "_")
    return bridge_preset(name) if name in PRESETS else None


def _name_preset(recipe: str) -> dict[str, Any] | None:
    """The precision values a recipe's name stands for, if it names one."""
    if recipe in HIDDEN_PRESETS:
        return _preset(HIDDEN_PRESETS[recipe])
    for pattern, preset, changes in NAME_TOKENS:
        if pattern.search(recipe):
            values = _preset(preset) or {}
            values.update(changes)
            return values
    return None


def _arg(file: SourceFile, key: str, word: Word, value: str, value_start: int) -> Arg:
    span = file.span_of_indices(word.start, word.end)
    exact = file.text[word.start : word.end] == word.text
    value_span = file.span_of_indices(value_start, word.end) if exact else span
    known = word.known and "$" not in value
    return Arg(
        key=key,
        value=word_value(Word(value, word.start, word.end)) if known else None,
        span=span,
        value_span=value_span,
        known=known,
        raw=value,
    )


def _preset_args(values: dict[str, Any], at: Arg, how: str) -> dict[str, Arg]:
    return {
        name: replace(at, key=at.key, value=value, raw=str(value), note=f"from {how}")
        for name, value in values.items()
    }


def read(file: SourceFile, words: Sequence[Word], idx: int) -> list[Fp8Site]:
    """The Bridge site of one launch (`words[idx]` is the entry point)."""
    args = list(words[idx + 1 :])
    layers: list[dict[str, Arg]] = []  # lowest precedence first
    model: dict[str, Arg] = {}
    mixed: dict[str, Arg] = {}
    topology: dict[str, Arg] = {}
    notes: list[SourceNote] = []
    picked: dict[str, Arg] = {}  # `--model STEM --mode MODE`: the recipe `STEM_MODE_config`
    i = 0
    while i < len(args):
        w = args[i]
        text = w.text
        name, eq, inline = text.partition("=")
        if name in ("--recipe", "--model", "--mode") or name in TP_FLAGS:
            value_word = w if eq else (args[i + 1] if i + 1 < len(args) else None)
            if value_word is None:
                break
            value = inline if eq else value_word.text
            start = (w.start + len(name) + 1) if eq else value_word.start
            arg = _arg(file, name, value_word, value, start)
            if name == "--recipe":
                named = _name_preset(value) if arg.known else None
                if named is not None:
                    layers.append(_preset_args(named, arg, f"recipe `{value}`"))
                elif arg.known and re.search(r"(^|_)(bf16|fp16)(_|$)", value):
                    layers.append({"fp8": replace(arg, value=None, note=f"recipe `{value}`")})
            elif name in ("--model", "--mode"):
                picked[name] = arg
            else:
                topology["tensor_model_parallel_size"] = arg
            i += 1 if eq else 2
            continue
        m = OVERRIDE.fullmatch(text)
        if m is not None:
            key = m.group("key")
            arg = _arg(file, key, w, m.group("value"), w.start + m.start("value"))
            if key == "mixed_precision":
                values = _preset(str(arg.value)) if arg.known else None
                if values is not None:
                    layers.append(_preset_args(values, arg, f"preset `{arg.value}`"))
                elif arg.known and str(arg.value).replace("-", "_") in ("bf16_mixed", "fp16_mixed"):
                    layers.append({"fp8": replace(arg, value=None)})
            else:
                section, _, field = key.partition(".")
                field = _FIELD_RENAMES.get(field, field)
                target = mixed if section == "mixed_precision" else model
                target[field] = arg
        i += 1
    stem, mode = picked.get("--model"), picked.get("--mode")
    if stem is not None and mode is not None and stem.known and mode.known:
        recipe = f"{stem.raw}_{mode.raw}_config"
        preset = _name_preset(recipe)
        if preset is not None:
            layers.insert(0, _preset_args(preset, stem, f"recipe `{recipe}`"))
    fields: dict[str, Arg] = dict(topology)
    for name, arg in model.items():
        precision = name.startswith(("fp8", "fp4", "first_last", "num_layers_at"))
        if not precision or name in mixed:  # topology and shape stay on the model
            fields[name] = arg
            continue
        # what the model gets is the recipe's `mixed_precision` value, unknown here
        fields[name] = replace(arg, known=False, value=None, note=OVERWRITTEN)
        notes.append(
            SourceNote.model_construct(
                kind="ignored",
                key=arg.key,
                span=arg.span,
                message=f"`{arg.key}` is overwritten by the recipe's `mixed_precision` "
                f"config at setup; set `mixed_precision.{name}` instead",
            )
        )
    for layer in layers:
        fields.update(layer)
    fields.update(mixed)
    fp8_knobs = [
        k for k, a in fields.items() if k.startswith(("fp8", "fp4")) and a.value is not None
    ]
    if not fp8_knobs and not notes:
        return []  # a BF16 launch, or one whose precision the recipe alone decides
    first, last = words[0], words[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end))
    profile = replace(
        BRIDGE_PROFILE,
        defaults={k: v for k, v in BRIDGE_DEFAULTS.items() if k.startswith(PRECISION_KEYS)},
        prefix="mixed_precision.",
        kind=f"Megatron-Bridge launch (`{os.path.basename(words[idx].text)}`)",
    )
    return [build_site(fields, profile, file.path, span, notes=notes)]


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    idx = _entry(command)
    if idx is None:
        return None
    return read(file, command, idx)


def _covered(site: Fp8Site, word: Word, file: SourceFile) -> bool:
    pos = file.span_of_indices(word.start, word.end)
    s = site.span
    return (s.line, s.column) <= (pos.line, pos.column) <= (s.end_line, s.end_column)


def from_script(
    file: SourceFile, script: Script, sites: Sequence[Fp8Site], reader: Reader | None = None
) -> list[Fp8Site]:
    """Launches kept in a variable (`CMD="python run_recipe.py ..."`) and run through
    `eval`, `bash -c` or a quoted expansion, which the command reader does not see split."""
    out: list[Fp8Site] = []
    for words in script.variables.values():
        idx = _entry(words)
        if idx is None or any(_covered(s, words[idx], file) for s in sites):
            continue
        out.extend(read(file, words, idx))
    return out
