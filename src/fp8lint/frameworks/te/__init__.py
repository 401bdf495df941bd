"""Transformer Engine: TE recipes (`DelayedScaling`, `Float8CurrentScaling`, `MXFP8BlockScaling`,
`Float8BlockScaling`, `NVFP4BlockScaling`, `CustomRecipe`), autocasts and amax groups in Python;
debug-tool and precision YAML.
"""

from fp8lint.frameworks.shared.family import Family, PythonReader, Schema

FAMILY = Family(
    name="te",
    label="Transformer Engine",
    summary=(
        "TE recipes (`DelayedScaling`, `Float8CurrentScaling`, `MXFP8BlockScaling`, "
        "`Float8BlockScaling`, `NVFP4BlockScaling`, `CustomRecipe`), autocasts and amax groups"
        " in Python;"
        " debug-tool and precision YAML"
    ),
    schema=Schema("Transformer Engine recipe keywords", "DelayedScaling(...) and siblings"),
    trees=(
        (110, ".debug:from_tree"),
        (120, ".debug:from_precision_config"),
    ),
    python=(
        PythonReader(
            r"\bfp8_autocast\b|\bte\.autocast\b|\btransformer_engine\.pytorch\b",
            ("autocast",),
            ".default:from_context",
            60,
        ),
    ),
    prefilter=("DelayedScaling", "NVFP4", "te.autocast", "CustomRecipe"),
    upper_case_format=True,
)
