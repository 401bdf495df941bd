"""Lightning (Trainer and Fabric) with Transformer Engine: `precision="transformer-engine"`
(or `"transformer-engine-float16"`) and `TransformerEnginePrecision(weights_dtype=...,
recipe=...)`, read from Python.

At Lightning-AI/pytorch-lightning 7f0c343 (`src/lightning/fabric/plugins/precision/
transformer_engine.py`; the Trainer's plugin subclasses it): the precision strings build
`TransformerEnginePrecision(weights_dtype=torch.bfloat16)` (`float16` for the `-float16` one;
`fabric/connector.py`, `pytorch/trainer/connectors/accelerator_connector.py`); `recipe=None`
is TE's `DelayedScaling()`; a mapping is passed as `DelayedScaling(**recipe)` with
`fp8_format` looked up by name on TE's `Format` (a key DelayedScaling lacks is dropped by TE's
pydantic dataclass, as `te` notes for keywords); a TE recipe object is used as it is (then
the recipe's own call is the site, read by `te`).  `forward_context` enters
`te.fp8_autocast(enabled=True, fp8_recipe=recipe)` with no amax group: the world.  With
`replace_layers` None or True every `nn.Linear` whose sizes divide by 8 and 16 becomes a
`te.Linear`, the output head included when its vocabulary size does, which a config alone does
not show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import default, note, written
from fp8lint.frameworks.shared.te_recipes import (
    ALGOS,
    CHECKED,
    CLASSES,
    FORMATS,
    TE,
    checked_setting,
    delayed_defaults,
)
from fp8lint.model import AmaxScope, Fp8Site, Framework, Recipe, Setting, SourceNote, Span

if TYPE_CHECKING:
    import libcst as cst

    from fp8lint.frameworks.shared.python_args import Context, Val

LABEL = "Lightning"
PLUGIN = "TransformerEnginePrecision"
PRECISIONS = {"transformer-engine": "bfloat16", "transformer-engine-float16": "float16"}
OWNERS = frozenset({"Trainer", "Fabric"})
# the DelayedScaling keywords a recipe mapping may carry
RECIPE_KEYS = frozenset(
    {
        "fp8_format",
        "margin",
        "interval",
        "amax_history_len",
        "amax_compute_algo",
        "reduce_amax",
        "override_linear_precision",
        "fp8_dpa",
        "fp8_mha",
    }
)
_HEAD_NOTE = (
    "Lightning swaps every nn.Linear whose sizes divide by 8 and 16 for te.Linear, the "
    "output head included when its vocabulary size does; the config does not show it"
)


def _lightnings(ctx: Context, call: cst.Call) -> bool:
    """The callee is named through a Lightning import (`lightning`, `pytorch_lightning`,
    `lightning_fabric`), or is not imported at all and not the file's own."""
    origin = ctx.imported_from(call.func)
    if origin is None:
        return False
    return "lightning" in origin or not ctx.first_name_imported(call.func)


def sites(ctx: Context) -> list[Fp8Site]:
    from fp8lint.documents.python import last_name

    out: list[tuple[cst.Call, Fp8Site]] = []
    for name in sorted(OWNERS | {a for a, r in ctx.facts.aliases.items() if r in OWNERS}):
        for call in ctx.facts.calls.get(name, ()):
            if not _lightnings(ctx, call):
                continue
            found = _precision_string(ctx, call)
            if found is not None:
                out.append((call, found))
    names = {PLUGIN} | {a for a, r in ctx.facts.aliases.items() if r == PLUGIN}
    for name in sorted(names):
        for call in ctx.facts.calls.get(name, ()):
            if last_name(call.func) is None or not _lightnings(ctx, call):
                continue
            found = _plugin(ctx, call)
            if found is not None:
                out.append((call, found))
    out.sort(key=lambda pair: ctx.doc.where(pair[0]))
    return [s for _, s in out]


def _precision_string(ctx: Context, call: cst.Call) -> Fp8Site | None:
    """`Trainer(precision="transformer-engine")`: the plugin with TE's default recipe."""
    kw = ctx.keywords(call)
    val = kw.get("precision")
    if val is None or not val.arg.known or val.arg.value not in PRECISIONS:
        return None
    arg = val.arg
    enabled = written(
        arg,
        True,
        f"Lightning builds TransformerEnginePrecision(weights_dtype="
        f"torch.{PRECISIONS[arg.value]}) with TE's default recipe",
    )
    kind = f'Lightning {ctx.text(call.func)}(precision="{arg.value}")'
    return _site(ctx, ctx.span(call), kind, enabled, {}, None, [])


