"""MyTrainer: a toy YAML family, written exactly as CONTRIBUTING's "Add a framework" says
(`tests/frameworks/test_add_a_family.py` installs it into a copy of the package)."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="mytrainer",
    label="MyTrainer",
    summary="MyTrainer `precision.fp8` YAML",
    schema=Schema("MyTrainer FP8 keys", "mytrainer YAML (precision:)"),
    trees=((65, ".reader:from_tree"),),
)
