"""NeMo AutoModel: NeMo AutoModel `fp8:` (torchao) and `backend.te_fp8` YAML."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="automodel",
    label="NeMo AutoModel",
    summary="NeMo AutoModel `fp8:` (torchao) and `backend.te_fp8` YAML",
    schema=Schema("NeMo AutoModel fp8 and te_fp8", "NeMo AutoModel recipe YAML"),
    trees=((50, ".reader:from_tree"),),
)
