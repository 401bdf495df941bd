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
from fp8lint.frameworks.shared.base import as_int, default, invalid_note, written
from fp8lint.frameworks.shared.transformer_config import as_bool
from fp8lint.frameworks.shared.tree_args import args_of_map, edit_info
from fp8lint.model import AmaxAlgo, Fp8Format, Fp8Site, Framework, Recipe, Setting, SourceNote

LABEL = "haliax"
QUANT_KEYS = frozenset({"fp8", "int8", "targets", "amax_history_length", "compute_dtype"})
KEYS = {"amax_history_len": "amax_history_length"}


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
    invalid: list[SourceNote] = []
    values: dict[str, Setting[Any]] = {}
    fp8 = args["fp8"] if "fp8" in args else None
    if fp8 is None:  # `fp8:` holding a mapping or list: not a value haliax accepts
        values["enabled"] = Setting[bool].model_construct(known=False, key=prefix + ".fp8")
    elif not fp8.known:
        values["enabled"] = written(fp8, None)
    else:
        flag = as_bool(fp8.value) if fp8.value is not None else False
        if flag is None:
            invalid.append(invalid_note(fp8, "expected true or false"))
        values["enabled"] = written(fp8, flag)
    span = file.span(pair[0].start, pair[1].end)
    anchor = values["enabled"].span or span
    note = "haliax's Fp8DotGeneralOp: delayed per-tensor scaling"
    values["recipe"] = default(Recipe.DELAYED, LABEL, prefix + ".fp8", anchor, note)
    values["fmt"] = default(
        Fp8Format.HYBRID, LABEL, prefix + ".fp8", anchor, "E4M3 inputs and kernels, E5M2 gradients"
    )
    values["margin"] = default(0, LABEL, "margin", anchor, "haliax computes fp8_max / amax")
    values["amax_compute_algo"] = default(
        AmaxAlgo.MAX, LABEL, "amax_compute_algo", anchor, "the max over the amax history"
    )
    hist = args.get("amax_history_length")
    if hist is None:
        values["amax_history_len"] = default(1024, LABEL, prefix + ".amax_history_length", anchor)
    elif not hist.known:
        values["amax_history_len"] = written(hist, None)
    elif (number := as_int(hist.value)) is None or number < 1:
        invalid.append(invalid_note(hist, "expected a positive integer"))
        values["amax_history_len"] = Setting[int].model_construct(
            known=False, span=hist.value_span, key=hist.key, provenance="written"
        )
    else:
        values["amax_history_len"] = written(hist, number)
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
            invalid=invalid,
            edit=edit_info(file, doc, section, KEYS, after_fp8=False),
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )
    ]
