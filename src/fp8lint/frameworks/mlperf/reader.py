"""NVIDIA's MLPerf-style config scripts: `config_*.sh` files that export `FP8=True`,
`FP8_AMAX_ALGO=max`, `FP8_AMAX_HISTORY=4`, `FP8_REDUCE_AMAX=False`, `TP=4`, `SP=1`, ...
and are sourced by the benchmark's run script.

The variables reach the model through the implementation's Hydra YAML, where each NeMo 1.x
key reads one variable with a fallback: `fp8_amax_history_len:
${oc.decode:${oc.env:FP8_AMAX_HISTORY,128}}`.  So a variable the script does not set takes
the YAML's fallback, not NeMo's or Megatron's default.  When that YAML sits in the
implementation's `conf/` directory (next to the script or one level up) its bindings and
fallbacks are read; otherwise the tables below, taken from NVIDIA's two NeMo 1.x
implementations, are used:

- `llama2_70b_lora` (`TP`, `PP`, `CP`, `SP`, `MBS`, `ACG` names): mlcommons/training_results_v4.0
  `NVIDIA/benchmarks/llama2_70b_lora/implementations/nemo/conf/megatron_gpt_peft_tuning_config.yaml`
  (commit 62f111b7690f163b269f32e4f93dcaaa13717c9c): `mcore_gpt: True`, fallbacks
  `FP8_HYBRID` True, `FP8_AMAX_HISTORY` 128, `FP8_AMAX_ALGO` most_recent, `FP8_REDUCE_AMAX`
  False, `FP8_MARGIN` 0, `FP8_INTERVAL` 1, `SP` False.
- `gpt3` (`TENSOR_MODEL_PARALLEL`, `PIPELINE_MODEL_PARALLEL`, `SEQ_PARALLEL`,
  `MICRO_BATCH_SIZE` names): mlcommons/training_results_v3.1
  `NVIDIA/benchmarks/gpt3/implementations/pytorch/conf/custom.yaml` (commit
  f33f9444205023cf49bf19ec960992b39663f6fd): fallbacks `FP8_HYBRID` False,
  `FP8_AMAX_HISTORY` 1, `FP8_AMAX_ALGO` most_recent, `FP8_REDUCE_AMAX` True,
  `SEQ_PARALLEL` True; its `config_fp8.sh` sets hybrid, 1024 and max.

On the Megatron-Core path (`mcore_gpt: True`) `reduce_amax` is not a TransformerConfig field
and is ignored (see `nemo1`), so `FP8_REDUCE_AMAX=False` there changes nothing.  No fix is
offered: the values are environment variables consumed elsewhere, and these are NVIDIA's
published benchmark settings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import Reader, SourceFile
from fp8lint.frameworks.shared.base import Arg, as_int, written
from fp8lint.frameworks.shared.shell_args import with_sources, word_value
from fp8lint.frameworks.shared.transformer_config import (
    SPELLED,
    Profile,
    SurfaceDefaults,
    as_bool,
    build_site,
)
from fp8lint.model import Fp8Format, Fp8Site, Framework, Setting, SourceNote, Span

# the NeMo 1.x key each variable feeds, as the two implementations' YAML bind them
LORA_BINDINGS: dict[str, str] = {
    "FP8": "fp8",
    "FP8_HYBRID": "fp8_hybrid",
    "FP8_E4M3": "fp8_e4m3",
    "FP8_AMAX_HISTORY": "fp8_amax_history_len",
    "FP8_AMAX_ALGO": "fp8_amax_compute_algo",
    "FP8_REDUCE_AMAX": "reduce_amax",
    "FP8_MARGIN": "fp8_margin",
    "FP8_INTERVAL": "fp8_interval",
    "FP8_DPA": "fp8_dot_product_attention",
    "TP": "tensor_model_parallel_size",
    "PP": "pipeline_model_parallel_size",
    "CP": "context_parallel_size",
    "SP": "sequence_parallel",
    "ACG": "activations_checkpoint_granularity",
    "MBS": "micro_batch_size",
}
GPT3_BINDINGS: dict[str, str] = {
    "FP8": "fp8",
    "FP8_HYBRID": "fp8_hybrid",
    "FP8_AMAX_HISTORY": "fp8_amax_history_len",
    "FP8_AMAX_ALGO": "fp8_amax_compute_algo",
    "FP8_REDUCE_AMAX": "reduce_amax",
    "TENSOR_MODEL_PARALLEL": "tensor_model_parallel_size",
    "PIPELINE_MODEL_PARALLEL": "pipeline_model_parallel_size",
    "SEQ_PARALLEL": "sequence_parallel",
    "ACT_CKPT_GRANULARITY": "activations_checkpoint_granularity",
    "MICRO_BATCH_SIZE": "micro_batch_size",
    "NUM_LAYERS": "num_layers",
    "HIDDEN_SIZE": "hidden_size",
    "FFN_HIDDEN_SIZE": "ffn_hidden_size",
    "NUM_ATTENTION_HEADS": "num_attention_heads",
}
LORA_FALLBACKS: dict[str, Any] = {
    "fp8": False,
    "fp8_hybrid": True,
    "fp8_e4m3": False,
    "fp8_amax_history_len": 128,
    "fp8_amax_compute_algo": "most_recent",
    "reduce_amax": False,
    "fp8_margin": 0,
    "fp8_interval": 1,
    "fp8_dot_product_attention": False,
    "tensor_model_parallel_size": 1,
    "pipeline_model_parallel_size": 1,
    "context_parallel_size": 1,
    "sequence_parallel": False,
    "micro_batch_size": 1,
}
GPT3_FALLBACKS: dict[str, Any] = {
    "fp8": False,
    "fp8_hybrid": False,
    "fp8_amax_history_len": 1,
    "fp8_amax_compute_algo": "most_recent",
    "reduce_amax": True,
    "sequence_parallel": True,
    "num_layers": 96,
    "hidden_size": 12288,
    "num_attention_heads": 96,
}
# what tells the family apart from any script that happens to set `FP8=1`
FP8_KNOBS = frozenset({"FP8_AMAX_HISTORY", "FP8_AMAX_ALGO", "FP8_REDUCE_AMAX", "FP8_HYBRID"})
_RENAMES = {
    "activations_checkpoint_granularity": "recompute_granularity",
    "fp8_params": "fp8_param_gather",
}
_ENV = re.compile(
    r"^\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*\$\{(?:oc\.decode:\$\{)?oc\.env:"
    r"(?P<var>[A-Za-z_][A-Za-z0-9_]*)(?:,(?P<fallback>[^}]*))?\}",
    re.MULTILINE,
)
_YAML_SCALARS = {"true": True, "false": False, "null": None, "none": None}
# the NeMo 1.x format switches are read by `_site`, not taken as defaults
BASE_DEFAULTS = SurfaceDefaults(
    "mlperf", drop=("fp8", "fp8_e4m3", "fp8_hybrid", "transformer_engine")
)


@dataclass(frozen=True)
class Implementation:
    """One benchmark implementation: which variable feeds which key, and the fallbacks."""

    name: str
    source: str
    bindings: dict[str, str]
    fallbacks: dict[str, Any]
    mcore: bool
    extra: dict[str, str] = field(default_factory=dict)


LORA = Implementation(
    "llama2_70b_lora", "NVIDIA MLPerf llama2_70b_lora YAML", LORA_BINDINGS, LORA_FALLBACKS, True
)
GPT3 = Implementation("gpt3", "NVIDIA MLPerf gpt3 YAML", GPT3_BINDINGS, GPT3_FALLBACKS, False)


def _fallback(text: str | None) -> Any:
    if text is None:
        return None
    text = text.strip().strip("'\"")
    if text.lower() in _YAML_SCALARS:
        return _YAML_SCALARS[text.lower()]
    return int(text) if re.fullmatch(r"[-+]?\d{1,18}", text) else text


def _from_yaml(path: str, text: str) -> Implementation | None:
    """The bindings of an implementation's own Hydra YAML, when it binds `FP8`."""
    bindings: dict[str, str] = {}
    fallbacks: dict[str, Any] = {}
    for m in _ENV.finditer(text):
        key, var = m.group("key"), m.group("var")
        if key in ("devices", "num_nodes"):
            continue
        bindings.setdefault(var, key)
        fallbacks.setdefault(key, _fallback(m.group("fallback")))
    if bindings.get("FP8") != "fp8":
        return None
    mcore = re.search(r"^\s*mcore_gpt\s*:\s*(true|True)\b", text, re.MULTILINE) is not None
    return Implementation(os.path.basename(path), path, bindings, fallbacks, mcore)


