"""ColossalAI: the Booster plugins' `use_fp8`."""

from fp8lint.frameworks.shared.family import Family, PythonReader

FAMILY = Family(
    name="colossalai",
    label="ColossalAI",
    summary="ColossalAI Booster plugins' `use_fp8=` (HybridParallel, MoeHybridParallel, "
    "Gemini, LowLevelZero)",
    python=(
        PythonReader(
            r"\b(?:MoeHybridParallel|HybridParallel|Gemini|LowLevelZero)Plugin\b",
            ("use_fp8",),
            ".reader:sites",
            15,
        ),
    ),
)
