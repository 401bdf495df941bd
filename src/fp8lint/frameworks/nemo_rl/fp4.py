"""NeMo-RL's FP4 block, `policy.megatron_cfg.fp4_cfg`, and the keys beside it that FP4 reads.

NeMo-RL main after 7ea279ab (the tree of NVIDIA-NeMo/RL@291c6f11, whose
`examples/configs/recipes/llm/grpo-qwen3-30ba3b-base-8n4g-megatron-te-nvfp4-pertoken.yaml`
uses it) copies the block onto the Megatron provider in `_apply_precision_config`
(`nemo_rl/models/megatron/setup.py`; read in a stored copy of that file, its commit not
named by the index):

- `fp4_cfg` is validated as NeMo-RL's `Fp4Config`; only when its `enabled` is true are `fp4`
  (the format), `fp4_recipe` and `fp4_param` copied (as `TransformerConfig.fp4`,
  `fp4_recipe`, `fp4_param`), and a missing `fp4` raises `KeyError`;
- `fp8_cfg.enabled` and `fp4_cfg.enabled` both true raises `ValueError` ("cannot both have
  enabled: true"), before anything is copied;
- `first_last_layers_bf16`, `num_layers_at_start_in_bf16`, `num_layers_at_end_in_bf16` are
  copied when written; `te_precision_config_file` is loaded as the provider's per-module
  `quant_recipe` (a missing file raises);
- with `generation.nvfp4_pertoken_rollout` enabled, NeMo-RL raises unless `fp4_cfg` is
  `{enabled: true, fp4: e2m1, fp4_recipe: nvfp4, fp4_param: false}`, a precision file is
  given and `env_vars` set row-scaled activations, RHT and 2D scaling off and
  `NVTE_BACKWARD_OVERRIDE=dequantized`.  Such a file's unwritten FP4 values are therefore
  known (the shipped recipe writes only `enabled: true`).

`Fp4Config`'s own defaults were not read: an unwritten `enabled`, `fp4`, `fp4_recipe` or
`fp4_param` is unknown unless the per-token rollout fixes it.
"""

from __future__ import annotations

from typing import Any

from fp8lint.frameworks.shared.base import Arg, written
from fp8lint.frameworks.shared.transformer_config import as_bool
from fp8lint.model import PrecisionOverride, Setting, SourceNote, Span

PREFIX = "policy.megatron_cfg.fp4_cfg."
ROLLOUT = "generation.nvfp4_pertoken_rollout requires it (NeMo-RL raises otherwise)"
# fp4_cfg key -> (TransformerConfig field the reader validates, model field, per-token value)
COPIED = (
    ("fp4", "fp4", "fp4", "e2m1"),
    ("fp4_recipe", "fp4_recipe", "fp4_recipe", "nvfp4"),
    ("fp4_param", "fp4_param_gather", "fp4_param_gather", False),
)


def fp4_fields(
    inner: dict[str, Arg], backend: Arg | None, pertoken: Arg | None, pair: Any
) -> tuple[dict[str, Arg], dict[str, Any]]:
    """The `fp4_cfg` entries to validate (keyed by TransformerConfig name), and the settings
    (and `enable_span`, the switch) that replace the site's FP4 fields."""
    if not inner:
        return {}, {}
    switch = inner.get("enabled")
    if backend is not None and backend.known and as_bool(backend.value) is False:
        return {}, {"fp4": written(backend, None, "the Megatron backend is off")}
    if switch is None:
        note = "fp4_cfg has no `enabled`: NeMo-RL's Fp4Config default is not read here"
        return {}, {"fp4": _unknown("enabled", note)}
    if not switch.known:
        return {}, {"fp4": written(switch, None)}
    if as_bool(switch.value) is not True:
        return {}, {"fp4": written(switch, None, "fp4_cfg.enabled is off: no FP4 field copied")}
    fields: dict[str, Arg] = {}
    values: dict[str, Any] = {"enable_span": switch.value_span}
    for key, config_name, model_name, required in COPIED:
        if key in inner:
            fields[config_name] = inner[key]
        elif pertoken is not None:
            values[model_name] = Setting[Any].model_construct(
                value=required,
                known=True,
                provenance="derived",
                key=PREFIX + key,
                span=pertoken.value_span,
                note=ROLLOUT,
            )
        else:
            values[model_name] = _unknown(key, f"fp4_cfg.{key} is not written here")
    return fields, values


def _unknown(key: str, note: str) -> Setting[Any]:
    return Setting[Any].model_construct(known=False, key=PREFIX + key, note=note)


def both_on(span: Span) -> SourceNote:
    """NeMo-RL's own refusal of `fp8_cfg` and `fp4_cfg` both enabled (an FP8403 finding)."""
    return SourceNote.model_construct(
        kind="conflict",
        key=PREFIX + "enabled",
        span=span,
        message="FP8 and FP4 are both on: `fp8_cfg.enabled` and `fp4_cfg.enabled`",
        why="NeMo-RL raises when both blocks are enabled (Megatron takes only one)",
    )


def precision_file(arg: Arg | None) -> list[PrecisionOverride]:
    """`te_precision_config_file`: a per-module TE recipe in another file (linted on its own
    when it is among the paths), so which layers stay BF16 is not known here."""
    if arg is None or (arg.known and arg.value is None):
        return []
    return [
        PrecisionOverride.model_construct(
            feature="te_precision_config_file",
            layers=f"the matchers of {arg.raw or '?'}",
            precision="the per-module TE recipe of that file (not read here)",
            enabled=True,
            span=arg.span,
        )
    ]
