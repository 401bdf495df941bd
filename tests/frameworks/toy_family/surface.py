"""MyTrainer's FP8 keys as written: `precision: {fp8, margin, history, algo}`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict

from fp8lint.frameworks.shared.surface_types import LOWER, HistoryLen, Int


class Precision(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow", title="MyTrainer precision:")

    fp8: bool = False
    margin: Int = 0
    history: HistoryLen = 16
    algo: Annotated[Literal["max", "most_recent"], LOWER] = "most_recent"


class File(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="allow", title="MyTrainer config")

    precision: Precision | None = None


SURFACE = Precision
FILE = File
