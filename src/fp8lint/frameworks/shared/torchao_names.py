"""torchao's float8 recipe names, as a surface type: `Float8LinearRecipeName`'s values, with
the pre-0.9 names read as the new ones.  torchao's `from_recipe_name(...)` and torchtitan's
`recipe_name` both take them.

Source: pytorch/ao@36027d82d1ad9949597ea16002ff4940374b1b94 `torchao/float8/config.py`
(`Float8LinearRecipeName`: `tensorwise`, `rowwise`, `rowwise_with_gw_hp`, renamed in v0.9.0
from `all_tensorwise`, `all_axiswise`, `lw_axiswise_with_gw_hp` by commit 7fc8ad40d).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

# torchao 0.9 renamed the recipes; the old names still read as the new ones
PRE_0_9_NAMES = {
    "all_tensorwise": "tensorwise",
    "all_axiswise": "rowwise",
    "lw_axiswise_with_gw_hp": "rowwise_with_gw_hp",
}


def _renamed(value: Any) -> Any:
    return PRE_0_9_NAMES.get(value, value) if isinstance(value, str) else value


RecipeName = Annotated[
    Literal["tensorwise", "rowwise", "rowwise_with_gw_hp"], BeforeValidator(_renamed)
]
