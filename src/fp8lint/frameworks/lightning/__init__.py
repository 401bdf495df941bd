"""Lightning: Lightning `precision="transformer-engine"` and `TransformerEnginePrecision`."""

from fp8lint.frameworks.shared.family import Family, PythonReader

FAMILY = Family(
    name="lightning",
    label="Lightning",
    summary='Lightning `precision="transformer-engine"` and `TransformerEnginePrecision`',
    python=(
        PythonReader(
            r"transformer-engine|\bTransformerEnginePrecision\b",
            ("transformer-engine", "TransformerEnginePrecision"),
            ".reader:sites",
            40,
        ),
    ),
    prefilter=("transformer-engine", "TransformerEnginePrecision"),
)
