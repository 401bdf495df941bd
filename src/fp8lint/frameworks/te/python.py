"""Transformer Engine in Python: the recipe calls, the autocast that uses each recipe and
the amax-reduction group it gives it, a TE linear used as the output head, and activation
recompute through PyTorch's own checkpoint.

The recipe classes, their keywords and defaults are `shared.te_recipes` (Lightning and
Accelerate read them too; the defaults are the te surface's).  libcst is imported only by
the recognizers (below the data).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, written
from fp8lint.frameworks.shared.te_recipes import (
    ALGOS,
    FORMATS,
    TE,
    checked_setting,
    default_format,
    delayed_defaults,
    keywords,
)
from fp8lint.frameworks.shared.te_recipes import CLASSES as CLASSES  # python_sites reads it
from fp8lint.model import AmaxScope, Fp8Format, Fp8Site, Framework, Recipe, Setting, SourceNote

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import CallArg, Context, Target, Val
    from fp8lint.frameworks.shared.python_reach import Condition

# `DelayedScaling()`'s defaults (Megatron's TransformerConfig leaves its `fp8_*` to them)
DELAYED_DEFAULTS = delayed_defaults()
# model field -> the keyword a fix writes it with
KEYS = {
    "margin": "margin",
    "amax_history_len": "amax_history_len",
    "amax_compute_algo": "amax_compute_algo",
    "fmt": "fp8_format",
    "reduce_amax": "reduce_amax",
    "interval": "interval",
}
# `NVFP4BlockScaling`'s switches -> model fields (TE L558-562 and L574 at d0067d0da).  Only
# the call's own keywords count: `__post_init__` turns them into the quantizers' parameters
# (L595-609), so `r.disable_rht = True` after the call changes nothing
NVFP4_SWITCHES = {
    "disable_rht": "nvfp4_disable_rht",
    "disable_stochastic_rounding": "nvfp4_disable_sr",
    "disable_2d_quantization": "nvfp4_disable_2d",
    "backward_override": "backward_override",
}
# modules a bare recipe class name must be imported from to count
_MODULE = re.compile(r"transformer_engine|recipe")

AUTOCASTS = frozenset({"fp8_autocast", "autocast"})
_RECIPE_KEYS = ("fp8_recipe", "recipe")
_GROUP_KEYS = ("fp8_group", "amax_reduction_group")
# amax-reduction group getters (Megatron `parallel_state`), by function name
GROUP_GETTERS: dict[str, AmaxScope] = {
    "get_data_parallel_group": AmaxScope.DP_ONLY,
    "get_amax_reduction_group": AmaxScope.TP_DP_CP,
    "get_tensor_model_parallel_group": AmaxScope.TP,
    "get_tensor_and_data_parallel_group": AmaxScope.TP_DP,
    "get_model_parallel_group": AmaxScope.CUSTOM,
}

# activation recompute through PyTorch's own checkpoint, outside TE's `te.checkpoint` (which
# manages the FP8 state of the recompute itself: TE #1190, fixed by PR #1254)
TORCH_CHECKPOINTS = frozenset(
    {"torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"}
)
_TORCH_CHECKPOINT_NOTE = (
    "activation recompute through torch.utils.checkpoint, outside TE's own te.checkpoint"
)
_HF_NOTE = (
    "Hugging Face gradient checkpointing: activation recompute through "
    "torch.utils.checkpoint, outside TE's own te.checkpoint"
)
# a TE linear assigned to one of these names is the output head (`self.lm_head = te.Linear(...)`)
HEAD_TARGETS = frozenset({"lm_head", "output_layer", "output", "head", "output_proj"})
LINEARS = frozenset({"Linear", "LayerNormLinear"})
_HEAD_NOTE = "a Transformer Engine Linear used as the output head runs in FP8 inside fp8_autocast"

# the names whose calls the file must be parsed for
CALL_NAMES = frozenset(CLASSES) | AUTOCASTS
OTHER_NAMES = LINEARS | {"checkpoint", "checkpoint_sequential"}


def imported_from_te(module: str) -> bool:
    """Whether a bare recipe class name imported from `module` is TE's."""
    return bool(_MODULE.search(module))


# ----------------------------------------------------------------------------- recipes


