"""Levanter (haliax): Levanter `trainer.quantization`."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="levanter",
    label="Levanter (haliax)",
    summary="Levanter `trainer.quantization`",
    schema=Schema("haliax QuantizationConfig", "Levanter training config (trainer.quantization)"),
    trees=((60, ".reader:from_tree"),),
)
