"""Value types the surface models share: how each framework reads a written value.

An integer is an int, an integral float or a decimal string (argparse and YAML both hand
those over), never a bool (`fp8_margin: true` is a mistake, not 1) and within int64.  A
choice is matched after trimming and case-folding, as fp8lint has always read it: a value
that differs only in case is written the framework's way by the fix, not reported.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

INT_LIMIT = 2**63  # no framework takes an integer setting beyond int64


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def _flag(value: Any) -> Any:
    if isinstance(value, str) or (not isinstance(value, bool) and value not in (0, 1)):
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return value


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


# constraints first, so that the JSON Schema shows them as `minimum` / `exclusiveMaximum`
Int = Annotated[int, Field(ge=-INT_LIMIT, lt=INT_LIMIT), BeforeValidator(_no_bool)]
"""An integer setting (margin, history length, a parallel size)."""

HistoryLen = Annotated[int, Field(ge=1, lt=INT_LIMIT), BeforeValidator(_no_bool)]
"""An amax history length: Transformer Engine needs at least one entry."""

CodeBool = Annotated[bool, BeforeValidator(_flag)]
"""A boolean keyword in Python code: True, False, 1 or 0."""

LOWER = BeforeValidator(_lower)
"""Put before a lower-case `Literal` (Megatron's `hybrid`, Accelerate's `max`)."""

UPPER = BeforeValidator(_upper)
"""Put before an upper-case `Literal` (Accelerate's `HYBRID`, MS-AMP's `O2`)."""
