"""MaxText: MaxText `quantization:` YAML and `MaxText.train key=value` launches."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="maxtext",
    label="MaxText",
    summary="MaxText `quantization:` YAML and `MaxText.train key=value` launches",
    schema=Schema("MaxText FP8 keys", "MaxText YAML config, MaxText.train key=value"),
    trees=((100, ".config:from_tree"),),
    commands=((40, ".cli:from_command"),),
)
