"""Megatron-LM's FP8 surface: `TransformerConfig` fields and the command-line flags made from
them.

The fields are `TransformerConfig`'s (`shared.tc_surface.TransformerConfigFp8`, which every
stack built on it reuses, with the citations of its fields).  `MegatronArgs` is that surface
spelled as flags: `--` + the field with `_` turned into `-`, except where
`argparse_meta` renames it (`fp8` is `--fp8-format`, `fp4` is `--fp4-format`,
`num_moe_experts` is `--num-experts`, `gated_linear_unit` is `--swiglu`).

Sources (NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553):
`megatron/training/argument_utils.py` L45-200 (flags generated from the fields) and
`megatron/training/arguments.py` (`--fp8-param-gather`; the legacy `--fp8-e4m3` /
`--fp8-hybrid`, replaced by `--fp8-format` in commit 1b7a3836).

The command line is as strict as argparse: an integer flag takes what `int()` takes (`16`,
`+16`, `1_024`; not `16.0`), a choice is matched exactly (`hybrid`, not `HYBRID`).  A
functional-test `MODEL_ARGS:` value reaches argparse as its text, so a YAML `16.0` fails
there too (`tests/functional_tests/shell_test_utils/_run_training.sh`).
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from fp8lint.frameworks.shared.megatron_flags import flag_of
from fp8lint.frameworks.shared.tc_surface import (
    Fp4FormatName,
    Fp8FormatName,
    TransformerConfigFp8,
)


def _int_fields() -> tuple[str, ...]:
    """The integer fields of the TransformerConfig surface (`Int` or `Int | None`)."""
    out = []
    for name, info in TransformerConfigFp8.model_fields.items():
        kinds = [info.annotation, *get_args(info.annotation)]
        kinds += [arg for kind in kinds for arg in get_args(kind)]
        if int in kinds and bool not in kinds:
            out.append(name)
    return tuple(out)


_INT_FIELDS = _int_fields()


class MegatronArgs(TransformerConfigFp8):
    """Megatron's FP8 flags, as a functional-test `MODEL_ARGS:` block writes them."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        alias_generator=flag_of,
        field_title_generator=lambda name, _info: flag_of(name),
        title="Megatron-LM FP8 flags",
    )

    # argparse's choices: a format or nothing (no `false`, no empty string)
    fp8: Fp8FormatName | None = Field(None, description="FP8 format (`--fp8-format`)")
    fp4: Fp4FormatName | None = Field(None, description="FP4 format (`--fp4-format`)")

    # negated spellings (read before validation; here for editors)
    no_fp8_wgrad: bool | None = None
    disable_fp8_wgrad: bool | None = None
    # training flags the launch checks read (`megatron/training/arguments.py` L2918, L3080,
    # L3156; `megatron/training/config/common_config.py` L92-95)
    use_distributed_optimizer: bool | None = False
    use_torch_fsdp2: bool | None = False
    use_megatron_fsdp: bool | None = False
    optimizer_cpu_offload: bool | None = False
    reuse_grad_buf_for_mxfp8_param_ag: bool | None = False
    # overlap, virtual pipeline, CUDA graphs, optimizer and checkpoint format (the documented
    # failures' rules read them): `arguments.py` L3121, L3148, L3150 (overlap), L3114-3117
    # (virtual pipeline; `virtual_pipeline_model_parallel_size` is the TransformerConfig
    # field, `model_parallel_config.py` L86), L2913 (`--optimizer`), L3667-3683 (precision-
    # aware optimizer, moments' dtypes); `transformer_config.py` L1049, L1075 (CUDA graphs);
    # `--ckpt-format` from `CheckpointConfig` (`training/config/training_config.py` L486)
    overlap_grad_reduce: bool | None = False
    overlap_param_gather: bool | None = False
    overlap_param_gather_with_optimizer_step: bool | None = False
    num_layers_per_virtual_pipeline_stage: int | None = None
    num_virtual_stages_per_pipeline_rank: int | None = None
    virtual_pipeline_model_parallel_size: int | None = None
    optimizer: str | None = "adam"
    use_precision_aware_optimizer: bool | None = False
    exp_avg_dtype: str | None = "fp32"
    exp_avg_sq_dtype: str | None = "fp32"
    ckpt_format: str | None = "torch_dist"
    cuda_graph_impl: str | None = "none"
    enable_cuda_graph: bool | None = False
    external_cuda_graph: bool | None = False

    @field_validator(*_INT_FIELDS, mode="before")
    @classmethod
    def _argparse_int(cls, value: Any) -> Any:
        """argparse's `type=int`: the flag's text must be what `int()` reads."""
        if isinstance(value, bool) or isinstance(value, float):
            raise PydanticCustomError("int_parsing", "not an integer for argparse")
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                raise PydanticCustomError("int_parsing", "not an integer for argparse") from None
        return value


class MegatronModelConfig(BaseModel):
    """A Megatron functional-test `model_config.yaml`: flags under `MODEL_ARGS:`."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="Megatron model_config.yaml")

    MODEL_ARGS: MegatronArgs | None = None


SURFACE = MegatronArgs
FILE = MegatronModelConfig