def _plugin(ctx: Context, call: cst.Call) -> Fp8Site | None:
    """`TransformerEnginePrecision(weights_dtype=..., recipe=...)`; None when the recipe is a
    TE recipe call, which is a site of its own."""
    import libcst as cst

    from fp8lint.documents.python import last_name

    call_span = ctx.span(call)
    kw = ctx.keywords(call)
    enabled = Setting[bool].model_construct(
        value=True, known=True, provenance="derived", key=PLUGIN, span=call_span
    )
    kind = f"Lightning {PLUGIN}(...)"
    invalid: list[SourceNote] = []
    val = kw.get("recipe")
    if val is None or (val.arg.known and val.arg.value is None):
        return _site(ctx, call_span, kind, enabled, {}, None, invalid)
    node = val.node
    if isinstance(node, cst.Call) and last_name(node.func) in CLASSES:
        return None  # `recipe=DelayedScaling(...)`: te reads that call
    if isinstance(node, cst.Dict):
        entries: dict[str, Val] = {}
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                return _site(ctx, call_span, kind, enabled, {}, _unknown(val), invalid)
            ok, key = ctx.literal(element.key)
            if not ok or not isinstance(key, str):
                return _site(ctx, call_span, kind, enabled, {}, _unknown(val), invalid)
            entries[key] = ctx.value_of(key, element, element.value)
        from dataclasses import replace

        from fp8lint.frameworks.shared.python_args import Val as ValType

        mapping = ValType(replace(val.arg, known=True, value=None, note=None), node)
        ignored = [
            note(
                "ignored",
                entry.arg,
                f"`{key}` is not a DelayedScaling field: TE's recipe dataclass drops it",
            )
            for key, entry in entries.items()
            if key not in RECIPE_KEYS
        ]
        built = _site(ctx, call_span, kind, enabled, entries, mapping, invalid)
        return built.model_copy(update={"notes": ignored}) if ignored else built
    return _site(ctx, call_span, kind, enabled, {}, _unknown(val), invalid)


def _unknown(val: Val) -> Val:
    """A recipe fp8lint cannot read (a name bound to something else, a call of the file's)."""
    from dataclasses import replace

    from fp8lint.frameworks.shared.python_args import Val as ValType

    note = val.arg.note or "the recipe is not a mapping or a TE recipe fp8lint can read"
    return ValType(replace(val.arg, known=False, value=None, note=note), val.node)


def _site(
    ctx: Context,
    span: Span,
    kind: str,
    enabled: Setting[Any],
    entries: dict[str, Val],
    recipe_val: Val | None,
    invalid: list[SourceNote],
) -> Fp8Site:
    """TE's `DelayedScaling` with `entries` (a recipe mapping's keys) over its defaults."""
    anchor = recipe_val.arg.value_span if recipe_val is not None else span
    te_defaults = delayed_defaults()
    values: dict[str, Setting[Any]] = {}
    if recipe_val is not None and not recipe_val.arg.known:
        values["recipe"] = written(recipe_val.arg, None)
    else:
        values["recipe"] = (
            written(recipe_val.arg, Recipe.DELAYED, "Lightning builds DelayedScaling(**mapping)")
            if recipe_val is not None
            else default(
                Recipe.DELAYED,
                LABEL,
                "recipe",
                span,
                "no recipe given: Lightning uses Transformer Engine's DelayedScaling()",
            )
        )
        val = entries.get("fp8_format")
        values["fmt"] = (
            _format(ctx, val, invalid)
            if val is not None
            else default(FORMATS[te_defaults["fp8_format"]], TE, "fp8_format", anchor)
        )
        # the mapping's values, validated at once against TE's recipe surface
        args = {
            k: v.arg
            for k, v in entries.items()
            if k in CHECKED or (k == "amax_compute_algo" and v.arg.known)
        }
        checked = surfaces.check("te", args)
        invalid.extend(checked.invalid)
        for key in sorted(CHECKED):
            val = entries.get(key)
            if val is not None:
                values[key] = checked_setting(ctx, val.arg, checked, key)
            elif key in te_defaults:
                values[key] = default(te_defaults[key], TE, key, anchor)
        algo = "amax_compute_algo"
        val = entries.get(algo)
        values["amax_compute_algo"] = (
            checked_setting(ctx, val.arg, checked, algo, ALGOS)
            if val is not None and val.arg.known
            else written(val.arg, None)
            if val is not None
            else default(ALGOS[te_defaults[algo]], TE, algo, anchor)
        )
    values["amax_scope"] = default(
        AmaxScope.WORLD,
        LABEL,
        "fp8_group",
        span,
        "Lightning's forward_context enters fp8_autocast with no amax group: the world",
    )
    values["output_head_fp8"] = Setting[bool].model_construct(
        known=False, key="replace_layers", span=span, note=_HEAD_NOTE
    )
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.TE,
        kind=kind,
        span=span,
        enable_span=enabled.span if enabled.written else None,
        enabled=enabled,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _format(ctx: Context, val: Val, invalid: list[SourceNote]) -> Setting[Any]:
    """Lightning looks the name up with `getattr(Format, name)`: exact member names only."""
    arg = val.arg
    if not arg.known:
        return written(arg, None)
    checked = surfaces.check("lightning", {"fp8_format": arg})
    invalid.extend(checked.invalid)
    if not checked.ok("fp8_format"):
        return ctx.unreadable(arg)
    return written(arg, FORMATS[checked.values["fp8_format"]])
