"""NeMo AutoModel: NeMo AutoModel `fp8:` (torchao) and `backend.te_fp8` YAML."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="automodel",
    label="NeMo AutoModel",
    summary="NeMo AutoModel `fp8:` (torchao) and `backend.te_fp8` YAML",
    surface=None,  # not yet a surface model
    trees=((50, ".reader:from_tree"),),
)
