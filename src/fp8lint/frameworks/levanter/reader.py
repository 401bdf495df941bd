"""Levanter (JAX) training configs: `trainer.quantization: {fp8, int8, targets,
amax_history_length, compute_dtype}`.

Levanter's `TrainerConfig.quantization` is haliax's `QuantizationConfig`
(stanford-crfm/levanter `src/levanter/trainer.py` @9263f81e).  With `fp8: true`, haliax swaps
the dot product of every `hnn.Linear` (or only those named in `targets`) for
`Fp8DotGeneralOp`: delayed scaling, one scale per tensor, an amax history of
`amax_history_length` (default 1024) reduced with `max`, no margin (the scale is
`fp8_max / amax`, margin fixed at 0), E4M3 for inputs and kernels and E5M2 for the output
gradient (stanford-crfm/haliax `src/haliax/quantization.py` and `src/haliax/_src/fp8.py`
@f41e7d40).  The scales and histories are model state updated through the gradient, so
`gradient_checkpointing` recomputes the same values and does not update them twice:
Levanter's recompute is not the FP8501 hazard, and it is not recorded.  A list of `targets`
names the linears converted (matched on the module's own name), so the head runs in FP8 only
when `lm_head` is listed; without `targets` every `hnn.Linear` is converted, and whether the
model has an untied `lm_head` is not known here, so the head is left undecided.
"""

from __future__ import annotations

from typing import Any, cast

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import as_int, default, written
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import AmaxAlgo, Fp8Format, Fp8Site, Framework, Recipe, Setting

LABEL = "haliax"
QUANT_KEYS = frozenset({"fp8", "int8", "targets", "amax_history_length", "compute_dtype"})
KEYS = {"amax_history_len": "amax_history_length"}
CHECKED = ("fp8", "amax_history_length")  # the keys read here (the others are not judged)


def _quantization(root: Node) -> tuple[Node, tuple[Node, Node]] | None:
    trainer = root.get("trainer")
    if trainer is None or not trainer[1].is_map:
        return None
    pair = trainer[1].deref().get("quantization")
    if pair is None or not pair[1].is_map:
        return None
    keys = set(pair[1].deref().keys())
    if "fp8" not in keys or not keys <= QUANT_KEYS:
        return None
    return trainer[1].deref(), pair


def from_tree(file: SourceFile, doc: Document) -> list[Fp8Site]:
    root = doc.root
    if root is None or not root.is_map:
        return []
    found = _quantization(root)
    if found is None:
        return []
    trainer, pair = found
    section = pair[1].deref()
    prefix = "trainer.quantization"
    args = args_of_map(file, root, ("trainer", "quantization"), section, prefix + ".{key}")
    from fp8lint.frameworks.levanter.surface import Fp8DotGeneralOp  # pydantic: FP8 files only

    checked = surfaces.check("levanter", {k: args[k] for k in CHECKED if k in args})
    dflt = surfaces.defaults("levanter")
    fixed = surfaces.defaults_of(Fp8DotGeneralOp)
    values: dict[str, Setting[Any]] = {}
    values["enabled"] = surfaces.setting_of(
        args.get("fp8"),
        checked,
        "fp8",
        convert=bool,  # `fp8:` left empty reads as false
        # `fp8:` holding a mapping or list: not a value haliax accepts
        missing=lambda: Setting[bool].model_construct(known=False, key=prefix + ".fp8"),
    )
    span = file.span(pair[0].start, pair[1].end)
    anchor = values["enabled"].span or span
    note = "haliax's Fp8DotGeneralOp: delayed per-tensor scaling"
    values["recipe"] = default(Recipe.DELAYED, LABEL, prefix + ".fp8", anchor, note)
    values["fmt"] = default(
        Fp8Format.HYBRID, LABEL, prefix + ".fp8", anchor, "E4M3 inputs and kernels, E5M2 gradients"
    )
    values["margin"] = default(
        fixed["margin"], LABEL, "margin", anchor, "haliax computes fp8_max / amax"
    )
    values["amax_compute_algo"] = default(
        AmaxAlgo(fixed["amax_compute_algo"]),
        LABEL,
        "amax_compute_algo",
        anchor,
        "the max over the amax history",
    )
    hist_key = prefix + ".amax_history_length"
    values["amax_history_len"] = surfaces.setting_of(
        args.get("amax_history_length"),
        checked,
        "amax_history_length",
        missing=lambda: default(dflt["amax_history_length"], LABEL, hist_key, anchor),
    )
    targets = section.get("targets")
    if targets is not None and targets[1].deref().kind == "seq":
        names = [str(x.deref().value) for x in targets[1].deref().value if x.deref().is_scalar]
        values["output_head_fp8"] = Setting[bool].model_construct(
            value="lm_head" in names,
            known=True,
            provenance="written",
            span=file.span_of(targets[1]),
            entry=file.span(targets[0].start, targets[1].end),
            key=prefix + ".targets",
            note=f"targets = {names}",
        )
    targs = args_of_map(file, root, ("trainer",), trainer, "trainer.{key}")
    tp = targs.get("model_axis_size")
    if tp is not None and tp.known and (n := as_int(tp.value)) is not None:
        values["tensor_parallel"] = written(tp, n, "Levanter's model (tensor) axis")
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.LEVANTER,
            kind="Levanter trainer.quantization",
            span=span,
            enable_span=values["enabled"].span if values["enabled"].written else None,
            invalid=checked.invalid,
            edit=edit_info(file, doc, section, KEYS, after_fp8=False),
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )
    ]
