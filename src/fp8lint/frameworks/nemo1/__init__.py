"""NeMo 1.x: NeMo 1.x and NeMo-Framework-Launcher `model.fp8*` configs."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="nemo1",
    label="NeMo 1.x",
    summary="NeMo 1.x and NeMo-Framework-Launcher `model.fp8*` configs",
    schema=Schema("NeMo 1.x FP8 keys", "NeMo 1.x / NeMo-Framework-Launcher YAML (model:)"),
    trees=((20, ".config:from_tree"),),
    writers={"fmt": ".config:write_format"},
)
