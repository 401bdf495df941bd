"""A Transformer Engine training step, written for fp8lint's benchmark."""

import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling, Format

fp8_recipe = DelayedScaling(
    fp8_format=Format.HYBRID,
    amax_history_len=1024,
    amax_compute_algo="max",
)


def train_step(model, batch, optimizer):
    with te.fp8_autocast(enabled=True, fp8_recipe=fp8_recipe):
        loss = model(batch).float().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach()
