"""MS-AMP's FP8 surface in Python: the keywords of `msamp.initialize(model, optimizer=None,
opt_level='O1', use_te=False)` (Azure/MS-AMP `msamp/__init__.py` @ 9746ea8), which accepts
only `'O1'` and `'O2'`, spelled exactly.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fp8lint.frameworks.shared.surface_types import CodeBool


class Initialize(BaseModel):
    """`msamp.initialize(...)` keywords."""

    model_config = ConfigDict(
        defer_build=True, extra="allow", validate_by_name=True, title="MS-AMP initialize"
    )

    opt_level: Literal["O1", "O2"] = "O1"
    use_te: CodeBool = False


SURFACE = Initialize
FILE = Initialize
