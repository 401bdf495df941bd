"""ROLL's FP8 surface: mcore_adapter's `DistributingParallelArguments` fields `fp8` (format,
default None: off), `fp8_recipe` (default None) and `fp8_param` (default False), and
`additional_configs` for any other `TransformerConfig` field (alibaba/ROLL @8eb27cc2
`mcore_adapter/src/mcore_adapter/training_args.py` L250-274).  The model config they are laid
on is Megatron Core's `TransformerConfig`, whose defaults hold for the rest."""

from __future__ import annotations

from fp8lint.frameworks.shared.tc_surface import TransformerConfigFp8, section


class RollStrategyConfig(TransformerConfigFp8):
    """The FP8 fields of a megatron `strategy_config` (and its `additional_configs`)."""

    model_config = section("ROLL strategy_config FP8 keys")


SURFACE = RollStrategyConfig
FILE = RollStrategyConfig
