"""MaxText: `quantization:` and the tensor-parallel mesh axes, in a YAML config or as
`key=value` arguments after `MaxText.train ... base.yml`.

What each `quantization` value trains with (AI-Hypercomputer/maxtext
`src/maxtext/layers/quantizations.py` `configure_quantization` / `_get_quant_config` /
`get_qt_provider` / `TransformerEngineQuantization._get_recipe`, `src/maxtext/configs/base.yml`,
`src/maxtext/configs/types.py` @e591f30c; Flax `flax/linen/fp8_ops.py`):

- `fp8`: `Fp8Quantization`, whose dot is Flax's `Fp8DirectDotGeneralOp` since MaxText
  6775a40d (April 2025; Flax's fake-quantizing `Fp8DotGeneralOp` before).  Both ops keep the
  same state: per-tensor scales computed from the max over an amax history of 1024 steps
  that does not yet hold the current step (delayed scaling), no margin, E4M3 inputs and
  kernels, E5M2 output gradients.  "Direct" means real FP8 operands reach the GEMM instead of
  a quantize-dequantize round trip; it is not current scaling.
- `nanoo_fp8`: Flax's `NANOOFp8DotGeneralOp`: the same delayed scaling in AMD's `fnuz`
  variants (E4M3 max 240).
- `fp8_gpu`, `fp8_nanoo` (Qwix modes, valid with `use_qwix_quantization: true`): Qwix
  providers that run the same two Flax ops, so the same delayed scaling.
- `te_fp8_delayedscaling`: TE `DelayedScaling()` (margin 0, history 1024, `max`, HYBRID).
- `te_fp8_currentscaling`: TE `Float8CurrentScaling()` (per-tensor current scaling, HYBRID).
- `te_mxfp8`: TE `MXFP8BlockScaling()` (E4M3, 32-element blocks).
- `te_nvfp4`, `te_nvfp4_no_rht`: TE `NVFP4BlockScaling()` (E2M1), the second with
  `disable_rht=True` (`quantizations.py` L1026-1027 @e591f30c); otherwise RHT, stochastic
  rounding and 2D scaling follow TE's `NVTE_NVFP4_*` variables, which the job's environment
  may set, so they stay unset.
- `fp8_full`, `aqt_fp8`, `aqt_fp8_full`, and `fp8` under `use_qwix_quantization: true`
  (Qwix's own E4M3 rule): AQT / Qwix FP8 with their own scaling: FP8 on, recipe not modelled.
- `""` (the default), `int8`, `intmp`, ...: no FP8; the single-dtype Qwix rules `fp8_e4m3`
  and `fp8_e5m2` are not modelled either (no site).

`ici_tensor_parallelism` (default 1) times `dcn_tensor_parallelism` (default 1) is the
tensor-parallel degree.  The scales of the Flax and TE JAX ops are functional state updated
once per step, so `remat_policy` recomputation is not the FP8501 hazard and is not recorded.

`site_from_args` is the one entry for every syntax: the YAML recognizer here, the Primus
MaxText module overrides, and MaxText's shell `key=value` form (`maxtext_cli`) all hand it
`Arg`s.
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg, default, written
from fp8lint.frameworks.shared.tree_args import args_of_map
from fp8lint.model import (
    AmaxAlgo,
    EditInfo,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    Span,
)

LABEL = "MaxText"
# value -> (recipe, format, delayed-scaling defaults or None, what runs)
_FLAX = (
    "delayed scaling (amax history 1024, max); MaxText before 6775a40d (April 2025) ran the"
    " fake-quantizing Fp8DotGeneralOp with the same scaling"
)
QUANTIZATIONS: dict[str, tuple[Recipe | None, Fp8Format | None, bool, str]] = {
    "fp8": (Recipe.DELAYED, Fp8Format.HYBRID, True, f"Flax Fp8DirectDotGeneralOp: {_FLAX}"),
    "nanoo_fp8": (Recipe.DELAYED, Fp8Format.HYBRID, True, "Flax NANOOFp8DotGeneralOp (fnuz)"),
    "fp8_gpu": (Recipe.DELAYED, Fp8Format.HYBRID, True, "Qwix + Flax Fp8DirectDotGeneralOp"),
    "fp8_nanoo": (
        Recipe.DELAYED,
        Fp8Format.HYBRID,
        True,
        "Qwix + Flax NANOOFp8DotGeneralOp (fnuz)",
    ),
    "te_fp8_delayedscaling": (Recipe.DELAYED, Fp8Format.HYBRID, True, "TE DelayedScaling()"),
    "te_fp8_currentscaling": (
        Recipe.TENSORWISE,
        Fp8Format.HYBRID,
        False,
        "TE Float8CurrentScaling()",
    ),
    "te_mxfp8": (Recipe.MXFP8, Fp8Format.E4M3, False, "TE MXFP8BlockScaling()"),
    "te_nvfp4": (Recipe.NVFP4, None, False, "TE NVFP4BlockScaling()"),
    "te_nvfp4_no_rht": (Recipe.NVFP4, None, False, "TE NVFP4BlockScaling(disable_rht=True)"),
    "fp8_full": (None, None, False, "AQT/qwix FP8 with static scaling"),
    "aqt_fp8": (None, None, False, "AQT FP8"),
    "aqt_fp8_full": (None, None, False, "AQT FP8"),
}
# `quantization: fp8` with `use_qwix_quantization: true` is Qwix's own E4M3 rule
QWIX_FP8 = (None, None, False, "Qwix FP8 (E4M3 rule, use_qwix_quantization)")
# not FP8 training: MaxText 0.2.5's `te_no_quant` (the TE path without quantization) and
# `serve_fp8_weight` (FP8 weights for serving, an inference mode), from
# `../shared/reference/upstream-2026.md` section 2 and the PR branches that add them
# (AI-Hypercomputer/maxtext refs/pull/4448/head b2609ebd, PR #5207)
NOT_FP8 = frozenset(
    {
        "",
        "int8",
        "intmp",
        "int4",
        "fp4",
        "fp4_e2m1",
        "fp8_e5m2",
        "fp8_e4m3",
        "te_no_quant",
        "serve_fp8_weight",
    }
)
# keys only MaxText configs carry, to tell a MaxText YAML from another file with `quantization`
MAXTEXT_KEYS = frozenset(
    {
        "base_config",
        "per_device_batch_size",
        "ici_fsdp_parallelism",
        "ici_tensor_parallelism",
        "ici_data_parallelism",
        "dcn_data_parallelism",
        "remat_policy",
        "decoder_block",
        "base_emb_dim",
        "max_target_length",
    }
)


def is_fp8_quantization(value: Any) -> bool:
    """Whether a `quantization` value trains in FP8 (not `""`, `int8`, `intmp`, ...)."""
    return isinstance(value, str) and value in QUANTIZATIONS


def site_from_args(
    path: str,
    args: dict[str, Arg],
    span: Span,
    kind: str,
    edit: EditInfo | None = None,
) -> Fp8Site | None:
    """The site of MaxText keys given as `Arg`s keyed by their plain MaxText name
    (`quantization`, `ici_tensor_parallelism`, `dcn_tensor_parallelism`), or None when no
    `quantization` is given or it is not an FP8 one.  An unknown value is FP8401."""
    quant = args.get("quantization")
    if quant is None:
        return None
    if quant.known:
        name = str(quant.value).strip().lower() if quant.value is not None else ""
        if name in NOT_FP8 or (name not in QUANTIZATIONS and "fp8" not in name):
            return None
    from fp8lint.frameworks.maxtext.surface import FlaxDelayedScaling  # pydantic: FP8 only

    checked = surfaces.check("maxtext", {"quantization": quant})
    values: dict[str, Setting[Any]] = {}
    if not checked.ok("quantization"):  # unreadable, or an FP8 name MaxText does not have
        values["enabled"] = written(quant, True)
        values["recipe"] = surfaces.setting_of(quant, checked, "quantization")
    else:
        name = checked.values["quantization"]
        recipe, fmt, delayed, what = QUANTIZATIONS[name]
        if name == "fp8" and _is_true(args.get("use_qwix_quantization")):
            recipe, fmt, delayed, what = QWIX_FP8
        values["enabled"] = written(quant, True, what)
        values["recipe"] = (
            written(quant, recipe, what)
            if recipe is not None
            else Setting[Recipe].model_construct(
                known=False, key=quant.key, note=f"{what}: recipe not modelled"
            )
        )
        anchor = quant.value_span
        if recipe is Recipe.NVFP4:  # TE's NVFP4BlockScaling: E2M1 (recipe L568 @d0067d0d)
            values["fp4"] = default("e2m1", LABEL, quant.key, anchor, what)
            values["fp4_recipe"] = written(quant, "nvfp4", what)
            if name == "te_nvfp4_no_rht":  # partial(NVFP4BlockScaling, disable_rht=True)
                values["nvfp4_disable_rht"] = written(quant, True, what)
        if fmt is not None:
            values["fmt"] = default(fmt, LABEL, quant.key, anchor, what)
        if delayed:
            flax = surfaces.defaults_of(FlaxDelayedScaling)
            values["margin"] = default(
                flax["margin"], LABEL, "margin", anchor, f"{what}: no margin"
            )
            values["amax_history_len"] = default(
                flax["amax_history_length"], LABEL, "amax_history_length", anchor
            )
            values["amax_compute_algo"] = default(
                AmaxAlgo(flax["amax_compute_algo"]), LABEL, "amax", anchor
            )
    tp = _tensor_parallel(args, span)
    if tp is not None:
        values["tensor_parallel"] = tp
    return Fp8Site.model_construct(
        path=path,
        framework=Framework.MAXTEXT,
        kind=kind,
        span=span,
        enable_span=values["enabled"].span,
        invalid=checked.invalid,
        edit=edit,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _is_true(arg: Arg | None) -> bool:
    """Whether a boolean MaxText key is written true (`true`, `True`, YAML true)."""
    if arg is None or not arg.known:
        return False
    return arg.value is True or str(arg.value).strip().lower() == "true"


def _tensor_parallel(args: dict[str, Arg], span: Span) -> Setting[Any] | None:
    keys = ("ici_tensor_parallelism", "dcn_tensor_parallelism")
    given = {key: args[key] for key in keys if key in args}
    if not given:
        dflt = surfaces.defaults("maxtext")
        product = dflt["ici_tensor_parallelism"] * dflt["dcn_tensor_parallelism"]
        return default(product, LABEL, "ici_tensor_parallelism", span, "base.yml: 1")
    unread = [a for a in given.values() if not a.known]
    if unread:
        return written(unread[0], None)
    # not FP8 keys: a degree that is not an integer is left out, not reported
    checked = surfaces.check("maxtext", given)
    if any(not checked.ok(key) for key in given):
        return None
    product = 1
    for key in given:
        product *= checked.values[key]
    main = next(iter(given.values()))
    note = "ici x dcn tensor parallelism" if len(given) == 2 else None
    return written(main, product, note)


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    """A MaxText YAML config (`base_config:` or MaxText's mesh/model keys beside
    `quantization:`)."""
    root = doc.root
    if root is None or not root.is_map:
        return []
    pair = root.get("quantization")
    if pair is None or pair[1].deref().kind != "scalar":
        return []
    if not (set(root.keys()) & MAXTEXT_KEYS):
        return []
    args = args_of_map(file, root, (), root, interpolate=False)
    from fp8lint.frameworks.shared.tree_args import edit_info

    site = site_from_args(
        file.path,
        args,
        file.span(pair[0].start, pair[1].end),
        "MaxText config",
        edit_info(file, doc, root, {}, after_fp8=False),
    )
    return [site] if site is not None else []
