"""MS-AMP's FP8 surface in Python: the keywords of `msamp.initialize(model, optimizer=None,
opt_level='O1', use_te=False)` (Azure/MS-AMP `msamp/__init__.py` @ 9746ea8), which accepts
only `'O1'` and `'O2'`, spelled exactly; a rejected level is worded with a hint where it
could be O3, which only MS-AMP's DeepSpeed integration has.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict

from fp8lint.frameworks.shared.surface_types import CodeBool
from fp8lint.frameworks.shared.worded import worded


def _levels(value: Any) -> str:
    extra = " (O3 exists only in MS-AMP's DeepSpeed integration)" if value else ""
    return f"expected 'O1' or 'O2'{extra}"


class Initialize(BaseModel):
    """`msamp.initialize(...)` keywords."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="MS-AMP initialize"
    )

    opt_level: Annotated[Literal["O1", "O2"], worded(_levels)] = "O1"
    use_te: CodeBool = False


SURFACE = Initialize
FILE = Initialize
