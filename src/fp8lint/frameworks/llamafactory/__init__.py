"""LLaMA-Factory / axolotl: LLaMA-Factory and axolotl `fp8` / `fp8_backend` YAML."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="llamafactory",
    label="LLaMA-Factory / axolotl",
    summary="LLaMA-Factory and axolotl `fp8` / `fp8_backend` YAML",
    schema=Schema("LLaMA-Factory / axolotl fp8 keys", "LLaMA-Factory or axolotl training YAML"),
    trees=((30, ".reader:from_tree"),),
)
