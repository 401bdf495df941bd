"""MaxText: MaxText `quantization:` YAML and `MaxText.train key=value` launches."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="maxtext",
    label="MaxText",
    summary="MaxText `quantization:` YAML and `MaxText.train key=value` launches",
    surface=None,  # not yet a surface model
    trees=((100, ".config:from_tree"),),
    commands=((40, ".cli:from_command"),),
)
