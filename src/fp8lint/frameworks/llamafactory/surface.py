"""LLaMA-Factory's and axolotl's FP8 surface: top-level keys of a training YAML.

LLaMA-Factory (hiyouga/LLaMA-Factory at ff6d4d12): `src/llamafactory/hparams/training_args.py`
`Fp8Arguments` (`fp8` False, `fp8_backend` "auto" among auto, torchao, te, msamp,
`fp8_enable_fsdp_float8_all_gather` False) and `hparams/model_args.py`
(`disable_gradient_checkpointing`).  axolotl (axolotl-ai-cloud/axolotl at 067b021c):
`src/axolotl/utils/schemas/config.py` (`fp8`, `fp8_enable_fsdp_float8_all_gather`,
`gradient_checkpointing`).  The backend is read case-folded (not trimmed), and a rejected one is
worded with LLaMA-Factory's choices.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict

from fp8lint.frameworks.shared.worded import worded


def _fold(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


class TrainingArgs(BaseModel):
    """The FP8 keys of a LLaMA-Factory or axolotl training YAML."""

    model_config = ConfigDict(
        defer_build=True,
        extra="allow",
        validate_by_name=True,
        title="LLaMA-Factory / axolotl training YAML (fp8)",
    )

    fp8: bool = False
    fp8_backend: Annotated[
        Literal["auto", "torchao", "te", "msamp"],
        BeforeValidator(_fold),
        worded("expected auto, torchao, te or msamp"),
    ] = "auto"
    fp8_enable_fsdp_float8_all_gather: bool = False
    disable_gradient_checkpointing: bool | None = None
    gradient_checkpointing: bool | None = None


SURFACE = TrainingArgs
FILE = TrainingArgs
