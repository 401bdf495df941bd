"""nanotron's FP8 branch: `model.dtype: float8` and the `fp8:` section.

`fp8.model` is a list of per-module recipes (`FP8LayerArgs`: `module_name`, `accum_dtype`,
and for each of `input`, `weight`, `bias`, `input_grad`, `weight_grad`, `output_grad` either a
plain dtype or `{dtype, margin, interval}`); `fp8.optim` gives the optimizer's storage dtypes.
Each FP8 tensor keeps its own `FP8Meta`: the scale comes from the max of the last `interval`
amaxes and is recomputed every `interval` steps, so `interval` is both the amax window and
the update period.  `margin` is read into the recipe but not applied: `FP8Meta.rescale`
calls `update_scaling_factor` without it (margin 0).  Without `fp8.model`, linears use
`FP8LM_LINEAR_RECIPE`: input E4M3 and gradients E5M2 over a window of 16, weights and weight
gradients E4M3 with a window of 1 (huggingface/nanotron branch `xrsrke/fp8-end-to-end`
@e118d0c3: `src/nanotron/config/fp8_config.py`, `src/nanotron/fp8/recipe.py`,
`src/nanotron/fp8/constants.py`, `src/nanotron/fp8/meta.py`).

The site's amax window (`amax_history_len`) is the shortest `interval` among the tensors
whose values move from step to step and feed a GEMM: `input`, `input_grad`, `output_grad`.
Weight and weight-gradient windows are shown per tensor but not judged (a choice: the
FP8-LM recipe nanotron ships uses 1 there by design).  `interval` is not recorded as TE's
update interval, which TE ignores; here it is part of the window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.frameworks.shared.tree_args import args_of_map
from fp8lint.model import (
    AmaxAlgo,
    Fp8Format,
    Fp8Site,
    Framework,
    PrecisionOverride,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

LABEL = "nanotron"
TENSORS = ("input", "weight", "bias", "input_grad", "weight_grad", "output_grad")
JUDGED = ("input", "input_grad", "output_grad")
FP8_DTYPES = {"FP8E4M3": "e4m3", "FP8E5M2": "e5m2", "fp8e4m3": "e4m3", "fp8e5m2": "e5m2"}
FP8_KEYS = frozenset({"resid_dtype", "accum_dtype", "model", "optim"})


def _fp8_section(root: Node) -> tuple[Node, Node] | None:
    pair = root.get("fp8")
    if pair is None or not pair[1].is_map:
        return None
    keys = set(pair[1].deref().keys())
    return pair if {"resid_dtype", "accum_dtype"} & keys and keys & FP8_KEYS else None


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    model = root.get("model")
    model_map = model[1].deref() if model is not None and model[1].is_map else None
    dtype = model_map.get("dtype") if model_map is not None else None
    section = _fp8_section(root)
    is_float8 = dtype is not None and str(dtype[1].deref().value).lower() == "float8"
    if not is_float8 and section is None:
        return []
    values: dict[str, Setting[Any]] = {}
    dtype_arg = None
    if model_map is not None:
        dtype_arg = args_of_map(file, root, ("model",), model_map, "model.{key}").get("dtype")
    if dtype_arg is not None:
        values["enabled"] = written(dtype_arg, is_float8)
    else:
        values["enabled"] = default(False, LABEL, "model.dtype", None)
    if section is not None:
        span = file.span(section[0].start, section[1].end)
    else:
        assert dtype is not None
        span = file.span(dtype[0].start, dtype[1].end)
    anchor = values["enabled"].span or span
    from fp8lint.frameworks.nanotron.surface import Fp8LmLinearRecipe, Fp8Meta  # FP8 only

    read = _Reading()
    layers = None
    if section is not None:
        pair = section[1].deref().get("model")
        if pair is not None and pair[1].deref().kind == "seq":
            layers = pair[1].deref()
    if layers is None:
        for name, recipe in surfaces.defaults_of(Fp8LmLinearRecipe).items():
            fmt, margin, interval = recipe["dtype"], recipe["margin"], recipe["interval"]
            read.overrides.append(
                _override(
                    "FP8LM_LINEAR_RECIPE", "every linear", name, fmt, margin, interval, anchor
                )
            )
            if name in JUDGED:
                read.windows.append((interval, f"FP8LM_LINEAR_RECIPE.{name}.interval", None))
                read.dtypes.setdefault(name, FP8_DTYPES[fmt])
    else:
        for i, layer in enumerate(layers.value):
            if layer.deref().is_map:
                _layer(file, root, i, layer.deref(), read)
    overrides, notes, windows = read.overrides, read.notes, read.windows
    dtypes, dtype_args = read.dtypes, read.dtype_args
    optim = section[1].deref().get("optim") if section is not None else None
    if optim is not None and optim[1].is_map:
        for okey, ovalue in optim[1].deref().items():
            if okey.raw in ("master_weight_dtype", "exp_avg_dtype", "exp_avg_sq_dtype"):
                overrides.append(
                    PrecisionOverride.model_construct(
                        feature="fp8.optim",
                        layers="optimizer state",
                        tensors=(str(okey.raw).removesuffix("_dtype"),),
                        precision=str(ovalue.deref().raw),
                        span=file.span(okey.start, ovalue.end),
                    )
                )
    values["recipe"] = default(
        Recipe.DELAYED, LABEL, "fp8.model", anchor, "FP8Meta: per-tensor delayed scaling"
    )
    fixed = surfaces.defaults_of(Fp8Meta)
    values["margin"] = default(
        fixed["margin"], LABEL, "margin", anchor, "FP8Meta.rescale applies no margin"
    )
    values["amax_compute_algo"] = default(
        AmaxAlgo(fixed["amax_compute_algo"]), LABEL, "interval", anchor, "the max over the window"
    )
    if windows:
        interval, wkey, warg = min(windows, key=lambda w: w[0])
        if warg is not None:
            values["amax_history_len"] = written(
                warg, interval, "the shortest activation/gradient window"
            )
        else:
            values["amax_history_len"] = default(
                interval, LABEL, wkey, anchor, "FP8LM_LINEAR_RECIPE"
            )
    fwd = dtypes.get("input")
    grad = "output_grad" if "output_grad" in dtypes else "input_grad"
    bwd = dtypes.get(grad)
    site_fmt = {("e4m3", "e5m2"): Fp8Format.HYBRID, ("e4m3", "e4m3"): Fp8Format.E4M3}.get(
        (fwd or "", bwd or "")
    )
    if site_fmt is not None:
        why = f"{fwd} inputs, {bwd} gradients"
        source = dtype_args.get(grad)
        values["fmt"] = (
            written(source, site_fmt, why)
            if source is not None
            else default(site_fmt, LABEL, "FP8LM_LINEAR_RECIPE", anchor, why)
        )
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.NANOTRON,
            kind="nanotron FP8 config",
            span=span,
            enable_span=values["enabled"].span if values["enabled"].written else None,
            notes=notes,
            precision_overrides=overrides,
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )
    ]


@dataclass
class _Reading:
    """What the per-tensor recipes add up to."""

    overrides: list[PrecisionOverride] = field(default_factory=list)
    notes: list[SourceNote] = field(default_factory=list)
    windows: list[tuple[int, str, Arg | None]] = field(default_factory=list)  # (interval, key, Arg)
    dtypes: dict[str, str] = field(default_factory=dict)
    dtype_args: dict[str, Arg] = field(default_factory=dict)  # the `dtype` that set each format


def _layer(file: SourceFile, root: Node, i: int, layer: Node, read: _Reading) -> None:
    """One `fp8.model[i]` entry: each tensor's recipe, its window and its format."""
    name_pair = layer.get("module_name")
    module = str(name_pair[1].deref().value) if name_pair else f"fp8.model[{i}]"
    for tensor in TENSORS:
        tpair = layer.get(tensor)
        if tpair is None:
            continue
        tnode = tpair[1].deref()
        tspan = file.span(tpair[0].start, tpair[1].end)
        if not tnode.is_map:
            read.overrides.append(
                PrecisionOverride.model_construct(
                    feature=f"fp8.model[{i}]",
                    layers=module,
                    tensors=(tensor,),
                    precision=str(tnode.raw),
                    span=tspan,
                )
            )
            continue
        key = f"fp8.model[{i}].{tensor}"
        targs = args_of_map(file, root, ("fp8", "model"), tnode, key + ".{key}", interpolate=False)
        fmt_raw = str(targs["dtype"].value) if "dtype" in targs else "?"
        # a margin or window that is not an integer is shown as None, not reported
        checked = surfaces.check(
            "nanotron", {k: targs[k] for k in ("margin", "interval") if k in targs}
        )
        tmargin, tint = checked.values.get("margin"), checked.values.get("interval")
        read.overrides.append(
            _override(f"fp8.model[{i}]", module, tensor, fmt_raw, tmargin, tint, tspan)
        )
        if tmargin not in (None, 0):
            read.notes.append(
                SourceNote.model_construct(
                    kind="unapplied",
                    key=key + ".margin",
                    span=targs["margin"].span,
                    message=f"`{key}.margin` is {tmargin}, but nanotron's FP8Meta rescales "
                    "without a margin (0)",
                )
            )
        if tensor in JUDGED and tint is not None:
            read.windows.append((tint, targs["interval"].key, targs["interval"]))
        if tensor in JUDGED and fmt_raw in FP8_DTYPES:
            read.dtypes.setdefault(tensor, FP8_DTYPES[fmt_raw])
            read.dtype_args.setdefault(tensor, targs["dtype"])


def _override(
    feature: str,
    module: str,
    tensor: str,
    fmt: str,
    margin: int | None,
    interval: int | None,
    span: Span,
) -> PrecisionOverride:
    return PrecisionOverride.model_construct(
        feature=feature,
        layers=module,
        tensors=(tensor,),
        precision=f"{fmt} delayed, window {interval}, margin {margin}",
        span=span,
    )
