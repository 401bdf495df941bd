"""NeMo-RL's FP8/FP4 surface: the `policy.megatron_cfg` keys it copies onto the Megatron
`TransformerConfig` of its model provider, with `TransformerConfig`'s defaults (margin 0,
history 1, `most_recent`) for every FP8 field it does not copy.

Sources (NVIDIA-NeMo/RL @7ea279ab): `nemo_rl/models/megatron/setup.py` (`fp8_cfg.fp8`,
`fp8_recipe`, `fp8_param` copied when `fp8_cfg.enabled`; the parallel sizes and
`sequence_parallel` as written).  Later main (the tree of @291c6f11): `fp4_cfg.fp4`,
`fp4_recipe`, `fp4_param` copied when `fp4_cfg.enabled`, the BF16 layer counts when written,
`te_precision_config_file` (`fp4.py`).  The model's shape and MLP kind come from the Hugging
Face checkpoint: no default.

`SURFACE` is keyed by `TransformerConfig` names (what the reader validates); `FILE`, the
exported schema, is the file as written (`policy.megatron_cfg.fp8_cfg.fp8_param`, ...),
generated from `SURFACE`'s fields so that each key's type and choices are written once.
`fp8_cfg`/`fp4_cfg` carry no defaults there: NeMo-RL's own block defaults were not read.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.nvte_env import NVTE_ENV
from fp8lint.frameworks.shared.tc_surface import TransformerConfigFp8, section
from fp8lint.frameworks.shared.transformer_config import PARALLEL_KEYS


class NemoRlMegatronConfig(TransformerConfigFp8):
    """The FP8 fields of `policy.megatron_cfg` (and its `fp8_cfg`/`fp4_cfg`)."""

    model_config = section("NeMo-RL policy.megatron_cfg FP8 keys")

    gated_linear_unit: SkipJsonSchema[bool | None] = None


SURFACE = NemoRlMegatronConfig

# written key -> SURFACE field, per block of the file
FP8_CFG = {"fp8": "fp8", "fp8_recipe": "fp8_recipe", "fp8_param": "fp8_param_gather"}
FP4_CFG = {"fp4": "fp4", "fp4_recipe": "fp4_recipe", "fp4_param": "fp4_param_gather"}
MEGATRON_KEYS = (
    "first_last_layers_bf16",
    "num_layers_at_start_in_bf16",
    "num_layers_at_end_in_bf16",
    *PARALLEL_KEYS,
)
_OPEN = ConfigDict(defer_build=True, extra="allow")


def _field(name: str, *, keep_default: bool) -> tuple[Any, FieldInfo]:
    """SURFACE's field `name` (type, choices, description), optionally without its default."""
    info = SURFACE.model_fields[name]
    annotation: Any = info.annotation
    if keep_default:
        return annotation, info
    return annotation | None, FieldInfo.merge_field_infos(info, default=None)


def _block(title: str, keys: dict[str, str]) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "enabled": (bool | None, Field(None, description="copies the keys below when true")),
        **{key: _field(name, keep_default=False) for key, name in keys.items()},
    }
    return create_model(
        title.replace("_", " ").title().replace(" ", ""), __config__=_OPEN, **fields
    )


def _env() -> type[BaseModel]:
    """`env_vars`: TE's recipe switches (`nvte_env`), switches read as `== "1"`."""
    switch = Field(None, description='TE reads it as on only for the text "1"')
    fields: dict[str, Any] = {
        name: (str | int | None, switch) if boolean else (str | None, Field(None))
        for name, (_, boolean) in NVTE_ENV.items()
    }
    return create_model("NemoRlEnvVars", __config__=_OPEN, **fields)


Fp8Cfg = _block("nemo_rl_fp8_cfg", FP8_CFG)
Fp4Cfg = _block("nemo_rl_fp4_cfg", FP4_CFG)
_MEGATRON: dict[str, Any] = {
    "enabled": (bool | None, Field(None, description="the Megatron backend runs when true")),
    "fp8_cfg": (Fp8Cfg | None, None),
    "fp4_cfg": (Fp4Cfg | None, None),
    "te_precision_config_file": (
        str | None,
        Field(None, description="a TE per-module precision recipe (YAML)"),
    ),
    "env_vars": (_env() | None, None),
    "activation_checkpointing": (bool | None, None),
    **{key: _field(key, keep_default=True) for key in MEGATRON_KEYS},
}
MegatronCfg = create_model("NemoRlMegatronCfg", __config__=_OPEN, **_MEGATRON)
Policy = create_model("NemoRlPolicy", __config__=_OPEN, megatron_cfg=(MegatronCfg | None, None))
FILE = create_model(
    "NemoRlFile",
    __config__=ConfigDict(defer_build=True, extra="allow", title="NeMo-RL policy config"),
    policy=(Policy | None, None),
)
