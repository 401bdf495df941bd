"""nanotron: nanotron `model.dtype: float8` and `fp8:` sections."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="nanotron",
    label="nanotron",
    summary="nanotron `model.dtype: float8` and `fp8:` sections",
    schema=Schema("nanotron FP8 tensor recipe", "nanotron YAML config (model.dtype, fp8:)"),
    trees=((90, ".reader:from_tree"),),
)
