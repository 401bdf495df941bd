"""torchtitan: TOML job configs (float8/mx converters) and its Python converter configs."""

from fp8lint.frameworks.shared.family import Family, PythonReader, Schema

FAMILY = Family(
    name="torchtitan",
    label="torchtitan",
    summary=("torchtitan TOML job configs (float8/mx converters) and its Python converter configs"),
    schema=Schema("torchtitan float8 converter", "torchtitan TOML job config"),
    toml=".toml:from_toml",
    python=(
        PythonReader(
            r"\b(?:Float8|MXFP8|NVFP4)LinearConverter\b",
            ("Float8LinearConverter", "MXFP8LinearConverter", "NVFP4LinearConverter"),
            ".python:sites",
            30,
        ),
    ),
    commands=((45, ".cli:from_command"),),
    prefilter=('"mx"', '.mx"'),
)
