"""LLaMA-Factory / axolotl: LLaMA-Factory and axolotl `fp8` / `fp8_backend` YAML."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="llamafactory",
    label="LLaMA-Factory / axolotl",
    summary="LLaMA-Factory and axolotl `fp8` / `fp8_backend` YAML",
    surface=None,  # not yet a surface model
    trees=((30, ".reader:from_tree"),),
)
