"""How Megatron-LM's command line spells `TransformerConfig` fields, both ways.

A flag is `--` + the field with `_` turned into `-`, except where `argparse_meta` renames it
(`fp8` is `--fp8-format`, `fp4` is `--fp4-format`, `num_moe_experts` is `--num-experts`,
`gated_linear_unit` is `--swiglu`); `--no-fp8-wgrad` / `--disable-fp8-wgrad` negate
`fp8_wgrad`; `--fp8-param-gather` / `--fp4-param-gather` set `fp8_param` / `fp4_param`.
Megatron's flags, its functional-test `MODEL_ARGS`, ms-swift's and AMD Primus' Megatron
arguments all use them.  The legacy `--fp8-e4m3` / `--fp8-hybrid` set the format only in
Megatron-DeepSpeed (`legacy=True`); Megatron-LM has not had them since core 0.4.

`KNOWN` is every FP8/FP4 flag Megatron-LM defines (the same at core_v0.19.0 and d98e8a64):
the `TransformerConfig` fields `ArgumentGroupFactory` turns into flags (`arguments.py` L2373,
less the exclude list at L2290-2372, which holds `fp8_dot_product_attention`,
`fp8_multi_head_attention`, `tp_only_amax_red` and `activation_func_fp8_input_store`), and
the hand-written `--fp4-param-gather`, `--fp8-param-gather` (L2012-2016),
`--reuse-grad-buf-for-mxfp8-param-ag` (L3080) and `--keep-fp8-transpose-cache` (L3212).  The
parser is built with `allow_abbrev=False` and `parse_args()` (L119-132), so any other flag
stops the launch with "unrecognized arguments".

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

KNOWN = frozenset(
    {
        "--fp8-format",
        "--fp8-recipe",
        "--fp8-quantizer-factory",
        "--fp8-margin",
        "--fp8-interval",
        "--fp8-amax-history-len",
        "--fp8-amax-compute-algo",
        "--no-fp8-wgrad",
        "--disable-fp8-wgrad",
        "--fp8-output-proj",
        "--fp8-param-gather",
        "--fp4-format",
        "--fp4-recipe",
        "--fp4-quantizer-factory",
        "--fp4-param-gather",
        "--reuse-grad-buf-for-mxfp8-param-ag",
        "--keep-fp8-transpose-cache",
        "--moe-router-padding-for-fp8",
    }
)
# the FP8/FP4 switches among them (`action="store_true"`): a value after one is a word the
# parser cannot place ("unrecognized arguments: false"); a functional-test `MODEL_ARGS:` entry
# `true` is the bare flag, `false` is written as the word `false`
# (tests/functional_tests/shell_test_utils/_run_training.sh L131-160)
SWITCHES = frozenset(
    {
        "--no-fp8-wgrad",
        "--disable-fp8-wgrad",
        "--fp8-output-proj",
        "--fp8-param-gather",
        "--fp4-param-gather",
        "--reuse-grad-buf-for-mxfp8-param-ag",
        "--keep-fp8-transpose-cache",
        "--moe-router-padding-for-fp8",
        "--moe-router-padding-for-quantization",
        "--first-last-layers-bf16",
        # the other switches fp8lint reads (the launch checks and the topology need them)
        "--sequence-parallel",
        "--use-distributed-optimizer",
        "--use-torch-fsdp2",
        "--use-megatron-fsdp",
        "--optimizer-cpu-offload",
        "--moe-grouped-gemm",
        "--moe-single-grouped-weight",
        "--use-transformer-engine-op-fuser",
        "--batch-invariant-mode",
        "--swiglu",
        "--finetune",
        "--overlap-grad-reduce",
        "--overlap-param-gather",
        "--overlap-param-gather-with-optimizer-step",
        "--use-precision-aware-optimizer",
        "--enable-cuda-graph",
        "--external-cuda-graph",
    }
)

# flags people write that Megatron-LM does not define, and what to write instead
INSTEAD = {
    "--fp8-hybrid": "use `--fp8-format hybrid`",
    "--fp8-e4m3": "use `--fp8-format e4m3`",
    "--fp8-e5m2": "pure E5M2 is not supported; use `--fp8-format hybrid`",
    "--fp8-wgrad": "FP8 wgrad is the default; `--no-fp8-wgrad` turns it off",
    **{
        f"--{name.replace('_', '-')}": f"set `{name}` in a config file or code"
        for name in (
            "fp8_dot_product_attention",
            "fp8_multi_head_attention",
            "tp_only_amax_red",
            "activation_func_fp8_input_store",
        )
    },
}


def unknown_flag(flag: str) -> str | None:
    """What to write instead of `flag`, when it is an FP8/FP4 flag Megatron-LM does not
    define ("": nothing to suggest; None: a flag it defines, or one not judged here)."""
    if flag in KNOWN or not any(word in flag for word in ("fp8", "fp4", "amax")):
        return None
    if flag in INSTEAD:
        return INSTEAD[flag]
    from difflib import get_close_matches

    close = get_close_matches(flag, sorted(KNOWN), n=1, cutoff=0.75)
    return f"did you mean `{close[0]}`?" if close else ""


def flag_of(name: str) -> str:
    """How Megatron's command line spells a `TransformerConfig` field."""
    return "--" + _FLAG_NAMES.get(name, name).replace("_", "-")


# every field a site names, as a flag; and model field -> flag, for fixes that write one
FLAGS = {name: flag_of(name) for name in SPELLED}
FLAG_KEYS = {field: flag_of(name) for field, name in MODEL_TO_CONFIG.items()}


def fields_from_flags(
    flags: dict[str, Arg], *, legacy: bool = False, parser: bool = False
) -> dict[str, Arg]:
    """Megatron flags (`--fp8-format` ...) as TransformerConfig fields (`fp8` ...).  `legacy`:
    Megatron-DeepSpeed's `--fp8-e4m3` / `--fp8-hybrid` set the format; `parser`: Megatron-LM's
    own parser reads them, so an FP8 flag it does not define sets nothing."""
    fields: dict[str, Arg] = {}
    for flag, arg in flags.items():
        name = flag.lstrip("-").replace("-", "_")
        if name in _NEGATED:
            on = as_bool(arg.value) if arg.known else None
            fields[_NEGATED[name]] = replace(arg, value=(not on) if on is not None else arg.value)
        elif name in _LEGACY_FORMAT:
            if legacy and arg.known and as_bool(arg.value):
                fields["fp8"] = replace(arg, value=_LEGACY_FORMAT[name])
        elif parser and unknown_flag(flag) is not None:
            continue  # not a flag: Megatron never reads it (FP8408 says so)
        elif name == "moe_router_padding_for_fp8":  # the compatibility alias
            fields.setdefault("moe_router_padding_for_quantization", arg)
        else:
            fields[_FIELDS.get(name, name)] = arg
    gqa = fields.pop("group_query_attention", None)
    if gqa is None or not (gqa.known and as_bool(gqa.value)):
        fields.pop("num_query_groups", None)
    return fields
