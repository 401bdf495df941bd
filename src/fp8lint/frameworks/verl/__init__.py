"""verl: the Megatron `override_transformer_config` of verl's actor, ref and critic."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="verl",
    label="verl",
    summary="verl `*.megatron.override_transformer_config` (YAML and Hydra overrides)",
    schema=Schema(
        "Megatron TransformerConfig (verl)",
        "verl trainer config (*.megatron.override_transformer_config)",
    ),
    trees=((85, ".reader:from_tree"),),
    commands=((35, ".reader:from_command"),),
)
