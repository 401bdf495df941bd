"""Megatron-Bridge: Megatron-Bridge `MixedPrecisionConfig`, its presets, and its launch commands."""

from fp8lint.frameworks.shared.family import Family, PythonReader, Schema

FAMILY = Family(
    name="bridge",
    label="Megatron-Bridge",
    summary="Megatron-Bridge `MixedPrecisionConfig`, its presets, and its launch commands",
    schema=Schema("Megatron-Bridge MixedPrecisionConfig", "its fields"),
    python=(
        PythonReader(
            r"\b_perf_precision\b|\bget_precision_config\b",
            ("_perf_precision", "get_precision_config"),
            ".python:perf_sites",
            25,
        ),
    ),
    commands=((20, ".cli:from_command"),),
    scripts=((20, ".cli:from_script"),),
    # library recipes that set FP8 under a name without an FP8 word (`cli.HIDDEN_PRESETS`)
    prefilter=("nemotronh_", "nemotron_nano_12b_v2", "low_precision_pretrain"),
)
