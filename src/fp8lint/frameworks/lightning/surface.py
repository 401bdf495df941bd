"""Lightning's FP8 surface in Python: `Trainer(precision=...)` / `Fabric(precision=...)` with
`"transformer-engine"` or `"transformer-engine-float16"`, and the keywords of
`TransformerEnginePrecision(weights_dtype=..., recipe=None, replace_layers=None)`
(Lightning-AI/pytorch-lightning 7f0c343 `src/lightning/fabric/plugins/precision/
transformer_engine.py`, `fabric/connector.py`).  A `recipe` mapping's keys are TE's
`DelayedScaling` keywords (the te surface), but its `fp8_format` is looked up with
`getattr(Format, name)`: an exact member name, checked here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.frameworks.shared.worded import worded


class TransformerEnginePrecision(BaseModel):
    """The precision string and the plugin's keywords."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        title="Lightning TransformerEnginePrecision",
    )

    precision: Literal["transformer-engine", "transformer-engine-float16"] | None = Field(
        None, description="Trainer/Fabric precision string"
    )
    recipe: dict[str, Any] | None = Field(None, description="None: TE's DelayedScaling()")
    replace_layers: bool | None = Field(None, description="None or True: swap nn.Linear")


class LightningKeys(TransformerEnginePrecision):
    """What the reader validates: the plugin's keywords and a recipe mapping's `fp8_format`."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="Lightning FP8 keys"
    )

    fp8_format: Annotated[
        Literal["HYBRID", "E4M3", "E5M2"],
        worded("expected HYBRID, E4M3 or E5M2 (TE's Format member names)"),
    ] = Field(None, description="absent: TE's DelayedScaling default")  # type: ignore[arg-type]
    # (the default is not validated: absent is TE's default, a written None is rejected)


SURFACE = LightningKeys
FILE = TransformerEnginePrecision
