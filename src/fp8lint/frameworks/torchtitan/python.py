"""torchtitan configured in Python (its config registries, `torchtitan/models/*/
config_registry.py`): `Float8LinearConverter.Config(recipe_name=..., filter_fqns=[...],
emulate=...)` in a model's `converters` list.

At pytorch/torchtitan b5bcd76 (`torchtitan/components/quantization/float8.py`): the converter
config defaults to `recipe_name="rowwise"` (its type allows `rowwise` and
`rowwise_with_gw_hp`; a torchao name such as `tensorwise` still reaches
`Float8LinearConfig.from_recipe_name`), `filter_fqns=[]` and `emulate=False`; `emulate=True`
replaces the recipe with `Float8LinearConfig(emulate=True)`, tensorwise.  A linear is skipped
when one of `filter_fqns` is a substring of its name (`components/quantization/utils.py`), so
with the default empty list the output head (`lm_head`, `output` in older models) and an MoE
router gate are converted.  The torchao semantics then apply as for the TOML configs
(`torchtitan`) and `convert_to_float8_training` (`torchao`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, written
from fp8lint.frameworks.shared.torchao_recipes import RECIPES, implied_format, mentions_moe
from fp8lint.frameworks.torchtitan.toml import ROUTER_FQN, filtered, head_in_fp8
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe, Setting, SourceNote

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context, Val

LABEL = "torchtitan"
CONVERTER = "Float8LinearConverter"
# the MX/NVFP4 converters at b5bcd76 (`components/quantization/mx.py:50`, `nvfp4.py:268`):
# `fqns` is an include-list (a Linear is converted when one entry is a substring of its
# name), empty by default, so the default converts every Linear, the LM head included
INCLUDE_CONVERTERS = {"MXFP8LinearConverter": Recipe.MXFP8, "NVFP4LinearConverter": Recipe.NVFP4}
CONVERTERS = (CONVERTER, *INCLUDE_CONVERTERS)


def _converter_name(ctx: Context, call: cst.Call) -> str | None:
    """Which of torchtitan's linear converters `X.Config(...)` configures (also as
    `module.X.Config(...)` or through an alias), None for a class of the file's own."""
    import libcst as cst

    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "Config"):
        return None
    owner = func.value
    name = owner.attr.value if isinstance(owner, cst.Attribute) else None
    if isinstance(owner, cst.Name):
        name = ctx.facts.aliases.get(owner.value, owner.value)
    if name not in CONVERTERS:
        return None
    origin = ctx.imported_from(func)
    if origin is None:
        return None  # the file defines it
    return name if "torchtitan" in origin or not ctx.first_name_imported(func) else None


def sites(ctx: Context) -> list[Fp8Site]:
    named = [(c, _converter_name(ctx, c)) for c in ctx.facts.calls.get("Config", ())]
    found = sorted(((c, n) for c, n in named if n is not None), key=lambda cn: ctx.doc.where(cn[0]))
    return [site(ctx, c) if n == CONVERTER else include_site(ctx, c, n) for c, n in found]


def include_site(ctx: Context, call: cst.Call, name: str) -> Fp8Site:
    """`MXFP8LinearConverter.Config(fqns=...)` / `NVFP4LinearConverter.Config(fqns=...)`:
    recipe MXFP8 (E4M3 blocks of 32) or NVFP4 (as TE Python's NVFP4 autocast: FP4 on)."""
    call_span = ctx.span(call)
    kw = ctx.keywords(call)
    kw.update(ctx.overrides(call))
    recipe = INCLUDE_CONVERTERS[name]
    values: dict[str, Setting[Any]] = {
        "enabled": Setting[bool].model_construct(
            value=True, known=True, provenance="derived", key=name, span=call_span
        ),
        "recipe": Setting[Any].model_construct(
            value=recipe, known=True, provenance="derived", key=name, span=call_span
        ),
        "output_head_fp8": _included_head(call_span, kw.get("fqns")),
    }
    if recipe is Recipe.MXFP8:
        values["fmt"] = default(Fp8Format.E4M3, LABEL, name, call_span, "MXFP8 casts to E4M3")
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TORCHAO,
        kind=f"torchtitan {name}.Config(...)",
        span=call_span,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _included_head(call_span: Any, val: Val | None) -> Setting[Any]:
    """Whether an include-list `fqns` converts the LM head: every Linear when empty or not
    given; else the head when an entry names it (under either spelling of the rename)."""
    if val is None:
        note = "no `fqns` given: the converter converts every Linear, the LM head included"
        return default(True, LABEL, "fqns", call_span, note)
    arg = val.arg
    if not arg.known or not isinstance(arg.value, (list, tuple)):
        return written(arg, None, arg.note or "`fqns` is not a list fp8lint can read")
    fqns = [f for f in arg.value if isinstance(f, str)]
    if not fqns:
        return written(arg, True, "`fqns=[]` converts every Linear, the LM head included")
    head, why = head_in_fp8(fqns)  # an include-list: naming the head converts it
    if head is None:
        return written(arg, None, why).model_copy(update={"known": False})
    return written(arg, not head, None if head else "the list names the LM head")


