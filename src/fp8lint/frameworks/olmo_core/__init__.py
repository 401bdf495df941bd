"""OLMo-core: OLMo-core `Float8Config(...)` and its cookbook's `float8_enabled`."""

from fp8lint.frameworks.shared.family import Family, PythonReader

FAMILY = Family(
    name="olmo_core",
    label="OLMo-core",
    summary="OLMo-core `Float8Config(...)` and `configure_train_module(float8_enabled=...)`",
    python=(
        PythonReader(r"\bFloat8Config\b", ("Float8Config",), ".reader:sites", 10),
        PythonReader(
            r"\bconfigure_train_module\b", ("float8_enabled",), ".reader:cookbook_sites", 11
        ),
    ),
)
