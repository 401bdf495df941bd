"""torchao: torchao `convert_to_float8_training`, `Float8LinearConfig` and `quantize_`'s
configs."""

from fp8lint.frameworks.shared.family import Family, PythonReader, Schema

FAMILY = Family(
    name="torchao",
    label="torchao",
    summary="torchao `convert_to_float8_training`, `Float8LinearConfig` and `quantize_` configs",
    schema=Schema("torchao Float8LinearConfig", "its keywords, from_recipe_name()"),
    prefilter=("MXLinearConfig",),
    python=(
        PythonReader(
            r"\b(?:Float8DynamicActivation\w*|Float8WeightOnly|MXDynamicActivationMXWeight"
            r"|NVFP4\w*|Float8TrainingOp|MXFP8TrainingOp|MXFPInference|MXLinear|MoETraining)"
            r"Config\b",
            ("Config",),
            ".quantize:sites",
            40,
        ),
    ),
)
