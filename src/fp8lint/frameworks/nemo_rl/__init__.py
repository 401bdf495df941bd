"""NeMo-RL: NeMo-RL `policy.megatron_cfg.fp8_cfg` and `fp4_cfg`."""

from fp8lint.frameworks.shared.family import Family, Schema

FAMILY = Family(
    name="nemo_rl",
    label="NeMo-RL",
    summary="NeMo-RL `policy.megatron_cfg.fp8_cfg` and `fp4_cfg`",
    schema=Schema("NeMo-RL Megatron FP8/FP4 keys", "NeMo-RL policy config (policy.megatron_cfg)"),
    trees=((80, ".reader:from_tree"),),
)
