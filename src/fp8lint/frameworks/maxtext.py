"""MaxText: `quantization:` and the tensor-parallel mesh axes, in a YAML config or as
`key=value` arguments after `MaxText.train ... base.yml`.

What each `quantization` value trains with (AI-Hypercomputer/maxtext
`src/maxtext/layers/quantizations.py` `configure_quantization` / `_get_recipe`,
`src/maxtext/configs/base.yml`, `src/maxtext/configs/types.py` @e591f30c):

- `fp8`: Flax's `Fp8DotGeneralOp`: delayed per-tensor scaling, E4M3 inputs and kernels, E5M2
  output gradients, amax history 1024 reduced with `max`, no margin.
- `nanoo_fp8`: Flax's `NANOOFp8DotGeneralOp`: the same delayed scaling in AMD's `fnuz`
  variants (E4M3 max 240).
- `te_fp8_delayedscaling`: TE `DelayedScaling()` (margin 0, history 1024, `max`, HYBRID).
- `te_fp8_currentscaling`: TE `Float8CurrentScaling()` (per-tensor current scaling, HYBRID).
- `te_mxfp8`: TE `MXFP8BlockScaling()` (E4M3, 32-element blocks).
- `te_nvfp4`, `te_nvfp4_no_rht`: TE NVFP4 block scaling.
- `fp8_full`, `aqt_fp8`, `aqt_fp8_full`: AQT / qwix FP8 with static or dynamic scales:
  FP8 on, recipe not modelled.
- `""` (the default), `int8`, `intmp`, ...: no FP8.

`ici_tensor_parallelism` (default 1) times `dcn_tensor_parallelism` (default 1) is the
tensor-parallel degree.  The scales of the Flax and TE JAX ops are functional state updated
once per step, so `remat_policy` recomputation is not the FP8501 hazard and is not recorded.

`site_from_args` is the one entry for every syntax: the YAML recognizer here, the Primus
MaxText module overrides, and MaxText's shell `key=value` form all hand it `Arg`s.
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks.base import Arg, as_int, default, invalid_note, written
from fp8lint.frameworks.tree_args import args_of_map
from fp8lint.model import (
    AmaxAlgo,
    EditInfo,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

LABEL = "MaxText"
# value -> (recipe, format, delayed-scaling defaults or None, what runs)
QUANTIZATIONS: dict[str, tuple[Recipe | None, Fp8Format | None, bool, str]] = {
    "fp8": (Recipe.DELAYED, Fp8Format.HYBRID, True, "Flax Fp8DotGeneralOp"),
    "nanoo_fp8": (Recipe.DELAYED, Fp8Format.HYBRID, True, "Flax NANOOFp8DotGeneralOp (fnuz)"),
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
NOT_FP8 = frozenset({"", "int8", "intmp", "int4", "fp4", "fp8_e5m2", "fp8_e4m3", "fp8_gpu"})
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
    invalid: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {}
    if not quant.known:
        values["enabled"] = written(quant, None)
        values["recipe"] = written(quant, None)
    else:
        name = str(quant.value).strip().lower() if quant.value is not None else ""
        if name in NOT_FP8:
            return None
        if name not in QUANTIZATIONS:
            if "fp8" not in name:
                return None
            invalid.append(invalid_note(quant, "expected one of " + ", ".join(QUANTIZATIONS)))
            values["enabled"] = written(quant, True)
            values["recipe"] = Setting[Recipe].model_construct(
                known=False, span=quant.value_span, key=quant.key, provenance="written"
            )
        else:
            recipe, fmt, delayed, what = QUANTIZATIONS[name]
            values["enabled"] = written(quant, True, what)
            values["recipe"] = (
                written(quant, recipe, what)
                if recipe is not None
                else Setting[Recipe].model_construct(
                    known=False, key=quant.key, note=f"{what}: recipe not modelled"
                )
            )
            anchor = quant.value_span
            if fmt is not None:
                values["fmt"] = default(fmt, LABEL, quant.key, anchor, what)
            if delayed:
                values["margin"] = default(0, LABEL, "margin", anchor, f"{what}: no margin")
                values["amax_history_len"] = default(1024, LABEL, "amax_history_length", anchor)
                values["amax_compute_algo"] = default(AmaxAlgo.MAX, LABEL, "amax", anchor)
    tp = _tensor_parallel(args, span)
    if tp is not None:
        values["tensor_parallel"] = tp
    return Fp8Site.model_construct(
        path=path,
        framework=Framework.MAXTEXT,
        kind=kind,
        span=span,
        enable_span=values["enabled"].span,
        invalid=invalid,
        edit=edit,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )


def _tensor_parallel(args: dict[str, Arg], span: Span) -> Setting[Any] | None:
    ici, dcn = args.get("ici_tensor_parallelism"), args.get("dcn_tensor_parallelism")
    if ici is None and dcn is None:
        return default(1, LABEL, "ici_tensor_parallelism", span, "base.yml: 1")
    given = [a for a in (ici, dcn) if a is not None]
    if any(not a.known for a in given):
        return written(next(a for a in given if not a.known), None)
    numbers = [as_int(a.value) for a in given]
    if any(n is None for n in numbers):
        return None
    product = 1
    for n in numbers:
        assert n is not None
        product *= n
    main = ici if ici is not None else dcn
    assert main is not None
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
    from fp8lint.frameworks.tree_args import edit_info

    site = site_from_args(
        file.path,
        args,
        file.span(pair[0].start, pair[1].end),
        "MaxText config",
        edit_info(file, doc, root, {}, after_fp8=False),
    )
    return [site] if site is not None else []
