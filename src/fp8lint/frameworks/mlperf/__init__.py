"""NVIDIA MLPerf config scripts: NVIDIA MLPerf `config_*.sh` exports."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="mlperf",
    label="NVIDIA MLPerf config scripts",
    summary="NVIDIA MLPerf `config_*.sh` exports",
    scripts=((10, ".reader:from_script"),),
)
