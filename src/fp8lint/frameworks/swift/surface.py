"""ms-swift's FP8 surface: the Megatron arguments of its `MegatronArguments` dataclass, which
Swift hands to Megatron as flags, so the fields are `TransformerConfig`'s with Swift's
defaults where its dataclass sets one.

Sources (modelscope/ms-swift@00840e65ad861f8157eddc27d7ddfeac0ebb3d7a):
`swift/megatron/argument/megatron_args.py` (`MegatronArguments`): `fp8_format` None (FP8
off), `fp8_recipe` "delayed", `fp8_amax_history_len` 1024, `fp8_amax_compute_algo` "max",
`fp8_param_gather` False, `recompute_granularity` "selective".  The model's shape (and MLP
kind) comes from the Hugging Face checkpoint, so no default is assumed for it.
"""

from __future__ import annotations

from pydantic.json_schema import SkipJsonSchema

from fp8lint.frameworks.shared.surface_types import Int
from fp8lint.frameworks.shared.tc_surface import AmaxAlgoName, TransformerConfigFp8, section


class SwiftMegatronArguments(TransformerConfigFp8):
    """The FP8 arguments of `megatron sft|pt|rlhf` (and `--megatron_extra_kwargs` keys)."""

    model_config = section("ms-swift Megatron arguments")

    fp8_amax_history_len: Int = 1024
    fp8_amax_compute_algo: AmaxAlgoName = "max"
    recompute_granularity: str | None = "selective"
    gated_linear_unit: SkipJsonSchema[bool | None] = None


SURFACE = SwiftMegatronArguments
FILE = SwiftMegatronArguments
