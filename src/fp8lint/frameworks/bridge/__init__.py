"""Megatron-Bridge: Megatron-Bridge `MixedPrecisionConfig`, its presets, and its launch commands."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="bridge",
    label="Megatron-Bridge",
    summary="Megatron-Bridge `MixedPrecisionConfig`, its presets, and its launch commands",
    schema=Schema("Megatron-Bridge MixedPrecisionConfig", "its fields"),
    commands=((20, ".cli:from_command"),),
    scripts=((20, ".cli:from_script"),),
)