def _conf_yaml(script_path: str, reader: Reader) -> Implementation | None:
    base = os.path.dirname(script_path) or "."
    for conf in (os.path.join(base, "conf"), os.path.join(base, "..", "conf")):
        try:
            names = sorted(n for n in os.listdir(conf) if n.endswith((".yaml", ".yml")))
        except OSError:
            continue
        for name in names[:32]:
            path = os.path.normpath(os.path.join(conf, name))
            data = reader(path)
            if data is None:
                continue
            found = _from_yaml(path, data.decode("utf-8", errors="replace"))
            if found is not None:
                return found
    return None


def _arg(file: SourceFile, name: str, words: list[Word]) -> Arg | None:
    if not words or (words[0].text == "" and len(words) == 1):
        return None
    first, last = words[0], words[-1]
    known = all(w.known for w in words) and len(words) == 1
    span = file.span_of_indices(first.start, last.end)
    return Arg(
        key=name,
        value=word_value(first) if known else None,
        span=span,
        value_span=span,
        known=known,
        raw=" ".join(w.text for w in words),
    )


def _implementation(script: Script, file: SourceFile, reader: Reader | None) -> Implementation:
    own = _conf_yaml(file.path, reader) if reader is not None else None
    if own is not None:
        return own
    if {"TENSOR_MODEL_PARALLEL", "PIPELINE_MODEL_PARALLEL", "SEQ_PARALLEL"} & set(script.variables):
        return GPT3
    return LORA


