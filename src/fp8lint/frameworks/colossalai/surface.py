"""ColossalAI's FP8 surface: the `use_fp8` and `fp8_communication` keywords of the Booster
plugins `HybridParallelPlugin`, `MoeHybridParallelPlugin`, `GeminiPlugin` and
`LowLevelZeroPlugin` (hpcaitech/ColossalAI @4f9953be `colossalai/booster/plugin/*.py`; both
default to False; `TorchFSDPPlugin` and `TorchDDPPlugin` take only `fp8_communication`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StrictBool

from fp8lint.frameworks.shared.worded import worded


class BoosterPluginFp8(BaseModel):
    """A Booster plugin's FP8 keywords."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="ColossalAI plugin FP8"
    )

    use_fp8: Annotated[StrictBool, worded("expected True or False")] = False
    fp8_communication: Annotated[StrictBool, worded("expected True or False")] = False


SURFACE = BoosterPluginFp8
FILE = BoosterPluginFp8
