"""AMD Primus: AMD Primus `modules.*.overrides` YAML."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="primus",
    label="AMD Primus",
    summary="AMD Primus `modules.*.overrides` YAML",
    trees=((70, ".reader:from_tree"),),
)
