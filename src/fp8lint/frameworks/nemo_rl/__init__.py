"""NeMo-RL: NeMo-RL `policy.megatron_cfg.fp8_cfg`."""

from fp8lint.frameworks.shared.family import Family

FAMILY = Family(
    name="nemo_rl",
    label="NeMo-RL",
    summary="NeMo-RL `policy.megatron_cfg.fp8_cfg`",
    trees=((80, ".reader:from_tree"),),
)
