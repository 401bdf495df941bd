"""Levanter (haliax): Levanter `trainer.quantization`."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="levanter",
    label="Levanter (haliax)",
    summary="Levanter `trainer.quantization`",
    surface=None,  # not yet a surface model
    trees=((60, ".reader:from_tree"),),
)
