"""torchao's float8 training surface, as Python recipe code writes it: the keywords of
`Float8LinearConfig(...)` and the recipe named by `Float8LinearConfig.from_recipe_name(...)`.

Sources (pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94): `torchao/float8/config.py`
(`Float8LinearRecipeName`: `tensorwise`, `rowwise`, `rowwise_with_gw_hp`, renamed in v0.9.0
from `all_tensorwise`, `all_axiswise`, `lw_axiswise_with_gw_hp` by commit 7fc8ad40d, which
fp8lint still reads; `Float8LinearConfig`: `enable_fsdp_float8_all_gather`, `pad_inner_dim`,
`emulate`, `force_recompute_fp8_weight_in_bwd`, `round_scales_to_power_of_2`, all bool).
A name written as a `Float8LinearRecipeName` member is handed over as its lower-cased
member name; a string must match exactly, as the enum lookup does.

`MXLinearConfig` (torchao 0.9-0.16; removed by b8708a2dd, 2026-03-03, for
`MXFP8TrainingOpConfig`), pytorch/ao@7bb7f061ad4d612b4bb3a23b5dedcafa27da8e49
`torchao/prototype/mx_formats/config.py`: `MXLinearRecipeName` (L42: `mxfp8_emulated`,
`mxfp8_cublas`, `mxfp8_cublas_rceil`, `mxfp4_emulated`, `mxfp4_cutlass`; a string must be one
of these, L200-205), `MXLinearConfig` (L140: `block_size` 32, `elem_dtype`
`torch.float8_e4m3fn` L147, the weight and grad-output overrides None L151-152) and
`from_recipe_name` (L193-239: the `mxfp8_*` names keep E4M3 elements, the `mxfp4_*` ones set
`torch.float4_e2m1fn_x2`); the element types `constants.py` L13-27 allows (the FP6 ones are
the strings `DTYPE_FP6_E2M3`/`DTYPE_FP6_E3M2` name).  A dtype is read as the name it is
written with (`torch.float8_e4m3fn` as `float8_e4m3fn`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.surface_types import CodeBool, Int
from fp8lint.frameworks.shared.torchao_names import RecipeName


class Float8LinearConfig(BaseModel):
    """`Float8LinearConfig` keywords, and `recipe_name` for `from_recipe_name(...)`."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="torchao Float8LinearConfig"
    )

    recipe_name: RecipeName = Field("tensorwise", description="from_recipe_name(...)'s argument")
    enable_fsdp_float8_all_gather: CodeBool = False
    pad_inner_dim: CodeBool = False
    emulate: CodeBool = False
    force_recompute_fp8_weight_in_bwd: CodeBool = Field(False, description="deprecated")
    round_scales_to_power_of_2: CodeBool = False


MXRecipeName = Literal[
    "mxfp8_emulated", "mxfp8_cublas", "mxfp8_cublas_rceil", "mxfp4_emulated", "mxfp4_cutlass"
]
MXElemDtype = Literal[
    "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn_x2", "DTYPE_FP6_E2M3", "DTYPE_FP6_E3M2"
]


class MXLinearConfig(BaseModel):
    """`MXLinearConfig` keywords, and `recipe_name` for `from_recipe_name(...)`."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="torchao MXLinearConfig"
    )

    recipe_name: MXRecipeName | None = Field(None, description="from_recipe_name(...)'s argument")
    block_size: Int = 32
    elem_dtype: MXElemDtype = "float8_e4m3fn"
    elem_dtype_weight_override: MXElemDtype | None = None
    elem_dtype_grad_output_override: MXElemDtype | None = None


# what each recipe name builds (`from_recipe_name`, L207-237): its element type
MX_RECIPE_ELEM: dict[str, str] = {
    "mxfp8_emulated": "float8_e4m3fn",
    "mxfp8_cublas": "float8_e4m3fn",
    "mxfp8_cublas_rceil": "float8_e4m3fn",
    "mxfp4_emulated": "float4_e2m1fn_x2",
    "mxfp4_cutlass": "float4_e2m1fn_x2",
}

SURFACE = Float8LinearConfig
FILE = Float8LinearConfig
