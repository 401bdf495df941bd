"""DeepSpeed + MS-AMP: DeepSpeed JSON configs with an MS-AMP section."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="deepspeed",
    label="DeepSpeed + MS-AMP",
    summary="DeepSpeed JSON configs with an MS-AMP section",
    schema=Schema("DeepSpeed MS-AMP section", "DeepSpeed JSON config (msamp)"),
    trees=((130, ".reader:from_tree"),),
    prefilter=("msamp",),
)
