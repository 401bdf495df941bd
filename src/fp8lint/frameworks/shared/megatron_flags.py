"""How Megatron-LM's command line spells `TransformerConfig` fields, both ways.

A flag is `--` + the field with `_` turned into `-`, except where `argparse_meta` renames it
(`fp8` is `--fp8-format`, `fp4` is `--fp4-format`, `num_moe_experts` is `--num-experts`,
`gated_linear_unit` is `--swiglu`); `--no-fp8-wgrad` / `--disable-fp8-wgrad` negate
`fp8_wgrad`; the legacy `--fp8-e4m3` / `--fp8-hybrid` set the format.  Megatron's flags, its
functional-test `MODEL_ARGS`, ms-swift's and AMD Primus' Megatron arguments all use them.

Sources (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553):
`megatron/training/argument_utils.py` L45-200 and `megatron/training/arguments.py`
(`--fp8-format` replaced `--fp8-e4m3` / `--fp8-hybrid` in commit 1b7a3836).
"""

from __future__ import annotations

from dataclasses import replace

from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.transformer_config import MODEL_TO_CONFIG, SPELLED, as_bool

# field -> flag name, where the flag is not the field with dashes
_FLAG_NAMES = {
    "fp8": "fp8_format",
    "fp4": "fp4_format",
    "num_moe_experts": "num_experts",
    "gated_linear_unit": "swiglu",
}
_FIELDS = {flag: name for name, flag in _FLAG_NAMES.items()}
_NEGATED = {"no_fp8_wgrad": "fp8_wgrad", "disable_fp8_wgrad": "fp8_wgrad"}
_LEGACY_FORMAT = {"fp8_e4m3": "e4m3", "fp8_hybrid": "hybrid"}


def flag_of(name: str) -> str:
    """How Megatron's command line spells a `TransformerConfig` field."""
    return "--" + _FLAG_NAMES.get(name, name).replace("_", "-")


# every field a site names, as a flag; and model field -> flag, for fixes that write one
FLAGS = {name: flag_of(name) for name in SPELLED}
FLAG_KEYS = {field: flag_of(name) for field, name in MODEL_TO_CONFIG.items()}


def fields_from_flags(flags: dict[str, Arg]) -> dict[str, Arg]:
    """Megatron flags (`--fp8-format` ...) as TransformerConfig fields (`fp8` ...)."""
    fields: dict[str, Arg] = {}
    for flag, arg in flags.items():
        name = flag.lstrip("-").replace("-", "_")
        if name in _NEGATED:
            on = as_bool(arg.value) if arg.known else None
            fields[_NEGATED[name]] = replace(arg, value=(not on) if on is not None else arg.value)
        elif name in _LEGACY_FORMAT:
            if arg.known and as_bool(arg.value):
                fields["fp8"] = replace(arg, value=_LEGACY_FORMAT[name])
        else:
            fields[_FIELDS.get(name, name)] = arg
    gqa = fields.pop("group_query_attention", None)
    if gqa is None or not (gqa.known and as_bool(gqa.value)):
        fields.pop("num_query_groups", None)
    return fields