def recipe_site(ctx: Context, tgt: Target) -> Fp8Site:
    """A recipe call: every keyword its class has, and TE's defaults for the rest; and what
    the class refuses when it is built (`te/construct.py`)."""
    from fp8lint.frameworks.shared.te_surface import RECIPES
    from fp8lint.frameworks.te.construct import block_checks, format_arg, stamped, validated

    call, cls = tgt.call, tgt.name
    call_span = ctx.span(call)
    own = ctx.keywords(call)
    later = dict(ctx.overrides(call))
    kw = {**own, **later}
    allowed = keywords(cls)
    values: dict[str, Setting[Any]] = {
        "enabled": Setting[bool].model_construct(
            value=True, known=True, provenance="derived", key=cls, span=call_span
        ),
        "recipe": Setting[Recipe].model_construct(
            value=CLASSES[cls],
            known=True,
            provenance="written",
            key=cls,
            span=ctx.span(tgt.callee),
            raw=ctx.text(tgt.callee),
        ),
    }
    invalid: list[SourceNote] = []
    notes: list[SourceNote] = []
    # the call's own keywords, against the class's model: pydantic's coercion, then
    # `__post_init__`'s assertions; `r.key = value` afterwards, against the keyword types
    # only (pydantic does not validate an assignment, and no `__post_init__` runs)
    built = surfaces.check_model(RECIPES[cls], validated(ctx, own, allowed, invalid, True))
    after = surfaces.check("te", validated(ctx, later, allowed, invalid, False))
    invalid[:0] = built.invalid
    invalid.extend(after.invalid)
    checked = surfaces.Checked(
        values={k: v for k, v in built.values.items() if k not in later} | after.values
    )
    if cls == "Float8BlockScaling":
        invalid.extend(block_checks(ctx, tgt, own, built, notes, imported_from_te))

    fmt_val = kw.get("fp8_format")
    if cls == "CustomRecipe":
        values["fmt"] = Setting[Fp8Format].model_construct(
            known=False,
            provenance="derived",
            key="qfactory",
            span=call_span,
            note="a custom recipe's quantizer factory picks each tensor's format",
        )
    elif fmt_val is None:
        values["fmt"] = default(default_format(cls), TE, "fp8_format", call_span)
    else:
        fmt_arg = format_arg(ctx, fmt_val)[0]
        if not fmt_arg.known:
            values["fmt"] = written(fmt_arg, None)
        elif checked.ok("fp8_format"):
            values["fmt"] = written(fmt_arg, FORMATS[checked.values["fp8_format"]])
        else:
            values["fmt"] = ctx.unreadable(fmt_arg)
    te_defaults: dict[str, Any] = {}
    if cls == "DelayedScaling":
        te_defaults = {
            "margin": DELAYED_DEFAULTS["margin"],
            "amax_history_len": DELAYED_DEFAULTS["amax_history_len"],
            "amax_compute_algo": ALGOS[DELAYED_DEFAULTS["amax_compute_algo"]],
            "reduce_amax": DELAYED_DEFAULTS["reduce_amax"],
        }
    for key in ("margin", "amax_history_len", "interval", "reduce_amax", "fp8_dpa", "fp8_mha"):
        val = kw.get(key) if key in allowed else None
        if val is not None:
            values[key] = checked_setting(ctx, val.arg, checked, key)
        elif key in te_defaults:
            values[key] = default(te_defaults[key], TE, key, call_span)
    algo = kw.get("amax_compute_algo") if "amax_compute_algo" in allowed else None
    if algo is not None:
        values["amax_compute_algo"] = (
            checked_setting(ctx, algo.arg, checked, "amax_compute_algo", ALGOS)
            if algo.arg.known
            else _algo_unknown(algo)
        )
    elif "amax_compute_algo" in te_defaults:
        values["amax_compute_algo"] = default(
            te_defaults["amax_compute_algo"], TE, "amax_compute_algo", call_span
        )
    val = kw.get("override_linear_precision") if "override_linear_precision" in allowed else None
    if val is not None:
        from fp8lint.frameworks.shared.python_args import canonical_text

        arg = val.arg
        values["override_linear_precision"] = written(
            arg, canonical_text(arg.value) if arg.known else None
        )
    if cls == "NVFP4BlockScaling":
        for key, field in NVFP4_SWITCHES.items():
            if key in own:  # absent: TE's default is an `NVTE_*` variable, not read here
                values[field] = checked_setting(ctx, own[key].arg, built, key)
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TE,
        kind=f"Transformer Engine {cls}(...)",
        span=call_span,
        invalid=stamped(invalid, cls),
        notes=stamped(notes, cls),
        edit=ctx.edit_info(call, KEYS),
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _algo_unknown(val: Val) -> Setting[Any]:
    """An `amax_compute_algo` fp8lint cannot read: a custom callable, or a name."""
    from fp8lint.frameworks.shared.python_args import is_function

    arg = val.arg
    if is_function(val.node):
        return written(
            arg,
            None,
            "custom callable: TE calls it on the amax history, so "
            "fp8lint cannot tell which amax it picks",
        )
    return written(arg, None, f"{arg.note}; it may be a custom callable" if arg.note else None)


