"""Surface validators that keep a family's own FP8401 wording, and YAML's boolean as fp8lint
reads it.

`shared.surfaces.expected` words pydantic's errors in one house style; a family whose message
has always said more (the choices as the framework's docs spell them, a hint about a value
that exists elsewhere) wraps its type with `worded(...)`, so the surface rejects the value
and the message stays what users have seen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationError, WrapValidator
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ValidatorFunctionWrapHandler

from fp8lint.frameworks.shared.transformer_config import as_bool


def worded(message: str | Callable[[Any], str]) -> WrapValidator:
    """Reject what the wrapped type rejects, with `message` (or `message(value)`) as the
    text after "`key` is VALUE; "."""

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            text = message(value) if callable(message) else message
            raise PydanticCustomError("worded", text) from None

    return WrapValidator(wrap)


def _yaml_flag(value: Any) -> Any:
    flag = as_bool(value)
    if flag is None:
        raise PydanticCustomError("bool_type", "Input should be a valid boolean")
    return flag


YamlBool = Annotated[bool, BeforeValidator(_yaml_flag)]
"""A YAML switch: true/false, `"true"`/`"yes"`/`"1"` (and their negatives) or 0/1."""
