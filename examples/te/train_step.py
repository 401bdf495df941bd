"""A Transformer Engine training step whose amax group leaves out tensor-parallel ranks."""

import transformer_engine.pytorch as te
from megatron.core import parallel_state as mpu
from transformer_engine.common.recipe import DelayedScaling, Format

fp8_recipe = DelayedScaling(
    fp8_format=Format.HYBRID,
    amax_history_len=1024,
    amax_compute_algo="max",
)


def step(model, batch):
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe,
                         fp8_group=mpu.get_data_parallel_group()):
        return model(batch)
