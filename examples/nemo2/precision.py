"""NeMo 2 precision plugin: BF16 first/last layers requested, but NeMo 2 keeps 0 of them."""

from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision

precision = MegatronMixedPrecision(
    precision="bf16-mixed",
    fp8="hybrid",
    fp8_recipe="tensorwise",
    first_last_layers_bf16=True,
)