# ------------------------------------------------------------------------ autocast linkage


def is_te_autocast(tgt: Target) -> bool:
    """`fp8_autocast`, or an `autocast` named through Transformer Engine (not torch's)."""
    from fp8lint.documents.python import dotted

    return (
        tgt.name == "fp8_autocast"
        or "transformer_engine" in tgt.origin
        or ((dotted(tgt.callee) or [""])[0] == "te")
    )


def autocast_links(
    ctx: Context, autocasts: list[Target], recipes: dict[int, Target]
) -> tuple[dict[int, list[Setting[Any]]], list[tuple[cst.Call, str]]]:
    """Which recipe each autocast uses (by id of its call), and the amax group it gives it;
    and the autocasts whose recipe fp8lint cannot trace."""
    from fp8lint.documents.python import short
    from fp8lint.frameworks.shared.python_args import call_args

    links: dict[int, list[Setting[Any]]] = {}
    unlinked: list[tuple[cst.Call, str]] = []
    for tgt in autocasts:
        call = tgt.call
        te_named = is_te_autocast(tgt)
        args = call_args(call)
        keyed = {a.keyword: a for a in args if a.keyword is not None}
        if not te_named and not any(k in keyed for k in _RECIPE_KEYS + _GROUP_KEYS):
            continue  # `torch.autocast(...)` and friends
        plain = [a for a in args if a.keyword is None and not a.star]
        recipe_arg = next((keyed[k] for k in _RECIPE_KEYS if k in keyed), None)
        if recipe_arg is None and te_named and len(plain) > 2:
            recipe_arg = plain[2]
        if recipe_arg is None:
            continue  # TE's hardware-dependent default recipe, not one of this file's
        group_arg = next((keyed[k] for k in _GROUP_KEYS if k in keyed), None)
        group_key = "fp8_group" if tgt.name == "fp8_autocast" else "amax_reduction_group"
        if group_arg is None and te_named and len(plain) > 3:
            group_arg = plain[3]
        if group_arg is not None and group_arg.keyword is not None:
            group_key = group_arg.keyword
        setting = _group(ctx, call, group_arg, group_key)
        final = ctx.doc.follow(recipe_arg.value).node
        if id(final) in recipes:
            links.setdefault(id(final), []).append(setting)
        else:
            unlinked.append((call, short(ctx.text(recipe_arg.value))))
    return links, unlinked


def autocast_switches(
    ctx: Context, autocasts: list[Target], recipes: dict[int, Target]
) -> dict[int, Setting[Any]]:
    """The recipes (by id of their call) that every TE autocast using them switches off
    (`enabled=False`, or False as the first argument): nothing runs in FP8 with them, so
    their site is dormant, pointing at the switch.  One autocast left on keeps it live."""
    from fp8lint.frameworks.shared.python_args import call_args

    seen: dict[int, list[Setting[Any] | None]] = {}
    for tgt in autocasts:
        if not is_te_autocast(tgt):
            continue
        args = call_args(tgt.call)
        keyed = {a.keyword: a for a in args if a.keyword is not None}
        plain = [a for a in args if a.keyword is None and not a.star]
        recipe_arg = next((keyed[k] for k in _RECIPE_KEYS if k in keyed), None)
        if recipe_arg is None and len(plain) > 2:
            recipe_arg = plain[2]
        if recipe_arg is None:
            continue
        final = ctx.doc.follow(recipe_arg.value).node
        if id(final) not in recipes:
            continue
        switch = keyed.get("enabled") or (plain[0] if plain else None)
        off: Setting[Any] | None = None
        if switch is not None:
            ok, value = ctx.literal(ctx.doc.follow(switch.value).node)
            if ok and value is False:
                off = Setting[bool].model_construct(
                    value=False,
                    known=True,
                    provenance="written",
                    key="enabled",
                    span=ctx.span(switch.value),
                    raw=ctx.text(switch.value),
                    entry=ctx.span(switch.node),
                    note="every autocast that uses this recipe is switched off",
                )
        seen.setdefault(id(final), []).append(off)
    return {
        key: found[0]
        for key, found in seen.items()
        if found and all(f is not None for f in found) and found[0] is not None
    }


def _group(ctx: Context, call: cst.Call, group: CallArg | None, key: str) -> Setting[Any]:
    import libcst as cst

    from fp8lint.documents.python import last_name, short

    if group is None:
        return default(
            AmaxScope.WORLD,
            TE,
            key,
            ctx.span(call),
            f"no `{key}` given: TE reduces the amax over the world group",
        )
    val = ctx.value_of(key, group.node, group.value)
    arg, node = val.arg, val.node
    if arg.known and arg.value is None:
        return written(
            arg, AmaxScope.WORLD, "`None` is the world group: every rank shares one amax"
        )
    if isinstance(node, cst.Call):
        name = last_name(node.func) or ""
        scope_value = GROUP_GETTERS.get(name)
        if scope_value is None and name.endswith("get_data_parallel_group"):
            scope_value = AmaxScope.DP_ONLY
        if scope_value is not None:
            kw = ctx.keywords(node)
            known = replace(arg, known=True, value=ctx.text(node), note=None)
            flag_name = (
                "tp_only_amax_red"
                if scope_value is AmaxScope.TP_DP_CP
                else "with_context_parallel"
                if scope_value is AmaxScope.TP_DP
                else None
            )
            flag = kw.get(flag_name) if flag_name else None
            if flag is not None:
                if not flag.arg.known:
                    return written(replace(arg, known=False, note=flag.arg.note), None)
                if flag.arg.value is True:
                    scope_value = (
                        AmaxScope.TP_CP if scope_value is AmaxScope.TP_DP_CP else AmaxScope.TP_DP_CP
                    )
            return written(known, scope_value)
    return written(
        replace(arg, known=False),
        None,
        f"fp8lint cannot tell which ranks `{short(arg.raw or '')}` holds",
    )


def amax_scope(
    ctx: Context,
    call: cst.Call,
    linked: list[Setting[Any]],
    unlinked: list[tuple[cst.Call, str]],
) -> Setting[Any]:
    """The amax group of one recipe: from the autocasts that use it, or TE's default."""
    call_span = ctx.span(call)
    if linked:
        first = linked[0]
        known_values = {s.value for s in linked if s.known}
        if len(linked) == 1 or (len(known_values) == 1 and all(s.known for s in linked)):
            extra = tuple(s.span for s in linked[1:] if s.span is not None)
            return first.model_copy(update={"via": first.via + extra})
        narrow = next(
            (s for s in linked if s.known and s.value is not None and s.value.includes_tp is False),
            None,
        )
        pick = narrow or next((s for s in linked if not s.known), first)
        return pick.model_copy(
            update={
                "note": f"this recipe is used by {len(linked)} autocasts with different amax "
                "groups" + (f"; {pick.note}" if pick.note else ""),
            }
        )
    if unlinked:
        other, shown = unlinked[0]
        line = ctx.span(other).line
        return Setting[AmaxScope].model_construct(
            known=False,
            key="fp8_group",
            span=call_span,
            note=f"the autocast on line {line} passes a recipe fp8lint cannot trace "
            f"(`{shown}`), so the amax group of this recipe is unknown",
        )
    return default(
        AmaxScope.WORLD,
        TE,
        "fp8_group",
        call_span,
        "no autocast seen in this file; TE's default group is the world",
    )


# ---------------------------------------------------------------- the model code around it


def module_facts(ctx: Context, sites: list[Fp8Site], te_autocast: bool) -> list[Fp8Site]:
    """Set, on the file's TE recipe sites, what the model code around them shows: a
    recompute through `torch.utils.checkpoint` (delayed recipes only) and a TE linear
    used as the output head (when a TE autocast puts it under FP8)."""
    if not any(s.framework == Framework.TE for s in sites):
        return sites
    recompute = _torch_checkpoint(ctx)
    head = _head(ctx) if te_autocast else None
    if recompute is None and head is None:
        return sites
    out: list[Fp8Site] = []
    for site in sites:
        updates: dict[str, Setting[Any]] = {}
        if site.framework == Framework.TE:
            if recompute is not None and site.is_delayed:
                updates.update(recompute)
            if head is not None:
                updates["output_head_fp8"] = head
        out.append(site.model_copy(update=updates) if updates else site)
    return out


def _calls_named(ctx: Context, names: frozenset[str]) -> list[cst.Call]:
    """The calls of the file whose callee is spelled with one of `names` or an alias of one."""
    facts = ctx.facts
    spelled = set(names) | {a for a, real in facts.aliases.items() if real in names}
    return [call for name in sorted(spelled) for call in facts.calls.get(name, [])]


