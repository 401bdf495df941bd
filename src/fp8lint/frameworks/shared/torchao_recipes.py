"""torchao's float8 recipes as several families read them: the recipe names, the format a
recipe implies, the reading of a `config=` (`Float8LinearConfig()` and
`Float8LinearConfig.from_recipe_name(...)`) and of a module filter function (which linears
stay in high precision), and whether a file is of a mixture-of-experts model.  torchao's
`convert_to_float8_training`, Accelerate's `AORecipeKwargs`, torchtitan, NeMo AutoModel and
OLMo-core all hand their recipes to these.

Names and values: torchao `torchao/float8/config.py` and `float8_linear_utils.py`
(pytorch/ao@36027d82); the pre-0.9 names are `shared.torchao_names`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, written
from fp8lint.frameworks.shared.torchao_names import PRE_0_9_NAMES
from fp8lint.model import Fp8Format, Recipe, Setting, SourceNote, Span

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import CallArg, Context

TORCHAO = "torchao"
CONFIG = "Float8LinearConfig"
RECIPE_ENUM = "Float8LinearRecipeName"
RECIPES = {
    "tensorwise": Recipe.TENSORWISE,
    "all_tensorwise": Recipe.TENSORWISE,
    "rowwise": Recipe.ROWWISE,
    "rowwise_with_gw_hp": Recipe.ROWWISE,
    "all_axiswise": Recipe.ROWWISE,
    "lw_axiswise_with_gw_hp": Recipe.ROWWISE,
}
# a filter string naming the output head (`fqn != "output"`, `"lm_head" not in fqn`)
HEAD_NAMES = frozenset({"output", "lm_head", "head"})
_NO_FILTER = "torchao converts every nn.Linear when no module_filter_fn is given"
_UNREADABLE_FILTER = "module_filter_fn is not a filter fp8lint can read"
_WORD_SPLIT = re.compile(r"[^a-z0-9_]+")


def names_head(text: str) -> bool:
    """A filter string naming the output head: `output`, `lm_head`, `model.lm_head`."""
    name = text.strip().strip(".")
    return name in HEAD_NAMES or name.rsplit(".", 1)[-1] in HEAD_NAMES


def names_router(text: str) -> bool:
    """A filter string naming an MoE router: `router`, `router.gate`, `mlp.gate`."""
    lowered = text.strip().lower()
    return "router" in lowered or "gate" in lowered.split(".")


def moe_word(text: str) -> bool:
    """A name or module path of a mixture-of-experts model.  `gate` counts only as a whole
    part (`mlp.gate`, `self.gate`), not inside `gate_proj` (dense SwiGLU) or `aggregate`."""
    return any(
        "router" in part or "moe" in part or "expert" in part or part == "gate"
        for part in _WORD_SPLIT.split(text.lower())
    )


def implied_format(recipe: Setting[Any], key: str | None = None) -> Setting[Fp8Format] | None:
    """The format a torchao recipe implies (torchao has no format knob): tensorwise casts
    gradients to E5M2 and the forward to E4M3; rowwise and the other recipes use E4M3 for
    every operand.  None while the recipe is unknown."""
    if not (recipe.known and isinstance(recipe.value, Recipe)):
        return None
    tensorwise = recipe.value is Recipe.TENSORWISE
    return default(
        Fp8Format.HYBRID if tensorwise else Fp8Format.E4M3,
        TORCHAO,
        key if key is not None else recipe.key,
        recipe.span,
        "tensorwise casts gradients to E5M2 (E4M3 forward)"
        if tensorwise
        else f"{recipe.value.value} casts every operand to E4M3, gradients included",
    )


def written_at(
    ctx: Context,
    arg: CallArg,
    key: str,
    value: Any,
    note: str,
    via: tuple[Span, ...] = (),
    known: bool = True,
) -> Setting[Any]:
    """A setting written by keyword argument `arg` (its value and its whole entry)."""
    return Setting[Any].model_construct(
        value=value,
        known=known,
        provenance="written",
        span=ctx.span(arg.value),
        key=key,
        raw=ctx.text(arg.value),
        note=note,
        via=via,
        entry=ctx.span(arg.node),
    )


def unknown_at(
    ctx: Context, arg: CallArg, key: str, note: str, via: tuple[Span, ...] = ()
) -> Setting[Any]:
    return written_at(ctx, arg, key, None, note, via, known=False)


def read_recipe(
    ctx: Context,
    call_span: Span,
    arg: CallArg | None,
    splat: CallArg | None,
    invalid: list[SourceNote],
) -> Setting[Any]:
    """The recipe of `config=`: absent or None is `Float8LinearConfig()`, tensorwise."""
    import libcst as cst

    from fp8lint.documents.python import dotted, short
    from fp8lint.frameworks.shared.python_args import is_member_of, names

    if arg is None:
        if splat is not None:
            shown = short(ctx.text(splat.value))
            return unknown_at(ctx, splat, "config", f"`config` may come from `**{shown}`")
        return default(
            Recipe.TENSORWISE,
            TORCHAO,
            "config",
            call_span,
            "no `config` given: torchao uses Float8LinearConfig(), which is tensorwise",
        )
    followed = ctx.doc.follow(arg.value)
    final = followed.node
    via = tuple(ctx.span(v) for v in followed.via)
    ok, value = ctx.literal(final)
    if ok and value is None:
        return default(
            Recipe.TENSORWISE,
            TORCHAO,
            "config",
            ctx.span(arg.value),
            "`config=None`: torchao uses Float8LinearConfig(), which is tensorwise",
        )
    if isinstance(final, cst.Call):
        parts = dotted(final.func) or []
        base = _base(final.func)
        if parts and not (base is not None and ctx.doc.defines_locally(base)):
            if names(final.func, CONFIG):
                return _config(ctx, arg, final, via)
            if is_member_of(final.func, CONFIG) and names(final.func, "from_recipe_name"):
                return _recipe_name(ctx, arg, final, via, invalid)
    shown = short(ctx.text(arg.value))
    return unknown_at(
        ctx,
        arg,
        "config",
        followed.why or f"`{shown}` is not a Float8LinearConfig fp8lint can read",
        via,
    )


def _base(node: cst.CSTNode) -> cst.Name | None:
    import libcst as cst

    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def _config(ctx: Context, arg: CallArg, call: cst.Call, via: tuple[Span, ...]) -> Setting[Any]:
    """`Float8LinearConfig(...)`: tensorwise unless it sets cast configs (or may)."""
    from fp8lint.frameworks.shared.python_args import call_args

    casts = [
        a
        for a in call_args(call)
        if a.star or a.keyword is None or a.keyword.startswith("cast_config")
    ]
    set_later = [n for n, _ in ctx.overrides(call) if n.startswith("cast_config")]
    if casts or set_later:
        return unknown_at(
            ctx,
            arg,
            "config",
            "this Float8LinearConfig sets its own cast configs; fp8lint reads only the "
            "default config and from_recipe_name(...)",
            via,
        )
    return Setting[Any].model_construct(
        value=Recipe.TENSORWISE,
        known=True,
        provenance="default",
        span=ctx.span(call),
        key="config",
        default_of=TORCHAO,
        note="Float8LinearConfig() without cast configs is tensorwise",
        via=via,
    )


def _recipe_name(
    ctx: Context,
    arg: CallArg,
    call: cst.Call,
    via: tuple[Span, ...],
    invalid: list[SourceNote],
) -> Setting[Any]:
    """`Float8LinearConfig.from_recipe_name("rowwise")` (or a `Float8LinearRecipeName`)."""

    from fp8lint.documents.python import dotted
    from fp8lint.frameworks.shared.python_args import call_args, is_member_of

    args = call_args(call)
    given = next((a for a in args if a.keyword is None and not a.star), None) or next(
        (a for a in args if a.keyword == "recipe_name"), None
    )
    if given is None:
        return unknown_at(ctx, arg, "config", "from_recipe_name() names no recipe", via)
    val = ctx.value_of("recipe_name", given.node, given.value)
    name_arg = replace(val.arg, via=via + val.arg.via)
    name: str | None = None
    if dotted(val.node) is not None and is_member_of(val.node, RECIPE_ENUM):
        name = val.node.attr.value.lower()  # type: ignore[attr-defined]
        name_arg = replace(name_arg, known=True, value=name, note=None)
    elif name_arg.known and isinstance(name_arg.value, str):
        name = name_arg.value
    elif not name_arg.known:
        return written(name_arg, None)
    checked = surfaces.check("torchao", {"recipe_name": name_arg})
    invalid.extend(checked.invalid)
    if name is None or not checked.ok("recipe_name"):
        return ctx.unreadable(name_arg)
    renamed = PRE_0_9_NAMES.get(name)
    note = f"`{name}` is the pre-0.9 name of `{renamed}`" if renamed else None
    return written(name_arg, RECIPES[name], note)


def read_filter(
    ctx: Context, call_span: Span, arg: CallArg | None, splat: CallArg | None
) -> tuple[Setting[Any], Setting[Any]]:
    """Whether `module_filter_fn` leaves the output head, and the MoE router, in FP8."""

    from fp8lint.documents.python import short
    from fp8lint.frameworks.shared.python_args import is_function

    key = "module_filter_fn"
    no_router = "nothing filters the MoE router gate when no module_filter_fn is given"
    if arg is None and splat is not None:
        shown = short(ctx.text(splat.value))
        unknown = unknown_at(ctx, splat, key, f"`{key}` may come from `**{shown}`")
        return unknown, unknown
    if arg is None:
        return (
            default(True, TORCHAO, key, call_span, _NO_FILTER),
            default(True, TORCHAO, key, call_span, no_router),
        )
    followed = ctx.doc.follow(arg.value)
    final = followed.node
    via = tuple(ctx.span(v) for v in followed.via)
    ok, value = ctx.literal(final)
    if ok and value is None:
        span = ctx.span(arg.value)
        return (
            default(True, TORCHAO, key, span, _NO_FILTER),
            default(True, TORCHAO, key, span, no_router),
        )
    if not is_function(final):
        unknown = unknown_at(ctx, arg, key, _UNREADABLE_FILTER, via)
        return unknown, unknown
    strings = ctx.doc.strings_in(final.body)  # type: ignore[attr-defined]

    def found(value: bool, note: str) -> Setting[Any]:
        return written_at(ctx, arg, key, value, note, via)

    heads = sorted({s for s in strings if names_head(s)})
    head = (
        found(False, "the filter names " + ", ".join(f'"{s}"' for s in heads))
        if heads
        else unknown_at(ctx, arg, key, _UNREADABLE_FILTER, via)
    )
    routers = sorted({s for s in strings if names_router(s)})
    router = (
        found(False, "the filter names " + ", ".join(f'"{s}"' for s in routers))
        if routers
        else found(True, "the filter names no router or gate module")
    )
    return head, router


def mentions_moe(ctx: Context) -> bool:
    """Whether a name, or a string without spaces (a module path, not prose), in the file
    names a mixture-of-experts part: router, gate, moe, experts."""
    if ctx.moe is None:
        ctx.moe = any(moe_word(word) for word in ctx.doc.words())
    return ctx.moe
