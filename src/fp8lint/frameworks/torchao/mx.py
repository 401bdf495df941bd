"""torchao's MX training configs read from Python: `MXLinearConfig(...)` and
`MXLinearConfig.from_recipe_name(...)` (torchao 0.9-0.16), and the recipe factories of the
training op configs that replaced it, `MXFP8TrainingOpConfig.from_recipe(...)` and
`Float8TrainingOpConfig.from_recipe(...)`.

An MX config is FP8 or FP4 by its element type: `float8_e4m3fn` (the default, and what the
`mxfp8_*` recipe names build) is the MXFP8 recipe with E4M3 everywhere, `float8_e5m2` MXFP8
with E5M2, `float4_e2m1fn_x2` (the `mxfp4_*` names) MXFP4, which the model records as FP4
on (`fp4` `e2m1`, `fp4_recipe` `mxfp4`) with FP8 off.  FP6 elements, per-operand overrides
and anything not written as a literal or a torch dtype leave the site unknown.  Names,
values and defaults: `torchao.surface` (pytorch/ao@7bb7f061 `mx_formats/config.py`); the
factories: pytorch/ao@36027d82 `torchao/prototype/moe_training/config.py` (L23-35: the
recipe enums; L105-113, L174-204: every `MXFP8TrainingRecipe` builds an MXFP8 config, the one
`Float8TrainingRecipe` the rowwise default).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.model import Fp8Format, Fp8Site, Framework, Recipe, Setting, SourceNote, Span

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context

MX_CONFIG = "MXLinearConfig"
RECIPE_ENUM = "MXLinearRecipeName"
LABEL = "torchao"
OVERRIDES = ("elem_dtype_weight_override", "elem_dtype_grad_output_override")
# `MXLinearConfig`'s dataclass fields in order: what positional arguments fill
POSITIONAL = ("block_size", "elem_dtype", *OVERRIDES)
_FP6 = {"fp6_e2m3": "DTYPE_FP6_E2M3", "fp6_e3m2": "DTYPE_FP6_E3M2"}
# `<Owner>.from_recipe(<Enum>.<MEMBER>)`: the recipe each member builds
FACTORIES: dict[str, tuple[str, dict[str, Recipe]]] = {
    "MXFP8TrainingOpConfig": (
        "MXFP8TrainingRecipe",
        dict.fromkeys(
            ("MXFP8_RCEIL", "MXFP8_RCEIL_WGRAD_WITH_HP", "MXFP8_EMULATED_RCEIL"), Recipe.MXFP8
        ),
    ),
    "Float8TrainingOpConfig": ("Float8TrainingRecipe", {"FP8_ROWWISE": Recipe.ROWWISE}),
}


def _unknown(key: str, note: str) -> Setting[Any]:
    return Setting[Any].model_construct(known=False, key=key, note=note)


def _dtype(ctx: Context, val: Arg, node: cst.CSTNode) -> Arg:
    """An element type as the name it is written with: `torch.float8_e4m3fn` (torch's,
    through the imports), `DTYPE_FP6_E2M3` or its string `"fp6_e2m3"`; None stays None.
    Anything else is unknown."""
    from fp8lint.documents.python import dotted

    if val.known:
        if isinstance(val.value, str) and val.value in _FP6:
            return replace(val, value=_FP6[val.value])
        return val
    parts = dotted(node)
    if parts is None:
        return val
    origin = ctx.origin(node)
    name = parts[-1]
    if origin.startswith("torch.") or (name in _FP6.values() and "torchao" in origin):
        return replace(val, known=True, value=name, note=None)
    return val


def _by_element(elem: Setting[Any], source: Arg | None, span: Span) -> dict[str, Setting[Any]]:
    """The site's settings for an element type: `source` wrote it (None: the default)."""
    if not elem.known:
        why = elem.note or "the element type is not known"
        return {"enabled": _unknown("elem_dtype", why), "recipe": _unknown("elem_dtype", why)}
    name = str(elem.value)

    def setting(value: Any, note: str) -> Setting[Any]:
        if source is None:
            return default(value, LABEL, "elem_dtype", span, note)
        return written(source, value, note)

    if name == "float8_e4m3fn":
        return {
            "enabled": default(True, LABEL, MX_CONFIG, span, None),
            "recipe": setting(Recipe.MXFP8, f"{name} elements in blocks of 32"),
            "fmt": setting(Fp8Format.E4M3, f"{name} elements for every operand, gradients too"),
        }
    if name == "float8_e5m2":  # E5M2 blocks everywhere: no TE format says that (left unknown)
        return {
            "enabled": default(True, LABEL, MX_CONFIG, span, None),
            "recipe": setting(Recipe.MXFP8, f"{name} elements in blocks of 32"),
            "fmt": _unknown("elem_dtype", f"{name} elements for every operand (MX, not TE)"),
        }
    if name == "float4_e2m1fn_x2":
        return {
            "enabled": setting(False, "MXFP4 elements: the linears run in FP4, not FP8"),
            "fp4": setting("e2m1", f"{name} elements (MXFP4)"),
            "fp4_recipe": setting("mxfp4", "MX blocks of 32 FP4 elements, E8M0 scales"),
        }
    note = f"{name} elements (FP6): neither FP8 nor FP4 training"
    return {"enabled": _unknown("elem_dtype", note), "recipe": _unknown("elem_dtype", note)}


