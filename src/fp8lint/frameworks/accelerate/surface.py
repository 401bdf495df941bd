"""Hugging Face Accelerate's FP8 surface: the `fp8_config:` section of an `accelerate config`
file (`mixed_precision: fp8`) and the keywords of `FP8RecipeKwargs` / `TERecipeKwargs`.

Sources (huggingface/accelerate@16cb6eb80dd9aa8b4df1a63ef57863e455d53b83):
`src/accelerate/utils/dataclasses.py` L305-308 (`Backend = Literal["MSAMP", "TE"]` plus `AO`
in the handlers, `OptLevel = Literal["O1", "O2"]`, `FP8Format = Literal["HYBRID", "E4M3",
"E5M2"]`, `AmaxComputeAlgorithm = Literal["max", "most_recent"]`) and the `TERecipeKwargs` /
`MSAMPRecipeKwargs` / `AORecipeKwargs` fields (`use_autocast_during_eval`, `margin`,
`interval`, `fp8_format`, `amax_history_len`, `amax_compute_algo`,
`override_linear_precision`, `use_mxfp8_block_scaling`, `opt_level`, `pad_inner_dim`,
`enable_fsdp_float8_all_gather`); `src/accelerate/commands/launch.py` L1257-1271 (which
`fp8_config` keys are read); `examples/config_yaml_templates/fp8.yaml`.  Accelerate upper-
cases the format and lower-cases the algorithm it reads from the environment, so case is
folded here too.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.surface_types import LOWER, UPPER, Int

# `MS-AMP` is how older Accelerate docs spelled the backend; fp8lint has always read it
Backend = Annotated[Literal["TE", "MSAMP", "MS-AMP", "AO"], UPPER]
FormatName = Annotated[Literal["HYBRID", "E4M3", "E5M2"], UPPER]
AlgoName = Annotated[Literal["max", "most_recent"], LOWER]
OptLevel = Annotated[Literal["O1", "O2"], UPPER]


class Fp8Config(BaseModel):
    """`fp8_config:` keys (and the handler keywords of the same names)."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="Accelerate fp8_config"
    )

    backend: Backend | None = None
    fp8_format: FormatName = "HYBRID"
    margin: Int = 0
    interval: Int = Field(1, description="ignored by Transformer Engine >= 1.8")
    amax_history_len: Int = 1024
    amax_compute_algo: AlgoName = Field(
        "most_recent", description="Accelerate drops its own default, so TE's max applies"
    )
    override_linear_precision: tuple[bool, bool, bool] | list[bool] | str | None = None
    use_autocast_during_eval: bool | None = False
    use_mxfp8_block_scaling: bool | None = False
    opt_level: OptLevel = Field("O2", description="MS-AMP only")
    enable_fsdp_float8_all_gather: bool | None = True
    pad_inner_dim: bool | None = True


class AccelerateConfig(BaseModel):
    """An `accelerate config` file."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="Accelerate config")

    mixed_precision: Annotated[Literal["no", "fp16", "bf16", "fp8"], LOWER] | None = None
    fp8_config: Fp8Config | None = None


SURFACE = Fp8Config
FILE = AccelerateConfig
