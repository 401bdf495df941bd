"""OLMo-core: OLMo-core `Float8Config(...)`."""

from fp8lint.frameworks.shared.family import Family, PythonReader

FAMILY = Family(
    name="olmo_core",
    label="OLMo-core",
    summary="OLMo-core `Float8Config(...)`",
    python=(PythonReader(r"\bFloat8Config\b", ("Float8Config",), ".reader:sites", 10),),
)
