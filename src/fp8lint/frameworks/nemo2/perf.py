"""NeMo 2 performance scripts (`scripts/performance/llm/*.py`): the precision is chosen on the
command line and forwarded to a helper, `set_primary_perf_configs(..., compute_dtype=...,
fp8_recipe=...)` or `set_precision_configs(recipe, compute_dtype, fp8_recipe)`.

What the helper does (NVIDIA/NeMo `scripts/performance/helpers.py` @ 8cfedd7): no
`compute_dtype` (None) or `bf16` leaves the recipe in BF16; `fp8` installs a NeMo 2 preset by
`fp8_recipe` (None means `ds`): `ds` is `bf16_with_fp8_mixed()` (delayed), `cs`
`bf16_with_fp8_current_scaling_mixed()` with `first_last_layers_bf16 = False`, `mxfp8`
`bf16_with_mxfp8_mixed()`, `ss` `bf16_with_fp8_subchannel_scaling_mixed()`.  The command line
(`scripts/performance/argument_parser.py`) gives `-c/--compute_dtype` (bf16 or fp8, default
bf16) and `-fr/--fp8_recipe` (ds, cs, mxfp8 or ss, default ds).  A value read from the parsed
arguments (`args.compute_dtype`) is not in the file, so the command line's default stands: FP8
is off unless the script is run with `--compute_dtype fp8`, and the recipe it would use is the
one `--fp8_recipe`'s default names.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.nemo2.python import NEMO2_PROFILE, PRESETS, preset_site
from fp8lint.frameworks.shared.base import Arg, invalid_note
from fp8lint.model import Fp8Site, Setting, SourceNote

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import CallArg, Context

HELPERS = {
    # helper -> positional index of (compute_dtype, fp8_recipe)
    "set_primary_perf_configs": (20, 21),
    "set_precision_configs": (1, 2),
}
CLI = "NeMo scripts/performance argument_parser.py"
HELPER = "NeMo scripts/performance helpers.py"
# `--fp8_recipe` value -> the preset the helper installs, and the fields it then changes
RECIPES: dict[str, tuple[str, dict[str, Any]]] = {
    "ds": ("bf16_with_fp8_mixed", {}),
    "cs": ("bf16_with_fp8_current_scaling_mixed", {"first_last_layers_bf16": False}),
    "mxfp8": ("bf16_with_mxfp8_mixed", {}),
    "ss": ("bf16_with_fp8_subchannel_scaling_mixed", {}),
}
# `set_primary_perf_configs`' parallelism arguments (keyword, position) -> TransformerConfig
TOPOLOGY = {
    ("tp_size", 7): "tensor_model_parallel_size",
    ("pp_size", 8): "pipeline_model_parallel_size",
    ("cp_size", 9): "context_parallel_size",
    ("ep_size", 11): "expert_model_parallel_size",
    ("etp_size", 12): "expert_tensor_parallel_size",
}
DTYPES = ("bf16", "fp8")


def sites(ctx: Context) -> list[Fp8Site]:
    """One site per helper call (the file's own function of that name does not count)."""
    out: list[Fp8Site] = []
    names = frozenset(HELPERS)
    for name in sorted(names | {a for a, r in ctx.facts.aliases.items() if r in names}):
        for call in ctx.facts.calls.get(name, ()):
            tgt = ctx.target(call, names, (), {})
            if tgt is not None:
                out.append(site(ctx, tgt.name, call))
    return out


def _argument(call: cst.Call, key: str, index: int) -> CallArg | None:
    from fp8lint.frameworks.shared.python_args import call_args, positional

    keyed = next((a for a in call_args(call) if a.keyword == key), None)
    if keyed is not None:
        return keyed
    plain = positional(call)
    return plain[index] if index < len(plain) else None


def _from_cli(ctx: Context, arg: CallArg) -> bool:
    """`args.compute_dtype` (an attribute of the parsed command line) or a name that follows
    to one: the value comes from the command line, whose default applies."""
    import libcst as cst

    node = ctx.doc.follow(arg.value).node
    return isinstance(node, cst.Attribute)


def site(ctx: Context, helper: str, call: cst.Call) -> Fp8Site:
    call_span = ctx.span(call)
    invalid: list[SourceNote] = []
    dtype_at, recipe_at = HELPERS[helper]
    dtype_arg = _argument(call, "compute_dtype", dtype_at)
    recipe_arg = _argument(call, "fp8_recipe", recipe_at)

    # -- the recipe the helper installs when FP8 is on
    node: cst.CSTNode = call
    chosen, note = "ds", f"no `fp8_recipe` given: {HELPER} uses `ds`"
    if recipe_arg is not None:
        node = recipe_arg.value
        val = ctx.value_of("fp8_recipe", recipe_arg.node, recipe_arg.value)
        if val.arg.known and val.arg.value is None:
            note = f"`fp8_recipe=None`: {HELPER} uses `ds`"
        elif val.arg.known and isinstance(val.arg.value, str):
            chosen, note = val.arg.value.lower(), ""
            if chosen not in RECIPES:
                invalid.append(invalid_note(val.arg, "expected ds, cs, mxfp8 or ss"))
        elif _from_cli(ctx, recipe_arg):
            note = f"`--fp8_recipe` is not given in this file; {CLI} defaults it to `ds`"
        else:
            chosen, note = "", val.arg.note or "the FP8 recipe is not a literal"
    preset_name, changes = RECIPES.get(chosen, ("", {}))
    if preset_name:
        preset = {**PRESETS[preset_name], **changes}
        written_as = preset_name
    else:  # an unreadable or invalid recipe: the format and recipe stay unknown
        preset, written_as = {}, helper
    profile = replace(NEMO2_PROFILE, kind=f"NeMo 2 performance script {helper}(...)")
    built = preset_site(ctx, preset, written_as, node, profile, _topology(ctx, helper, call), [])
    updates: dict[str, Any] = {"span": call_span, "invalid": invalid}
    if note and preset_name:
        updates["recipe"] = built.recipe.model_copy(update={"note": note})
    if not preset_name:
        updates["recipe"] = Setting[Any].model_construct(
            known=False, key="fp8_recipe", span=ctx.span(node), note=note or None
        )

    # -- whether FP8 is on at all
    enabled: Setting[Any]
    if dtype_arg is None:
        enabled = Setting[Any].model_construct(
            value=False,
            known=True,
            provenance="default",
            key="compute_dtype",
            span=call_span,
            default_of=HELPER,
            note="no `compute_dtype` given: the helper leaves the precision as it was",
        )
    else:
        val = ctx.value_of("compute_dtype", dtype_arg.node, dtype_arg.value)
        arg = val.arg
        if arg.known and isinstance(arg.value, str) and arg.value.lower() in DTYPES:
            enabled = Setting[Any].model_construct(
                value=arg.value.lower() == "fp8",
                known=True,
                provenance="written",
                key="compute_dtype",
                span=arg.value_span,
                raw=arg.raw,
                entry=arg.span,
                via=arg.via,
            )
        elif _from_cli(ctx, dtype_arg):
            enabled = Setting[Any].model_construct(
                value=False,
                known=True,
                provenance="default",
                key="--compute_dtype",
                span=arg.value_span,
                default_of=CLI,
                note="FP8 only when the script is run with `--compute_dtype fp8`; "
                "the command line defaults to bf16",
            )
        else:
            if arg.known:
                invalid.append(invalid_note(arg, "expected bf16 or fp8"))
            enabled = Setting[Any].model_construct(
                known=False, key="compute_dtype", span=arg.value_span, raw=arg.raw, note=arg.note
            )
    updates["enabled"] = enabled
    updates["enable_span"] = enabled.span if enabled.written else None
    return built.model_copy(update=updates)


def _topology(ctx: Context, helper: str, call: cst.Call) -> dict[str, Arg]:
    """The parallel sizes the helper is given (usually from the per-GPU tables, so unknown);
    `set_precision_configs` takes none, and then the sizes are the base recipe's, unknown."""
    out: dict[str, Arg] = {}
    span = ctx.span(call)
    for (key, index), field in TOPOLOGY.items():
        arg = _argument(call, key, index) if helper == "set_primary_perf_configs" else None
        if arg is None and helper == "set_primary_perf_configs":
            continue  # `etp_size=None`: expert TP follows TP
        if arg is None:
            out[field] = Arg(
                key=key,
                value=None,
                span=span,
                value_span=span,
                known=False,
                note="the parallel sizes come from the recipe the script starts from",
            )
            continue
        out[field] = ctx.value_of(key, arg.node, arg.value).arg
    return out
