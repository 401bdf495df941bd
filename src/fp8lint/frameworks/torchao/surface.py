"""torchao's float8 training surface, as Python recipe code writes it: the keywords of
`Float8LinearConfig(...)` and the recipe named by `Float8LinearConfig.from_recipe_name(...)`.

Sources (pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94): `torchao/float8/config.py`
(`Float8LinearRecipeName`: `tensorwise`, `rowwise`, `rowwise_with_gw_hp`, renamed in v0.9.0
from `all_tensorwise`, `all_axiswise`, `lw_axiswise_with_gw_hp` by commit 7fc8ad40d, which
fp8lint still reads; `Float8LinearConfig`: `enable_fsdp_float8_all_gather`, `pad_inner_dim`,
`emulate`, `force_recompute_fp8_weight_in_bwd`, `round_scales_to_power_of_2`, all bool).
A name written as a `Float8LinearRecipeName` member is handed over as its lower-cased
member name; a string must match exactly, as the enum lookup does.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.surface_types import CodeBool
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


SURFACE = Float8LinearConfig
FILE = Float8LinearConfig
