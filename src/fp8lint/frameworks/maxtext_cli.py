"""MaxText command lines: `python3 -m MaxText.train MaxText/configs/base.yml key=value ...`
(also `maxtext.trainers.pre_train.train` and `MaxText/train.py`), where every argument after
the config file is a `key=value` override of it.

What `quantization` means (AI-Hypercomputer/maxtext `src/MaxText/layers/quantizations.py` and
the `QuantizationType` enumeration of its config types, read at commit
019f0175a343e1ef28535d4eb1257e2402a92e3f):

- `fp8`: Flax's `Fp8DirectDotGeneralOp` on NVIDIA GPUs, a scale computed from each tensor's
  current amax, E4M3 forward and E5M2 gradients: per-tensor current scaling, hybrid format;
- `nanoo_fp8`: Flax's `NANOOFp8DotGeneralOp` for AMD GPUs, delayed scaling with an amax
  history of 1024 (max over the window), E4M3FNUZ/E5M2FNUZ;
- `te_fp8_delayedscaling`, `te_fp8_currentscaling`, `te_mxfp8`, `te_nvfp4`: Transformer
  Engine's `DelayedScaling()` (TE's defaults), `Float8CurrentScaling()`,
  `MXFP8BlockScaling()`, `NVFP4BlockScaling()`;
- the Qwix modes `fp8_full`, `fp8_gpu`, `fp8_nanoo` and the AQT modes `aqt_fp8`,
  `aqt_fp8_full`: FP8 is on, with their own per-tensor dynamic scaling; format and recipe are
  left unknown rather than guessed.

Tensor parallelism is `ici_tensor_parallelism` x `dcn_tensor_parallelism` (both 1 in
`base.yml`).  The YAML form of the same keys is read elsewhere (`maxtext`); the key table here
is the command line's.  No fix is offered: MaxText has no recipe knobs to write.
"""

from __future__ import annotations

import os
import re
from typing import Any, cast

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks import te
from fp8lint.frameworks.base import Arg, as_int, default, invalid_note, written
from fp8lint.frameworks.shell_args import word_value
from fp8lint.model import (
    AmaxAlgo,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

# MaxText runs on JAX; the closest family in the model is Transformer Engine's (TE-JAX for the
# `te_*` modes), labelled as MaxText everywhere a user reads it
FRAMEWORK = Framework.TE
LABEL = "MaxText"
ENTRY = re.compile(
    r"(^|[./])(MaxText|maxtext)([./][\w.]*)?[./]train(\.py)?$|(^|/)MaxText/train\.py$"
)
OVERRIDE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_.]*)=(?P<value>.*)", re.DOTALL)

# quantization -> (recipe, format, delayed-scaling values) as MaxText runs it
MODES: dict[str, tuple[Recipe | None, Fp8Format | None, dict[str, Any]]] = {
    "fp8": (Recipe.TENSORWISE, Fp8Format.HYBRID, {}),
    "nanoo_fp8": (
        Recipe.DELAYED,
        Fp8Format.HYBRID,
        {"margin": 0, "amax_history_len": 1024, "amax_compute_algo": AmaxAlgo.MAX},
    ),
    "te_fp8_delayedscaling": (
        Recipe.DELAYED,
        Fp8Format.HYBRID,
        {
            "margin": te.DELAYED_DEFAULTS["margin"],
            "amax_history_len": te.DELAYED_DEFAULTS["amax_history_len"],
            "amax_compute_algo": AmaxAlgo(te.DELAYED_DEFAULTS["amax_compute_algo"]),
        },
    ),
    "te_fp8_currentscaling": (Recipe.TENSORWISE, Fp8Format.HYBRID, {}),
    "te_mxfp8": (Recipe.MXFP8, Fp8Format.E4M3, {}),
    "te_nvfp4": (Recipe.NVFP4, None, {}),
    "te_nvfp4_no_rht": (Recipe.NVFP4, None, {}),
    "fp8_full": (None, None, {}),
    "fp8_gpu": (None, None, {}),
    "fp8_nanoo": (None, None, {}),
    "aqt_fp8": (None, None, {}),
    "aqt_fp8_full": (None, None, {}),
}
NOT_FP8 = frozenset({"", "int8", "intmp", "int4", "te_no_quant"})
TP_KEYS = ("ici_tensor_parallelism", "dcn_tensor_parallelism")


