"""nanotron: nanotron `model.dtype: float8` and `fp8:` sections."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="nanotron",
    label="nanotron",
    summary="nanotron `model.dtype: float8` and `fp8:` sections",
    surface=None,  # not yet a surface model
    trees=((90, ".reader:from_tree"),),
)