def linear_config(
    ctx: Context, call: cst.Call, span: Span
) -> tuple[dict[str, Setting[Any]], list[SourceNote]]:
    """`MXLinearConfig(...)`: MXFP8 with E4M3 elements unless `elem_dtype` says otherwise."""
    from fp8lint.frameworks.shared.python_args import call_args

    invalid: list[SourceNote] = []
    args = call_args(call)
    if any(a.star for a in args):
        why = "the config's fields may come from `*`/`**` arguments"
        return {"enabled": _unknown(MX_CONFIG, why), "recipe": _unknown(MX_CONFIG, why)}, []
    given: dict[str, tuple[Arg, cst.CSTNode]] = {}
    plain = [a for a in args if a.keyword is None]
    for key, a in [*zip(POSITIONAL, plain, strict=False), *((a.keyword, a) for a in args)]:
        if key in ("elem_dtype", *OVERRIDES):
            val = ctx.value_of(key, a.node, a.value)
            given[key] = (_dtype(ctx, val.arg, val.node), val.node)
    overridden = [
        k for k in OVERRIDES if k in given and not (given[k][0].known and given[k][0].value is None)
    ]
    if overridden:
        why = f"`{overridden[0]}` mixes element types: not modelled"
        return {"enabled": _unknown(overridden[0], why), "recipe": _unknown(overridden[0], why)}, []
    found = given.get("elem_dtype")
    if found is None:
        name = surfaces.defaults_of(_model())["elem_dtype"]
        elem = default(name, LABEL, "elem_dtype", span, None)
        return _by_element(elem, None, span), invalid
    arg = found[0]
    return _by_element(_checked(ctx, arg, "elem_dtype", invalid), arg, span), invalid


def _model() -> type[Any]:
    from fp8lint.frameworks.torchao.surface import MXLinearConfig

    return MXLinearConfig


def _checked(ctx: Context, arg: Arg, key: str, invalid: list[SourceNote]) -> Setting[Any]:
    if not arg.known:
        return written(arg, None)
    checked = surfaces.check_model(_model(), {key: arg})
    invalid.extend(checked.invalid)
    if not checked.ok(key):
        return ctx.unreadable(arg)
    return written(arg, checked.values[key])


def factory_sites(ctx: Context) -> list[Fp8Site]:
    """`MXLinearConfig.from_recipe_name(...)` and the training op configs' `from_recipe(...)`,
    each torchao's (through the file's imports)."""
    found: list[Fp8Site] = []
    for method in ("from_recipe_name", "from_recipe"):
        for call in ctx.facts.calls.get(method, ()):
            owner = _owner(ctx, call, method)
            if owner is not None:
                found.append(_factory_site(ctx, call, owner, method))
    return found


def _owner(ctx: Context, call: cst.Call, method: str) -> str | None:
    import libcst as cst

    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    origin = ctx.imported_from(func.value)
    if origin is None or "torchao" not in origin:
        return None
    owner = origin.rsplit(".", 1)[-1]
    wanted = (MX_CONFIG,) if method == "from_recipe_name" else tuple(FACTORIES)
    return owner if owner in wanted else None


def _factory_site(ctx: Context, call: cst.Call, owner: str, method: str) -> Fp8Site:
    from fp8lint.documents.python import dotted
    from fp8lint.frameworks.shared.python_args import call_args, is_member_of

    span = ctx.span(call)
    invalid: list[SourceNote] = []
    args = call_args(call)
    key = "recipe_name" if method == "from_recipe_name" else "recipe"
    given = next((a for a in args if a.keyword is None and not a.star), None) or next(
        (a for a in args if a.keyword == key), None
    )
    kind = f"torchao {owner}.{method}(...) (low-precision training)"
    values: dict[str, Setting[Any]]
    if given is None:
        why = f"{method}() names no recipe"
        values = {"enabled": _unknown(key, why), "recipe": _unknown(key, why)}
    else:
        val = ctx.value_of(key, given.node, given.value)
        arg = val.arg
        if method == "from_recipe_name":
            if dotted(val.node) is not None and is_member_of(val.node, RECIPE_ENUM):
                member = val.node.attr.value.lower()  # type: ignore[attr-defined]
                arg = replace(arg, known=True, value=member, note=None)
            name = _checked(ctx, arg, "recipe_name", invalid)
            if name.known and isinstance(name.value, str):
                from fp8lint.frameworks.torchao.surface import MX_RECIPE_ELEM

                elem = default(MX_RECIPE_ELEM[name.value], LABEL, key, span, None)
                values = _by_element(elem, arg, span)
            else:
                values = {"enabled": _unknown(key, "the recipe name is not known"), "recipe": name}
        else:
            enum, members = FACTORIES[owner]
            recipe = None
            if dotted(val.node) is not None and is_member_of(val.node, enum):
                recipe = members.get(val.node.attr.value)  # type: ignore[attr-defined]
            if recipe is None:
                why = arg.note or f"not a {enum} member fp8lint knows"
                values = {
                    "enabled": _unknown(key, why),
                    "recipe": written(replace(arg, known=False), None, why),
                }
            else:
                values = {
                    "enabled": default(True, LABEL, owner, span, None),
                    "recipe": written(
                        replace(arg, known=True, value=recipe.value, note=None), recipe
                    ),
                }
                from fp8lint.frameworks.shared.torchao_recipes import implied_format

                fmt = implied_format(values["recipe"])
                if fmt is not None:
                    values["fmt"] = fmt
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TORCHAO,
        kind=kind,
        span=span,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )
