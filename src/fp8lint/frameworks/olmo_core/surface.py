"""OLMo-core's FP8 surface in Python: the keywords of `Float8Config(enabled=True, ao=None,
ao_recipe=None, ao_mx=None)` (allenai/OLMo-core fa6c501 `src/olmo_core/float8/__init__.py`);
`ao_recipe` names a torchao recipe (`AOFloat8LinearRecipe`: tensorwise, rowwise,
rowwise_with_gw_hp, in `ao.py`).  `ao` and `ao_mx` are config objects, read by the recognizer.
`enabled` must be a Python bool and the recipe name is spelled exactly, as fp8lint has always
read them (and worded them).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StrictBool

from fp8lint.frameworks.shared.worded import worded


class Float8Config(BaseModel):
    """`Float8Config(...)` keywords."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="OLMo-core Float8Config"
    )

    enabled: Annotated[StrictBool, worded("expected True or False")] = True
    ao_recipe: Annotated[
        Literal["tensorwise", "rowwise", "rowwise_with_gw_hp"] | None,
        worded("expected tensorwise, rowwise or rowwise_with_gw_hp"),
    ] = None


SURFACE = Float8Config
FILE = Float8Config
