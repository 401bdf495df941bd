"""OLMo-core: `Float8Config(enabled=..., ao=AOFloat8LinearConfig(...) | ao_recipe=... |
ao_mx=AOMXLinearConfig(...))`, read from Python training scripts.

OLMo-core trains in FP8 through torchao (`src/olmo_core/float8/__init__.py`, `ao.py` at
allenai/OLMo-core fa6c501): `enabled` defaults to True; `ao` is torchao's
`Float8LinearConfig` field for field (`AOFloat8LinearConfig.recommended()` sets FSDP float8
all-gather, the deprecated recompute flag and power-of-2 scales, no cast configs, so it is
tensorwise); `ao_recipe` names a torchao recipe (tensorwise, rowwise, rowwise_with_gw_hp);
`ao_mx` uses MX block scaling; none of them is `AOFloat8LinearConfig()`, tensorwise.
`TransformerModel.apply_fp8` (`nn/transformer/model.py`) always adds `lm_head.w_out` to the
modules it leaves in high precision, so the output head is never FP8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, invalid_note, written
from fp8lint.frameworks.shared.torchao_recipes import RECIPES, implied_format
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, SourceNote, Span

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context, Target, Val

LABEL = "OLMo-core"
CONFIG = "Float8Config"
AO_CONFIG = "AOFloat8LinearConfig"
RECIPE_ENUM = "AOFloat8LinearRecipe"
MX_CONFIG = "AOMXLinearConfig"
_HEAD_NOTE = "OLMo-core's TransformerModel.apply_fp8 always leaves lm_head.w_out out of FP8"


def imported_from_olmo(module: str) -> bool:
    return "olmo_core" in module


def sites(ctx: Context) -> list[Fp8Site]:
    """One site per `Float8Config(...)` call the file makes (OLMo-core's, however imported)."""
    found: list[Fp8Site] = []
    spelled = {CONFIG} | {a for a, real in ctx.facts.aliases.items() if real == CONFIG}
    for name in sorted(spelled):
        for call in ctx.facts.calls.get(name, ()):
            tgt = ctx.target(call, {CONFIG}, {CONFIG}, {CONFIG: imported_from_olmo})
            if tgt is None or not _olmo(ctx, tgt):
                continue
            found.append(site(ctx, tgt))
    return found


def _olmo(ctx: Context, tgt: Target) -> bool:
    """A bare name was checked against its import; a dotted one must lead to olmo_core."""
    import libcst as cst

    return isinstance(tgt.callee, cst.Name) or imported_from_olmo(tgt.origin)


def site(ctx: Context, tgt: Target) -> Fp8Site:
    call = tgt.call
    call_span = ctx.span(call)
    kw = ctx.keywords(call)
    kw.update(ctx.overrides(call))
    invalid: list[SourceNote] = []
    val = kw.get("enabled")
    checked = surfaces.check("olmo_core", {"enabled": val.arg} if val is not None else {})
    invalid.extend(checked.invalid)
    if val is not None and val.arg.known and not checked.ok("enabled"):
        enabled = ctx.unreadable(val.arg)  # as a rejected value has always read here
    else:
        enabled = surfaces.setting_of(
            val.arg if val is not None else None,
            checked,
            "enabled",
            missing=lambda: default(
                surfaces.defaults("olmo_core")["enabled"], LABEL, "enabled", call_span
            ),
        )
    recipe = _recipe(ctx, call_span, kw, invalid)
    return _site(ctx, f"OLMo-core {CONFIG}(...)", call_span, enabled, recipe, invalid)


def _site(
    ctx: Context,
    kind: str,
    span: Span,
    enabled: Setting[Any],
    recipe: Setting[Any],
    invalid: list[SourceNote],
) -> Fp8Site:
    """An OLMo-core FP8 site: torchao's format for the recipe, and the head never in FP8."""
    values: dict[str, Setting[Any]] = {"recipe": recipe}
    fmt = implied_format(recipe)
    if fmt is not None:
        values["fmt"] = fmt
    values["output_head_fp8"] = default(False, LABEL, "modules_to_ignore", span, _HEAD_NOTE)
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TORCHAO,
        kind=kind,
        span=span,
        enable_span=enabled.span if enabled.written else None,
        enabled=enabled,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _recipe(
    ctx: Context, call_span: Span, kw: dict[str, Val], invalid: list[SourceNote]
) -> Setting[Any]:
    """`ao=`, `ao_recipe=` or `ao_mx=` (OLMo-core rejects more than one); none of them is
    `AOFloat8LinearConfig()`, tensorwise."""
    given = [k for k in ("ao", "ao_recipe", "ao_mx") if k in kw and not _is_none(kw[k])]
    if not given:
        return default(
            Recipe.TENSORWISE,
            LABEL,
            "ao",
            call_span,
            "no `ao`, `ao_recipe` or `ao_mx`: OLMo-core uses AOFloat8LinearConfig(), tensorwise",
        )
    if len(given) > 1:
        val = kw[given[1]]
        invalid.append(
            invalid_note(val.arg, "OLMo-core accepts only one of `ao`, `ao_recipe` and `ao_mx`")
        )
        return ctx.unreadable(val.arg)
    key = given[0]
    val = kw[key]
    if key == "ao_recipe":
        return _recipe_name(ctx, val, invalid)
    return _config(ctx, key, val)


def _is_none(val: Val) -> bool:
    return val.arg.known and val.arg.value is None


def _callee(node: cst.CSTNode) -> tuple[str, str] | None:
    """(class, method) of `Cls(...)` / `mod.Cls(...)` / `Cls.method(...)`, else None."""
    import libcst as cst

    from fp8lint.documents.python import dotted

    if not isinstance(node, cst.Call):
        return None
    parts = dotted(node.func)
    if not parts:
        return None
    if len(parts) >= 2 and parts[-2] in (AO_CONFIG, MX_CONFIG):
        return parts[-2], parts[-1]
    return parts[-1], ""


def _config(ctx: Context, key: str, val: Val) -> Setting[Any]:
    """`ao=AOFloat8LinearConfig(...)` / `.recommended(...)`: tensorwise unless it sets cast
    configs; `ao_mx=AOMXLinearConfig(...)`: MXFP8 unless it names another element type."""
    import libcst as cst

    from fp8lint.documents.python import short

    arg = val.arg
    found = _callee(val.node)
    shown = short(arg.raw or "")
    if found is None or found[0] not in (AO_CONFIG, MX_CONFIG):
        return written(arg, None, arg.note or f"`{shown}` is not a config fp8lint can read")
    cls, method = found
    assert isinstance(val.node, cst.Call)
    keywords = {a.keyword.value for a in val.node.args if a.keyword is not None}
    splat = any(a.star for a in val.node.args)
    if cls == MX_CONFIG:
        if key != "ao_mx" or "elem_dtype" in keywords or splat:
            return written(arg, None, "an MX config with its own element type")
        return Setting[Any].model_construct(
            value=Recipe.MXFP8,
            known=True,
            provenance="written",
            key=key,
            span=arg.value_span,
            raw=arg.raw,
            entry=arg.span,
            via=arg.via,
        )
    if key != "ao" or method not in ("", "recommended"):
        return written(arg, None, f"`{shown}` is not a config fp8lint can read")
    if splat or any(k.startswith("cast_config") for k in keywords):
        return written(
            arg,
            None,
            "this AOFloat8LinearConfig sets its own cast configs; fp8lint reads only the "
            "default config, recommended() and recipe names",
        )
    note = (
        "AOFloat8LinearConfig.recommended() sets no cast configs, so it is tensorwise"
        if method
        else "AOFloat8LinearConfig() without cast configs is tensorwise"
    )
    return Setting[Any].model_construct(
        value=Recipe.TENSORWISE,
        known=True,
        provenance="default",
        key=key,
        span=arg.value_span,
        raw=arg.raw,
        default_of="torchao",
        note=note,
        entry=arg.span,
        via=arg.via,
    )


def _recipe_name(ctx: Context, val: Val, invalid: list[SourceNote]) -> Setting[Any]:
    """`ao_recipe="rowwise"` or `AOFloat8LinearRecipe.rowwise` (a string enum)."""
    from dataclasses import replace

    from fp8lint.documents.python import dotted
    from fp8lint.frameworks.shared.python_args import is_member_of

    arg = val.arg
    if dotted(val.node) is not None and is_member_of(val.node, RECIPE_ENUM):
        name = val.node.attr.value  # type: ignore[attr-defined]
        arg = replace(arg, known=True, value=name, note=None)
    elif not arg.known:
        return written(arg, None)
    checked = surfaces.check("olmo_core", {"ao_recipe": arg})
    invalid.extend(checked.invalid)
    if not checked.ok("ao_recipe"):
        return ctx.unreadable(arg)
    return written(arg, RECIPES[checked.values["ao_recipe"]])


# `olmo_core.internal.cookbook.configure_train_module(..., float8_enabled=True)` builds
# `Float8Config(enabled=float8_enabled, ao=AOFloat8LinearConfig.recommended())`
# (allenai/OLMo-core fa6c5014 `src/olmo_core/internal/cookbook.py` L44-90; its OLMo 3 scripts
# call it with `float8_enabled=True`): tensorwise, the head left out
COOKBOOK = "configure_train_module"
_COOKBOOK_NOTE = "the cookbook builds Float8Config(ao=AOFloat8LinearConfig.recommended())"


def cookbook_sites(ctx: Context) -> list[Fp8Site]:
    """One site per cookbook call that passes `float8_enabled=` (its default is False)."""
    found: list[Fp8Site] = []
    for call in ctx.facts.calls.get(COOKBOOK, ()):
        tgt = ctx.target(call, {COOKBOOK}, {COOKBOOK}, {COOKBOOK: imported_from_olmo})
        if tgt is None or not _olmo(ctx, tgt):
            continue
        val = ctx.keywords(call).get("float8_enabled")
        if val is None:
            continue
        span = ctx.span(call)
        enabled = written(val.arg, val.arg.value if isinstance(val.arg.value, bool) else None)
        if val.arg.known and not isinstance(val.arg.value, bool):
            enabled = ctx.unreadable(val.arg)
        recipe = default(Recipe.TENSORWISE, LABEL, "float8_enabled", span, _COOKBOOK_NOTE)
        kind = f"OLMo-core cookbook.{COOKBOOK}(float8_enabled=...)"
        found.append(_site(ctx, kind, span, enabled, recipe, []))
    return found