def _entry(command: list[Word]) -> int | None:
    for i, word in enumerate(command):
        if ENTRY.search(word.text):
            return i
    return None


def _overrides(file: SourceFile, words: list[Word]) -> dict[str, Arg]:
    """`key=value` words as `Arg`s; the value span is exact when the word is written as is."""
    out: dict[str, Arg] = {}
    for w in words:
        m = OVERRIDE.fullmatch(w.text)
        if m is None:
            continue
        key, value = m.group("key"), m.group("value")
        span = file.span_of_indices(w.start, w.end)
        exact = file.text[w.start : w.end] == w.text
        value_span = file.span_of_indices(w.start + m.start("value"), w.end) if exact else span
        known = w.known and "$" not in value
        out[key] = Arg(
            key=key,
            value=word_value(Word(value, w.start, w.end)) if known else None,
            span=span,
            value_span=value_span,
            known=known,
            raw=value,
        )
    return out


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """A MaxText training command: a site when its `quantization=` asks for FP8 (or cannot be
    read); claimed but siteless when it trains without FP8."""
    idx = _entry(command)
    if idx is None:
        return None
    args = _overrides(file, command[idx + 1 :])
    quant = args.get("quantization")
    if quant is None or (quant.known and str(quant.value) in NOT_FP8):
        return []
    first, last = command[0], command[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end))
    return [_site(file, quant, args, span, os.path.basename(command[idx].text))]


def _site(file: SourceFile, quant: Arg, args: dict[str, Arg], span: Span, entry: str) -> Fp8Site:
    values: dict[str, Setting[Any]] = {}
    invalid: list[SourceNote] = []
    mode = str(quant.value) if quant.known else None
    values["enabled"] = written(quant, True) if quant.known else written(quant, None)
    recipe, fmt, delayed = MODES.get(mode, (None, None, {})) if mode else (None, None, {})
    if mode is not None and mode not in MODES:
        invalid.append(invalid_note(quant, "not a quantization mode MaxText knows"))
    note = f"`quantization={mode}`" if mode else None
    if recipe is not None:
        values["recipe"] = written(quant, recipe, note)
    else:
        values["recipe"] = Setting[Recipe].model_construct(known=False)
    if fmt is not None:
        values["fmt"] = written(quant, fmt, note)
    else:
        values["fmt"] = Setting[Fp8Format].model_construct(known=False)
    of = f"{LABEL} `quantization={mode}`"
    for name, value in delayed.items():
        values[name] = default(value, of, "quantization", quant.value_span)
    tp: int | None = 1
    tp_args = [args[k] for k in TP_KEYS if k in args]
    for arg in tp_args:
        number = as_int(arg.value) if arg.known else None
        if arg.known and number is None:
            invalid.append(invalid_note(arg, "expected an integer"))
        tp = tp * number if tp is not None and number is not None else None
    if tp_args:
        main = tp_args[0]
        values["tensor_parallel"] = (
            written(main, tp)
            if tp is not None
            else Setting[int].model_construct(
                known=False, span=main.value_span, key=main.key, provenance="written"
            )
        )
    else:
        values["tensor_parallel"] = default(1, f"{LABEL} base.yml", TP_KEYS[0], quant.value_span)
    return Fp8Site.model_construct(
        path=file.path,
        framework=FRAMEWORK,
        kind=f"MaxText command line (`{entry}`)",
        span=span,
        enable_span=quant.value_span if quant.known else None,
        notes=[],
        invalid=invalid,
        edit=None,
        **cast("dict[str, Any]", values),  # keys are Setting fields
    )