def _torch_checkpoint(ctx: Context) -> dict[str, Setting[Any]] | None:
    """Full recompute outside TE's own checkpoint: `torch.utils.checkpoint.checkpoint(...)`
    or `checkpoint_sequential(...)` however imported, Hugging Face's
    `model.gradient_checkpointing_enable()` and `gradient_checkpointing=True` (both run
    torch's checkpoint), with the condition each runs under.  The first that runs
    unconditionally or behind a launch option is the one reported; one that nothing in the
    file can reach only when there is no other."""
    import libcst as cst

    from fp8lint.frameworks.shared.python_reach import condition, switch_phrase

    names = frozenset({"checkpoint", "checkpoint_sequential"})
    found: list[tuple[cst.CSTNode, str, str, Condition]] = [
        (call.func, "torch.utils.checkpoint", _TORCH_CHECKPOINT_NOTE, condition(ctx, call))
        for call in _calls_named(ctx, names)
        if ctx.imported_from(call.func) in TORCH_CHECKPOINTS
    ]
    for call in ctx.facts.calls.get("gradient_checkpointing_enable", []):
        if isinstance(call.func, cst.Attribute):
            found.append(
                (call.func, "gradient_checkpointing_enable()", _HF_NOTE, condition(ctx, call))
            )
    for calls in ctx.facts.calls.values():
        for call in calls:
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value != "gradient_checkpointing":
                    continue
                ok, value = ctx.literal(ctx.doc.follow(arg.value).node)
                where = condition(ctx, call)
                if ok and value is not True:
                    continue
                if not ok:
                    switch = switch_phrase(ctx, arg.value)
                    where = _both(where, switch)
                found.append((arg, "gradient_checkpointing=True", _HF_NOTE, where))
    if not found:
        return None
    found.sort(key=lambda f: ctx.doc.where(f[0]))
    rank = {True: 0, None: 1, False: 2}
    node, key, note, where = min(found, key=lambda f: rank[f[3].reachable])
    out: dict[str, Setting[Any]] = {
        "recompute_granularity": Setting[str].model_construct(
            value="full",
            known=True,
            provenance="written",
            key=key,
            span=ctx.span(node),
            note=note,
        )
    }
    if where.phrase is not None:
        out["recompute_condition"] = Setting[str].model_construct(
            value=where.phrase, known=True, provenance="derived", key=key, span=where.span
        )
        out["recompute_reachable"] = Setting[bool].model_construct(
            value=where.reachable,
            known=where.reachable is not None,
            provenance="derived",
            key=key,
            span=where.span,
        )
    return out


def _both(outer: Condition, inner: Condition) -> Condition:
    """Two conditions that must both hold."""
    from fp8lint.frameworks.shared.python_reach import Condition

    phrases = [p for p in (outer.phrase, inner.phrase) if p]
    reach = [outer.reachable, inner.reachable]
    reachable = False if False in reach else (None if None in reach else True)
    return Condition(" and ".join(phrases) or None, reachable, outer.span or inner.span)


def _is_linear(ctx: Context, callee: cst.CSTNode) -> bool:
    """`te.Linear`, `transformer_engine.pytorch.Linear`, or `Linear` imported from
    `transformer_engine.pytorch` (and `LayerNormLinear` the same ways)."""
    origin = ctx.imported_from(callee)
    if origin is None:
        return False
    parts = origin.split(".")
    if parts[-1] not in LINEARS:
        return False
    if parts[0] == "transformer_engine":
        return "pytorch" in parts[1:-1]
    # `te.Linear` with no import of `te` in sight: TE's conventional alias
    return parts[0] == "te" and len(parts) == 2 and not ctx.first_name_imported(callee)


def _head(ctx: Context) -> Setting[bool] | None:
    """The file's first `<head> = te.Linear(...)`: the output head built as a TE linear."""
    found: list[tuple[cst.Call, str]] = []
    for call in _calls_named(ctx, LINEARS):
        assigned = ctx.facts.assigned_to.get(id(call))
        if assigned is None:
            continue
        target = assigned[0]
        if target.rsplit(".", 1)[-1] in HEAD_TARGETS and _is_linear(ctx, call.func):
            found.append((call, target))
    if not found:
        return None
    call, target = min(found, key=lambda f: ctx.doc.where(f[0]))
    return Setting[bool].model_construct(
        value=True,
        known=True,
        provenance="written",
        key=f"{target} = {ctx.text(call.func)}(...)",
        span=ctx.span(call),
        note=_HEAD_NOTE,
    )
