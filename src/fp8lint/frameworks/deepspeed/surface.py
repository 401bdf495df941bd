"""DeepSpeed + MS-AMP's FP8 surface: the `msamp` section of a DeepSpeed JSON config.

DeepSpeed itself has no FP8 key (microsoft/DeepSpeed@38327e07 `deepspeed/runtime/config.py`,
v0.16.5: precision is `fp16`, `bf16`, `amp`).  MS-AMP's patched DeepSpeed reads `"msamp":
{"enabled": bool, "opt_level": "O1" | "O2" | "O3", "use_te": bool}`, where O3 needs ZeRO
(MS-AMP user tutorial, https://azure.github.io/MS-AMP/docs/user-tutorial/usage; the
`msamp/deepspeed/` package of Azure/MS-AMP@0323b6b75b63c69016b75d6282906aaf79aeaf85 stored
here wraps the engine and adds `msamp_adam` / `msamp_adamw` optimizers).  The level is matched
exactly, as MS-AMP compares it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class MsampSection(BaseModel):
    """`"msamp": {...}` in a DeepSpeed config."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="MS-AMP section"
    )

    enabled: bool | None = False
    opt_level: Literal["O1", "O2", "O3"] = Field("O1", description="O3 needs ZeRO")
    use_te: bool | None = False


class DeepSpeedConfig(BaseModel):
    """A DeepSpeed JSON config: only its `msamp` section concerns FP8."""

    model_config = ConfigDict(defer_build=True, extra="allow", title="DeepSpeed config (MS-AMP)")

    msamp: MsampSection | None = None


SURFACE = MsampSection
FILE = DeepSpeedConfig