def from_script(
    file: SourceFile, script: Script, sites: Sequence[Fp8Site], reader: Reader | None = None
) -> list[Fp8Site]:
    """One NeMo 1.x site made of the FP8 variables a config script sets, itself or through
    the sibling scripts it sources (`source $(dirname ${BASH_SOURCE[0]})/config_fp8.sh`)."""
    scoped = with_sources(file, script, reader)
    variables = {name: words for name, (words, _, _) in scoped.items()}
    if "FP8" not in variables or not (FP8_KNOBS & set(variables)):
        return []
    impl = _implementation(script, file, reader)

    def arg_of(var: str) -> Arg | None:
        words, where, _ = scoped.get(var, ([], file, None))
        return _arg(where, var, words) if words else None

    fields: dict[str, Arg] = {}
    for var, key in impl.bindings.items():
        arg = arg_of(var)
        if arg is not None:
            fields[_RENAMES.get(key, key)] = arg
    n_arg, g_arg = arg_of("DGXNNODES"), arg_of("DGXNGPU")
    n = as_int_or(n_arg, impl.fallbacks.get("num_nodes", 1))
    g = as_int_or(g_arg, impl.fallbacks.get("devices", 8))
    if n_arg is not None and n is not None and g is not None:
        fields["world_size"] = replace(
            n_arg, key="DGXNNODES x DGXNGPU", value=n * g, note=f"{n} nodes x {g} GPUs"
        )
    enable = fields.pop("fp8", None)
    if enable is None:  # `export FP8=` (empty): nothing to read
        return []
    names = [v for v in (*impl.bindings, "DGXNNODES", "DGXNGPU") if v in scoped]
    own = [w for v in names if scoped[v][2] is None for w in scoped[v][0]]
    via = [c for v in names if (c := scoped[v][2]) is not None]
    used = own or via  # every setting sourced: the `source` lines stand for them
    site_span = file.span_of_indices(min(w.start for w in used), max(w.end for w in used))
    site = _site(file, impl, enable, fields, site_span)
    if not via:
        return [site]
    # findings move to this script (at the `source` line that switches FP8 on), without a
    # fix: the sourced file is shared by the other configs that source it
    by_line = sorted((c.start, scoped[v][1].path) for v in names if (c := scoped[v][2]) is not None)
    sources = list(dict.fromkeys(path for _, path in by_line))
    switch = scoped["FP8"][2]
    update: dict[str, Any] = {"layers": [*sources, f"{file.path} (overrides)"]}
    if switch is not None:
        update["enable_span"] = file.span_of_indices(switch.start, switch.end)
    return [site.model_copy(update=update)]