def site(ctx: Context, call: cst.Call) -> Fp8Site:
    call_span = ctx.span(call)
    kw = ctx.keywords(call)
    kw.update(ctx.overrides(call))
    invalid: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {
        "enabled": Setting[bool].model_construct(
            value=True, known=True, provenance="derived", key=CONVERTER, span=call_span
        ),
    }
    recipe = _recipe(ctx, call_span, kw, invalid)
    values["recipe"] = recipe
    fmt = implied_format(recipe)
    if fmt is not None:
        values["fmt"] = fmt
    head, router = _filters(ctx, call_span, kw.get("filter_fqns"))
    if _emulated(kw) and head.value is True:
        # torchtitan documents `emulate` as for tests only (no FP8 GEMM hardware): the head
        # numerics of such a config are not what a training run gets
        head = head.model_copy(update={"value": None, "known": False, "note": _EMULATE_NOTE})
    values["output_head_fp8"] = head
    if mentions_moe(ctx):
        values["router_fp8"] = router
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TORCHAO,
        kind=f"torchtitan {CONVERTER}.Config(...)",
        span=call_span,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


_EMULATE_NOTE = (
    "`emulate=True` is torchtitan's test-only mode; the head is left to a real recipe's check"
)


def _emulated(kw: dict[str, Val]) -> bool:
    emulate = kw.get("emulate")
    return emulate is not None and emulate.arg.known and emulate.arg.value is True


def _recipe(
    ctx: Context, call_span: Any, kw: dict[str, Val], invalid: list[SourceNote]
) -> Setting[Any]:
    emulate = kw.get("emulate")
    if emulate is not None and _emulated(kw):
        return written(
            emulate.arg,
            Recipe.TENSORWISE,
            "`emulate=True` makes torchtitan use Float8LinearConfig(emulate=True), tensorwise",
        )
    val = kw.get("recipe_name")
    if val is None:
        name = surfaces.defaults("torchtitan")["converter_recipe_name"]
        return default(
            RECIPES[name],
            LABEL,
            "recipe_name",
            call_span,
            f"no `recipe_name` given: torchtitan's converter uses `{name}`",
        )
    arg = val.arg
    checked = surfaces.check("torchtitan", {"converter_recipe_name": arg})
    invalid.extend(checked.invalid)
    if arg.known and not checked.ok("converter_recipe_name"):
        return ctx.unreadable(arg)
    return surfaces.setting_of(arg, checked, "converter_recipe_name", convert=RECIPES.get)


def _filters(ctx: Context, call_span: Any, val: Val | None) -> tuple[Setting[Any], Setting[Any]]:
    """Whether `filter_fqns` leaves the output head, and an MoE router gate, in FP8."""
    if val is None:
        note = "no `filter_fqns` given: torchtitan converts every linear"
        return (
            default(True, LABEL, "filter_fqns", call_span, note),
            default(True, LABEL, "filter_fqns", call_span, note),
        )
    arg = val.arg
    if not arg.known or not isinstance(arg.value, (list, tuple)):
        unknown = written(arg, None, arg.note or "`filter_fqns` is not a list fp8lint can read")
        return unknown, unknown
    filters = [f for f in arg.value if isinstance(f, str)]
    head, why = head_in_fp8(filters)
    router = not filtered(filters, ROUTER_FQN)
    head_setting = written(arg, head, why)
    if head is None:  # named under one spelling only: the torchtitan version decides
        head_setting = head_setting.model_copy(update={"known": False})
    return (
        head_setting,
        written(arg, router, None if router else "the list names the router gate"),
    )
