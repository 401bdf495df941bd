"""Transformer Engine without an explicit recipe: `te.fp8_autocast()` / `te.autocast()` (and
`fp8_autocast(enabled=True)`) that pass no recipe run TE's default recipe.

`recipe=None` (`fp8_recipe=None`) makes TE call `get_default_fp8_recipe()`
(`transformer_engine/pytorch/quantization.py`): `DelayedScaling()`
on Hopper and Ada (HYBRID, margin 0, history 1024, `max`), `MXFP8BlockScaling()` on
Blackwell, `Float8CurrentScaling()` on compute capability 12.  The hardware is not in the file,
so the site takes the Hopper default, as the issue asks and as the recipe most such code was
written for, and says so in its note.  TE's JAX autocast (`transformer_engine/jax/quantize/
helper.py`) differs: `autocast(enabled=False, recipe=None, mesh_resource=None)`, off unless
enabled, and its default recipe is always `DelayedScaling()`.  The recipe sites `te` builds
from explicit recipe calls are separate; this site stands for the autocasts that name none
(the first one anchors it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared.base import default, written
from fp8lint.frameworks.shared.te_recipes import ALGOS, FORMATS, TE
from fp8lint.frameworks.te.python import DELAYED_DEFAULTS
from fp8lint.model import Fp8Site, Framework, Recipe, Setting

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import CallArg, Context, Target

_JAX_NOTE = "no recipe given: TE's JAX autocast uses DelayedScaling()"
_RECIPE_NOTE = (
    "no recipe given: TE's get_default_fp8_recipe() is DelayedScaling() before Blackwell "
    "(MXFP8BlockScaling on Blackwell, Float8CurrentScaling on compute capability 12)"
)


def is_jax(tgt: Target) -> bool:
    """TE's JAX autocast: `autocast(enabled=False, recipe=None, mesh_resource=None)`."""
    return "transformer_engine.jax" in tgt.origin


def _bare(tgt: Target) -> tuple[CallArg | None, CallArg | None] | None:
    """(enabled, group) arguments of a TE autocast that passes no recipe; None otherwise."""
    from fp8lint.frameworks.shared.python_args import call_args
    from fp8lint.frameworks.te.python import is_te_autocast

    if not is_te_autocast(tgt):
        return None
    args = call_args(tgt.call)
    if any(a.star for a in args):
        return None  # `**kwargs` may carry the recipe
    keyed = {a.keyword: a for a in args if a.keyword is not None}
    plain = [a for a in args if a.keyword is None]
    recipe_at = 1 if is_jax(tgt) else 2
    if "fp8_recipe" in keyed or "recipe" in keyed or len(plain) > recipe_at:
        return None
    enabled = keyed.get("enabled") or (plain[0] if plain else None)
    if is_jax(tgt):
        return enabled, None
    group = keyed.get("fp8_group") or keyed.get("amax_reduction_group")
    if group is None and len(plain) > 3:
        group = plain[3]
    return enabled, group


def _switch(ctx: Context, enabled_arg: Any) -> Setting[str] | None:
    """`enabled=args.use_fp8` (or a parameter named after an argparse flag): the phrase that
    says which command-line flag switches FP8 on; None for anything else."""
    from fp8lint.frameworks.shared.python_reach import switch_phrase

    found = switch_phrase(ctx, enabled_arg.value)
    if found.reachable is not True or not found.phrase:
        return None
    return Setting[str].model_construct(
        value=found.phrase, known=True, provenance="derived", key="enabled", span=found.span
    )


def from_context(ctx: Context) -> list[Fp8Site]:
    """The registry's entry: the autocasts among the calls the core pass found."""
    from fp8lint.frameworks.te.python import AUTOCASTS

    return sites(ctx, [t for t in ctx.targets if t.name in AUTOCASTS])


def sites(ctx: Context, autocasts: list[Target]) -> list[Fp8Site]:
    """One site for the file's TE autocasts that name no recipe, at the first that may run
    FP8 (`enabled=False` runs none)."""
    from fp8lint.frameworks.te.python import _group

    for tgt in autocasts:
        found = _bare(tgt)
        if found is None:
            continue
        enabled_arg, group_arg = found
        call = tgt.call
        call_span = ctx.span(call)
        jax = is_jax(tgt)
        if enabled_arg is None:
            if jax:
                continue  # TE's JAX autocast is off unless `enabled=True`
            enabled: Setting[Any] = default(True, TE, "enabled", call_span)
        else:
            arg = ctx.value_of("enabled", enabled_arg.node, enabled_arg.value).arg
            if arg.known and arg.value is False:
                continue
            enabled = written(arg, bool(arg.value) if arg.known else None)
        condition = None if enabled_arg is None or enabled.known else _switch(ctx, enabled_arg)
        key = "fp8_group" if tgt.name == "fp8_autocast" else "amax_reduction_group"
        if group_arg is not None and group_arg.keyword is not None:
            key = group_arg.keyword
        recipe_key = "fp8_recipe" if tgt.name == "fp8_autocast" else "recipe"
        values: dict[str, Setting[Any]] = {
            "enabled": enabled,
            "recipe": default(
                Recipe.DELAYED, TE, recipe_key, call_span, _JAX_NOTE if jax else _RECIPE_NOTE
            ),
            "fmt": default(FORMATS[DELAYED_DEFAULTS["fp8_format"]], TE, "fp8_format", call_span),
            "margin": default(DELAYED_DEFAULTS["margin"], TE, "margin", call_span),
            "amax_history_len": default(
                DELAYED_DEFAULTS["amax_history_len"], TE, "amax_history_len", call_span
            ),
            "amax_compute_algo": default(
                ALGOS[DELAYED_DEFAULTS["amax_compute_algo"]], TE, "amax_compute_algo", call_span
            ),
            "reduce_amax": default(DELAYED_DEFAULTS["reduce_amax"], TE, "reduce_amax", call_span),
        }
        if not jax:  # the JAX autocast takes a mesh, not an amax group
            values["amax_scope"] = _group(ctx, call, group_arg, key)
        if condition is not None:
            values["enabled_condition"] = condition
        return [
            Fp8Site.model_construct(
                path=ctx.file.path,
                framework=Framework.TE,
                kind=f"Transformer Engine {ctx.text(call.func)}() with TE's default recipe",
                span=call_span,
                enable_span=enabled.span if enabled.written else None,
                **cast("dict[str, Any]", values),  # keys are Setting fields
            )
        ]
    return []