def as_int_or(arg: Arg | None, fallback: Any) -> int | None:
    """The variable's integer, or the YAML's fallback when the script does not set it."""
    if arg is None:
        return as_int(fallback)
    return as_int(arg.value) if arg.known else None


def _site(
    file: SourceFile, impl: Implementation, enable: Arg, fields: dict[str, Arg], span: Span
) -> Fp8Site:
    label = impl.source
    fallbacks = {_RENAMES.get(k, k): v for k, v in impl.fallbacks.items()}
    on = as_bool(enable.value) if enable.known else None
    enabled: Setting[bool] = (
        written(enable, on) if on is not None else written(replace(enable, known=False), None)
    )
    notes: list[SourceNote] = []

    def flag(name: str) -> bool:
        arg = fields.get(name)
        if arg is not None:
            return bool(arg.known and as_bool(arg.value))
        return bool(fallbacks.get(name))

    fmt: Setting[Fp8Format]
    for name, value in (("fp8_e4m3", Fp8Format.E4M3), ("fp8_hybrid", Fp8Format.HYBRID)):
        if flag(name):
            arg = fields.get(name)
            fmt = (
                written(arg, value)
                if arg is not None
                else Setting[Fp8Format].model_construct(
                    value=value,
                    known=True,
                    provenance="default",
                    key=_var_of(impl, name),
                    default_of=label,
                    span=enabled.span,
                )
            )
            break
    else:
        fmt = Setting[Fp8Format].model_construct(known=False)
        if on:
            notes.append(
                SourceNote.model_construct(
                    kind="conflict",
                    key="FP8",
                    span=enable.span,
                    message="`FP8` is on but neither `FP8_E4M3` nor `FP8_HYBRID` is; NeMo "
                    'raises "fp8 enabled but fp8_format (fp8_e4m3 | fp8_hybrid) is not set"',
                )
            )
    # Megatron Core's defaults under the YAML's fallbacks (`surface.py`)
    defaults = dict(BASE_DEFAULTS)
    defaults.update({k: v for k, v in fallbacks.items() if k in defaults and v is not None})
    ignored: dict[str, str] = {}
    reduce = fields.get("reduce_amax")
    if impl.mcore and reduce is not None:
        message = (
            f"`{reduce.key}` feeds `model.reduce_amax`, which NeMo's Megatron-Core path "
            "(`mcore_gpt: True`) does not read: Megatron always reduces amax over its "
            "amax-reduction group"
        )
        ignored["reduce_amax"] = message
        if reduce.known and as_bool(reduce.value) is False:
            notes.append(
                SourceNote.model_construct(
                    kind="ignored", key=reduce.key, span=reduce.span, message=message
                )
            )
    elif "reduce_amax" in fallbacks and "reduce_amax" not in fields:
        defaults["reduce_amax"] = fallbacks["reduce_amax"]
    profile = Profile(
        framework=Framework.NEMO1,
        label=label,
        defaults=defaults,
        surface="mlperf",
        keys={name: _var_of(impl, name) for name in SPELLED},
        kind=f"NVIDIA MLPerf config script ({impl.name})",
        ignored=ignored,
    )
    site = build_site(fields, profile, file.path, span, enabled=enabled, fmt=fmt, notes=notes)
    if "reduce_amax" in defaults and "reduce_amax" not in fields and not impl.mcore:
        site = site.model_copy(
            update={
                "reduce_amax": Setting[bool].model_construct(
                    value=bool(defaults["reduce_amax"]),
                    known=True,
                    provenance="default",
                    key="FP8_REDUCE_AMAX",
                    default_of=label,
                    span=enabled.span,
                )
            }
        )
    return site


def _var_of(impl: Implementation, key: str) -> str:
    """The variable a user sets for a TransformerConfig-named field."""
    key = {v: k for k, v in _RENAMES.items()}.get(key, key)
    key = {"fp8": "fp8"}.get(key, key)
    for var, bound in impl.bindings.items():
        if bound == key:
            return var
    return f"model.{key} (no variable binds it)"
