"""MS-AMP: MS-AMP `msamp.initialize(model, optimizer, opt_level=...)`."""

from fp8lint.frameworks.shared.family import Family, PythonReader

FAMILY = Family(
    name="msamp",
    label="MS-AMP",
    summary="MS-AMP `msamp.initialize(model, optimizer, opt_level=...)`",
    python=(PythonReader(r"\bmsamp\b", ("msamp",), ".reader:sites", 50),),
    prefilter=("msamp",),
)
