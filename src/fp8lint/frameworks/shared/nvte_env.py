"""Transformer Engine's recipe switches set through environment variables written in a launch
script (`export NVTE_NVFP4_DISABLE_RHT=1`, or `NVTE_NVFP4_DISABLE_RHT=1 torchrun ...`), as the
model fields of the launch's site.

TE reads each one once, when `transformer_engine.common.recipe` is imported, as the default of
a recipe field (NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b
`transformer_engine/common/recipe/__init__.py`): `NVTE_NVFP4_DISABLE_RHT` L558,
`NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING` L559-561, `NVTE_NVFP4_DISABLE_2D_QUANTIZATION` L562,
`NVTE_NVFP4_ROW_SCALED_ACTIVATION` L563 (each True only for the exact text `1`, anything else
False), `NVTE_NVFP4_4OVER6` L564 (the text itself, default `none`),
`NVTE_FP8_BLOCK_SCALING_FP32_SCALES` L429 (`1` only) and `NVTE_BACKWARD_OVERRIDE` L261 (the
text, default unset).

A variable the script does not write is left unset, not TE's default: the job's environment
(a cluster profile, a container, the submitting shell) may set it, so its value is unknown
here.  A written value that cannot be read (`$RHT`) is unknown too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.shared.base import Arg, written
from fp8lint.model import Fp8Site, Setting

if TYPE_CHECKING:  # a YAML file's environment block needs no shell parser
    from fp8lint.documents.shell import Script

# variable -> (model field, boolean: `== "1"`)
NVTE_ENV: dict[str, tuple[str, bool]] = {
    "NVTE_NVFP4_DISABLE_RHT": ("nvfp4_disable_rht", True),
    "NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING": ("nvfp4_disable_sr", True),
    "NVTE_NVFP4_DISABLE_2D_QUANTIZATION": ("nvfp4_disable_2d", True),
    "NVTE_NVFP4_ROW_SCALED_ACTIVATION": ("nvfp4_row_scaled", True),
    "NVTE_NVFP4_4OVER6": ("nvfp4_4over6", False),
    "NVTE_BACKWARD_OVERRIDE": ("backward_override", False),
    "NVTE_FP8_BLOCK_SCALING_FP32_SCALES": ("block_scaling_fp32_scales", True),
}


def env_value(text: str, boolean: bool) -> object:
    """What TE makes of the variable's text: `== "1"` for a switch, the text otherwise."""
    return text == "1" if boolean else text


def env_settings(file: SourceFile, script: Script) -> dict[str, Setting[Any]]:
    """The model fields the script's `NVTE_*` assignments set, keyed by field name."""
    out: dict[str, Setting[Any]] = {}
    for name, (field, boolean) in NVTE_ENV.items():
        words = script.variables.get(name)
        at = script.assigned_at.get(name)
        if words is None or at is None:
            continue
        start, end = at
        known = all(w.known for w in words)
        text = "".join(w.text for w in words)
        value_start = words[0].start if words else end
        arg = Arg(
            key=name,
            value=env_value(text, boolean) if known else None,
            span=file.span_of_indices(start, end),
            value_span=file.span_of_indices(min(value_start, end), end),
            known=known,
            raw=text,
        )
        out[field] = written(arg, arg.value)
    return out


def with_env(site: Fp8Site, settings: dict[str, Setting[Any]]) -> Fp8Site:
    """The site with the script's `NVTE_*` fields, unless the site already has one written."""
    updates = {f: s for f, s in settings.items() if not getattr(site, f).written}
    return site.model_copy(update=updates) if updates else site
