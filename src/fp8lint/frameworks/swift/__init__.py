"""ms-swift: ms-swift `megatron sft|pt|rlhf` command lines."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="swift",
    label="ms-swift",
    summary="ms-swift `megatron sft|pt|rlhf` command lines",
    commands=((30, ".reader:from_command"),),
)
