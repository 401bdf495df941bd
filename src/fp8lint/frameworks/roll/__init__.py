"""ROLL: the Megatron `strategy_config` of ROLL's workers (mcore_adapter)."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="roll",
    label="ROLL",
    summary="ROLL `<worker>.strategy_args.strategy_config` (mcore_adapter `fp8`, `fp8_recipe`)",
    schema=Schema(
        "mcore_adapter TrainingArguments FP8 fields (ROLL)",
        "ROLL pipeline config (<worker>.strategy_args.strategy_config)",
    ),
    trees=((87, ".reader:from_tree"),),
)
