"""A NeMo 2 precision plugin, written for fp8lint's benchmark."""

from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision


def precision_plugin():
    return MegatronMixedPrecision(
        precision="bf16-mixed",
        fp8="hybrid",
        fp8_margin=0,
        fp8_amax_history_len=1024,
        fp8_amax_compute_algo="max",
        fp8_params=True,
    )
