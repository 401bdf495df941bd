"""Megatron-LM: Megatron-LM flags (launch scripts, functional-test `MODEL_ARGS:`) and
`TransformerConfig` YAML.
"""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="megatron",
    label="Megatron-LM",
    summary=(
        "Megatron-LM flags (launch scripts, functional-test `MODEL_ARGS:`) and "
        "`TransformerConfig` YAML"
    ),
    schema=Schema("Megatron-LM FP8 flags", "functional-test model_config.yaml"),
    trees=(
        (10, ".configs:from_model_args"),
        (140, ".configs:from_transformer_config"),
    ),
)
