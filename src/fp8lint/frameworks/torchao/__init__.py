"""torchao: torchao `convert_to_float8_training` and `Float8LinearConfig`."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="torchao",
    label="torchao",
    summary="torchao `convert_to_float8_training` and `Float8LinearConfig`",
    schema=Schema("torchao Float8LinearConfig", "its keywords, from_recipe_name()"),
)
