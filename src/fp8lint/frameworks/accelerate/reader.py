"""Hugging Face Accelerate: `mixed_precision: fp8` + `fp8_config:` (YAML/JSON) and the Python
`TERecipeKwargs` / `FP8RecipeKwargs` handlers.

What reaches Transformer Engine is not what is written: Accelerate builds
`DelayedScaling(**handler.to_kwargs())`, and `to_kwargs()` keeps only values that differ from
Accelerate's own defaults (`src/accelerate/utils/dataclasses.py`, `utils/transformer_engine.py`
at 16cb6eb).  So a written `amax_compute_algo: most_recent` (Accelerate's default) is dropped
and TE's `max` applies; `amax_history_len: 1024`, `margin: 0` and `HYBRID` equal TE's
defaults anyway.  The `accelerate config` wizard writes `amax_history_length`,
`amax_compute_algorithm` and `optimization_level`, which no dataclass reads
(`commands/config/cluster.py`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, as_int, default, invalid_note, note, written
from fp8lint.frameworks.shared.te_recipes import ALGOS, FORMATS, TE, delayed_defaults
from fp8lint.frameworks.shared.transformer_config import as_bool
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import (
    AmaxAlgo,
    AmaxScope,
    EditInfo,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context, Target

LABEL = "Accelerate"
# Accelerate (like TE's `Format` enum) spells formats in upper case: `HYBRID`, `E4M3`
UPPER_CASE_FORMAT = frozenset({Framework.ACCELERATE})
WIZARD_KEYS = {
    "amax_history_length": "amax_history_len",
    "amax_compute_algorithm": "amax_compute_algo",
    "optimization_level": "opt_level",
}
# model field -> the key Accelerate reads (in `fp8_config:` or as a keyword)
KEYS = {
    "margin": "margin",
    "amax_history_len": "amax_history_len",
    "amax_compute_algo": "amax_compute_algo",
    "fmt": "fp8_format",
    "interval": "interval",
}
BACKENDS = {
    "TE": Recipe.DELAYED,
    "MSAMP": Recipe.MSAMP,
    "MS-AMP": Recipe.MSAMP,
    "AO": Recipe.TENSORWISE,
}


def build(
    cfg: dict[str, Arg],
    path: str,
    span: Span,
    kind: str,
    enabled: Setting[bool],
    world: Arg | None = None,
    spell: str = "{key}",
    edit: EditInfo | None = None,
) -> Fp8Site:
    notes: list[SourceNote] = []
    checked = surfaces.check("accelerate", cfg)
    invalid: list[SourceNote] = list(checked.invalid)
    good = checked.values
    anchor = enabled.span or span
    values: dict[str, Setting[Any]] = {}
    own = surfaces.defaults("accelerate")
    te = delayed_defaults()

    for wrong, right in WIZARD_KEYS.items():
        arg = cfg.get(wrong)
        if arg is not None:
            # a value Accelerate would drop anyway (its own default) is not worth renaming
            dropped = arg.known and str(arg.value).lower() == str(own[right]).lower()
            notes.append(
                note(
                    "misspelled",
                    arg,
                    f"`{arg.key}` is never read; Accelerate reads `{spell.format(key=right)}`",
                    replacement=None if dropped else spell.format(key=right),
                    why="the `accelerate config` wizard writes this key, but no Accelerate "
                    "dataclass reads it",
                )
            )

    backend = cfg.get("backend")
    use_mx = cfg.get("use_mxfp8_block_scaling")
    if backend is None or (backend.known and "backend" in good and good["backend"] is None):
        values["recipe"] = Setting[Recipe].model_construct(
            known=False,
            key=spell.format(key="backend"),
            note="no backend given: Accelerate picks torchao, TE or MS-AMP by what is installed",
        )
    elif not backend.known:
        values["recipe"] = written(backend, None)
    elif "backend" in good:
        recipe = BACKENDS[good["backend"]]
        if (
            recipe is Recipe.DELAYED
            and use_mx is not None
            and use_mx.known
            and as_bool(use_mx.value)
        ):
            values["recipe"] = written(use_mx, Recipe.MXFP8)
        else:
            values["recipe"] = written(backend, recipe)
    else:
        values["recipe"] = Setting[Recipe].model_construct(
            known=False, span=backend.value_span, key=backend.key, provenance="written"
        )

    arg = cfg.get("fp8_format")
    if arg is None:
        fmt = FORMATS[own["fp8_format"]]
        values["fmt"] = default(fmt, LABEL, spell.format(key="fp8_format"), anchor)
    elif not arg.known:
        values["fmt"] = written(arg, None)
    elif "fp8_format" in good:
        values["fmt"] = written(arg, FORMATS[good["fp8_format"]])
    else:
        values["fmt"] = Setting[Fp8Format].model_construct(
            known=False, span=arg.value_span, key=arg.key, provenance="written"
        )

    for key in ("margin", "amax_history_len", "interval"):
        arg = cfg.get(key)
        if arg is None:
            values[key] = default(own[key], f"{LABEL} and {TE}", spell.format(key=key), anchor)
        elif not arg.known:
            values[key] = written(arg, None)
        elif (number := good.get(key)) is None:
            values[key] = Setting[int].model_construct(
                known=False, span=arg.value_span, key=arg.key, provenance="written"
            )
        else:
            values[key] = written(arg, number)

    arg = cfg.get("amax_compute_algo")
    te_max = default(
        ALGOS[te["amax_compute_algo"]],
        TE,
        spell.format(key="amax_compute_algo"),
        anchor,
        "Accelerate forwards only values that differ from its own defaults, so "
        "TE's default `max` applies",
    )
    if arg is None:
        values["amax_compute_algo"] = te_max
    elif not arg.known:
        values["amax_compute_algo"] = written(arg, None)
    elif good.get("amax_compute_algo") == "max":
        values["amax_compute_algo"] = written(arg, AmaxAlgo.MAX)
    elif good.get("amax_compute_algo") == own["amax_compute_algo"]:  # dropped
        values["amax_compute_algo"] = te_max.model_copy(update={"span": arg.value_span})
        notes.append(
            note(
                "ignored",
                arg,
                f"`{arg.key}: most_recent` never reaches Transformer Engine, which uses `max`",
                why="it equals Accelerate's default, which Accelerate drops before building "
                "the recipe",
            )
        )
    else:
        values["amax_compute_algo"] = Setting[AmaxAlgo].model_construct(
            known=False, span=arg.value_span, key=arg.key, provenance="written"
        )

    arg = cfg.get("override_linear_precision")
    if arg is not None:
        text = str(arg.raw if arg.raw is not None else arg.value)
        values["override_linear_precision"] = written(arg, text.lower())

    if values["recipe"].value is Recipe.MXFP8:
        _mxfp8(cfg, good, own, values, notes, invalid, spell, anchor)
    values["reduce_amax"] = default(te["reduce_amax"], TE, "reduce_amax", anchor)
    values["amax_scope"] = default(
        AmaxScope.WORLD,
        TE,
        "fp8_group",
        anchor,
        "Accelerate passes no amax group, so TE reduces over the world",
    )
    if world is not None:
        number = as_int(world.value) if world.known else None
        if number is not None:
            values["world_size"] = written(world, number)
    return Fp8Site.model_construct(
        path=path,
        framework=Framework.ACCELERATE,
        kind=kind,
        span=span,
        enable_span=enabled.span if enabled.written else None,
        enabled=enabled,
        notes=notes,
        invalid=invalid,
        edit=edit,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _mxfp8(
    cfg: dict[str, Arg],
    good: dict[str, Any],
    own: dict[str, Any],
    values: dict[str, Setting[Any]],
    notes: list[SourceNote],
    invalid: list[SourceNote],
    spell: str,
    anchor: Span,
) -> None:
    """`use_mxfp8_block_scaling`: Accelerate hands TE's `MXFP8BlockScaling` only the fields
    that differ from its own defaults (`KwargsHandler.to_kwargs`), so its default HYBRID never
    arrives and the recipe's own E4M3 applies, E5M2 is refused by TE, and an amax history or
    algorithm other than Accelerate's default raises ValueError (huggingface/accelerate
    @16cb6eb8 `utils/transformer_engine.py` L161-175, `utils/dataclasses.py` L78-88)."""
    arg = cfg.get("fp8_format")
    name = good.get("fp8_format")
    if name == "E5M2" and arg is not None:
        invalid.append(invalid_note(arg, "TE's MXFP8 recipe refuses pure E5M2 training"))
    elif name != "E4M3":
        values["fmt"] = default(
            Fp8Format.E4M3,
            TE,
            spell.format(key="fp8_format"),
            arg.value_span if arg is not None else anchor,
            "MXFP8BlockScaling's own E4M3: Accelerate drops HYBRID, its default",
        )
    for key in ("amax_history_len", "amax_compute_algo"):
        arg = cfg.get(key)
        if arg is None or not arg.known or key not in good:
            continue
        if str(good[key]).lower() != str(own[key]).lower():
            notes.append(
                note(
                    "conflict",
                    arg,
                    f"`{arg.key}` with `use_mxfp8_block_scaling`: Accelerate raises ValueError",
                    why="MXFP8 block scaling has no amax history; Accelerate refuses any "
                    "value but its default",
                )
            )


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    mp = root.get("mixed_precision")
    cfg_pair = root.get("fp8_config")
    if cfg_pair is None and (mp is None or str(mp[1].deref().value).lower() != "fp8"):
        return []
    top = args_of_map(file, root, (), root)
    cfg: dict[str, Arg] = {}
    if cfg_pair is not None and cfg_pair[1].is_map:
        cfg = args_of_map(file, root, ("fp8_config",), cfg_pair[1].deref(), "fp8_config.{key}")
        for k, v in cfg_pair[1].deref().items():  # lists such as override_linear_precision
            if k.raw == "override_linear_precision" and v.deref().kind == "seq":
                items = [str(x.deref().raw).lower() for x in v.deref().value]
                cfg[k.raw] = Arg(
                    key="fp8_config.override_linear_precision",
                    value="[" + ", ".join(items) + "]",
                    span=file.span(k.start, v.end),
                    value_span=file.span_of(v),
                    raw="[" + ", ".join(items) + "]",
                )
    mp_arg = top.get("mixed_precision")
    if mp_arg is None:
        enabled = Setting[bool].model_construct(
            value=False, known=True, provenance="default", key="mixed_precision", default_of=LABEL
        )
    elif not mp_arg.known:
        enabled = written(mp_arg, None)
    else:
        enabled = written(mp_arg, str(mp_arg.value).lower() == "fp8")
    span = file.span_of(root)
    return [
        build(
            cfg,
            file.path,
            span,
            "Accelerate config",
            enabled,
            world=top.get("num_processes"),
            spell="fp8_config.{key}",
            edit=edit_info(file, doc, cfg_pair[1], KEYS, after_fp8=False)
            if cfg_pair and cfg_pair[1].is_map
            else None,
        )
    ]


# ------------------------------------------------------------------------ Python handlers

CLASSES = frozenset({"FP8RecipeKwargs", "TERecipeKwargs", "AORecipeKwargs"})
# the keywords the handlers have
PYTHON_KEYS = frozenset(
    {
        "backend",
        "fp8_format",
        "margin",
        "interval",
        "amax_history_len",
        "amax_compute_algo",
        "override_linear_precision",
        "use_autocast_during_eval",
        "use_mxfp8_block_scaling",
    }
)


def from_python(ctx: Context, tgt: Target) -> Fp8Site:
    """`FP8RecipeKwargs(...)` / `TERecipeKwargs(...)`: the handler's keywords (and attribute
    overrides) through the same `build` as `fp8_config:`; `TERecipeKwargs` is always TE."""
    from fp8lint.frameworks.shared.python_args import canonical_text

    call, cls = tgt.call, tgt.name
    if cls == "AORecipeKwargs":
        return ao_site(ctx, tgt)
    call_span = ctx.span(call)
    kw = ctx.keywords(call)
    for name, val in ctx.overrides(call):
        kw[name] = val
    cfg: dict[str, Arg] = {}
    for key, val in kw.items():
        if key not in PYTHON_KEYS:
            continue
        arg = val.arg
        if key == "override_linear_precision" and arg.known:
            arg = replace(arg, raw=canonical_text(arg.value))
        cfg[key] = arg
    if cls == "TERecipeKwargs":
        callee_span = ctx.span(tgt.callee)
        cfg["backend"] = Arg(
            key="backend",
            value="TE",
            span=callee_span,
            value_span=callee_span,
            note="TERecipeKwargs always builds a Transformer Engine recipe",
        )
    enabled = Setting[bool].model_construct(
        value=True, known=True, provenance="derived", key=cls, span=call_span
    )
    return build(
        cfg,
        ctx.file.path,
        call_span,
        f"Accelerate {cls}(...)",
        enabled,
        edit=ctx.edit_info(call, KEYS),
    )


# `AORecipeKwargs(config=None, module_filter_func=None, ...)`: torchao float8 through
# Accelerate (`utils/dataclasses.py`, `utils/ao.py`, `accelerator.py` `_prepare_ao` at 16cb6eb).
# `config=None` becomes `Float8LinearConfig(pad_inner_dim=True, enable_fsdp_float8_all_gather=
# True)`, tensorwise; `module_filter_func=None` becomes `filter_linear_layers` with the model's
# first and last linear layers filtered, so the output head stays in high precision.
_AO_HEAD_NOTE = (
    "no module_filter_func given: Accelerate skips the model's first and last linear layers"
)


def ao_site(ctx: Context, tgt: Target) -> Fp8Site:
    """`AORecipeKwargs(...)`: the torchao recipe of `config` and the head `module_filter_func`
    leaves in FP8, with Accelerate's defaults for both."""
    from fp8lint.frameworks.shared.python_args import call_args
    from fp8lint.frameworks.shared.torchao_recipes import implied_format, read_filter, read_recipe

    call = tgt.call
    call_span = ctx.span(call)
    args = call_args(call)
    keyed = {a.keyword: a for a in args if a.keyword is not None}
    splat = next((a for a in args if a.star == "**"), None)
    invalid: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {
        "enabled": Setting[bool].model_construct(
            value=True, known=True, provenance="derived", key="AORecipeKwargs", span=call_span
        ),
    }
    config = keyed.get("config")
    if config is None and splat is None:
        recipe: Setting[Any] = default(
            Recipe.TENSORWISE,
            LABEL,
            "config",
            call_span,
            "no `config` given: Accelerate builds Float8LinearConfig(pad_inner_dim=True, "
            "enable_fsdp_float8_all_gather=True), which is tensorwise",
        )
    else:
        recipe = read_recipe(ctx, call_span, config, splat, invalid)
    values["recipe"] = recipe
    fmt = implied_format(recipe)
    if fmt is not None:
        values["fmt"] = fmt
    filt = keyed.get("module_filter_func")
    none_given = filt is not None and ctx.literal(filt.value) == (True, None)
    if (filt is None and splat is None) or none_given:
        values["output_head_fp8"] = default(
            False, LABEL, "module_filter_func", call_span, _AO_HEAD_NOTE
        )
    else:
        # the torchao reading of a filter function (keyword renamed to Accelerate's)
        head, _router = read_filter(ctx, call_span, filt, splat)
        values["output_head_fp8"] = head.model_copy(update={"key": "module_filter_func"})
    return Fp8Site.model_construct(
        path=ctx.file.path,
        framework=Framework.ACCELERATE,
        kind="Accelerate AORecipeKwargs(...)",
        span=call_span,
        invalid=invalid,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )
