"""NeMo 2: NeMo 2 `MegatronMixedPrecision`, its presets, `MegatronStrategy`, and the
`scripts/performance` launchers.
"""

from fp8lint.frameworks.shared.family import Family, PythonReader, Schema

FAMILY = Family(
    name="nemo2",
    label="NeMo 2",
    summary=(
        "NeMo 2 `MegatronMixedPrecision`, its presets, `MegatronStrategy`, and the "
        "`scripts/performance` launchers"
    ),
    schema=Schema("NeMo 2 MegatronMixedPrecision", "its keywords, serialized NeMo 2 configs"),
    python=(
        PythonReader(
            r"\bset_(?:primary_perf|precision)_configs\b", ("_configs",), ".perf:sites", 20
        ),
    ),
    commands=((10, ".perf_cli:from_command"),),
)
