"""Accelerate: Accelerate `fp8_config` YAML and its recipe kwargs handlers."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="accelerate",
    label="Accelerate",
    summary="Accelerate `fp8_config` YAML and its recipe kwargs handlers",
    schema=Schema("Accelerate fp8_config", "accelerate config YAML"),
    trees=((40, ".reader:from_tree"),),
    prefilter=("AORecipeKwargs",),
    upper_case_format=True,
)
