"""torchao's `quantize_` configs (pytorch/ao @36027d82): the ones that quantize a trained
model for inference, and the low-precision training ops for MoE models.

- inference (post-training) quantization, `torchao/quantization/quant_api.py`:
  `Float8DynamicActivationFloat8WeightConfig` (E4M3 activations and weights, per-tensor unless
  `granularity=PerRow()`), `Float8WeightOnlyConfig`, `Float8DynamicActivationInt4WeightConfig`;
  `torchao/prototype/mx_formats/inference_workflow.py`: `MXDynamicActivationMXWeightConfig`,
  `NVFP4DynamicActivationNVFP4WeightConfig`, `NVFP4WeightOnlyConfig`.  A site that says so:
  no training rule reads it (its recipe is not modelled).
- training, `torchao/prototype/moe_training/config.py`: `Float8TrainingOpConfig` (grouped
  GEMMs in FP8, its linear override `float8_linear_recipe`, default `rowwise`),
  `MXFP8TrainingOpConfig` (MXFP8 linears and grouped GEMMs); `nvfp4_training.py`:
  `NVFP4TrainingConfig` (pytorch/ao@36027d82 `moe_training/nvfp4_training/nvfp4_training.py`
  L71: every `nn.Linear` the filter accepts runs its three GEMMs in NVFP4; no recipe knob);
  before 0.17, `MXLinearConfig` (its element type decides: `torchao.mx`) and
  `MoETrainingConfig`.  `MXLinearConfig.from_recipe_name(...)` and the op configs'
  `from_recipe(...)` are sites of their own (`torchao.mx`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from fp8lint.frameworks.shared.base import default, written
from fp8lint.frameworks.shared.torchao_recipes import RECIPES, implied_format
from fp8lint.frameworks.torchao import mx
from fp8lint.model import Fp8Site, Framework, Recipe, Setting, SourceNote

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context

LABEL = "torchao"
INFERENCE = frozenset(
    {
        "Float8DynamicActivationFloat8WeightConfig",
        "Float8WeightOnlyConfig",
        "Float8DynamicActivationInt4WeightConfig",
        "MXDynamicActivationMXWeightConfig",
        "NVFP4DynamicActivationNVFP4WeightConfig",
        "NVFP4WeightOnlyConfig",
        # the names these had up to torchao 0.14.1 (renamed 2025-12-01), and the semi-sparse
        # config of 0.16 and earlier
        "MXFPInferenceConfig",
        "NVFP4InferenceConfig",
        "Float8DynamicActivationFloat8SemiSparseWeightConfig",
    }
)
TRAINING: dict[str, Recipe | None] = {
    "Float8TrainingOpConfig": Recipe.ROWWISE,
    "MXFP8TrainingOpConfig": Recipe.MXFP8,
    "NVFP4TrainingConfig": Recipe.NVFP4,
    # torchao 0.14-0.16: `MXLinearConfig` (MXFP8 by default, `elem_dtype=float8_e4m3fn`) and
    # `MoETrainingConfig` (`scaling_type` fp8_rowwise by default, or mxfp8)
    "MXLinearConfig": None,  # read by `torchao.mx`
    "MoETrainingConfig": None,
}
NAMES = INFERENCE | frozenset(TRAINING)
# the configs that convert every linear the filter accepts, not only an MoE model's
DENSE = frozenset({"NVFP4TrainingConfig", "MXLinearConfig"})
_INFERENCE_NOTE = "post-training quantization for inference (`quantize_`), not FP8 training"


def _torchao(module: str) -> bool:
    return "torchao" in module


def sites(ctx: Context) -> list[Fp8Site]:
    """One site per construction of one of the configs, torchao's however imported."""
    found: list[Fp8Site] = []
    names = set(NAMES) | {a for a, real in ctx.facts.aliases.items() if real in NAMES}
    for name in sorted(names):
        for call in ctx.facts.calls.get(name, ()):
            tgt = ctx.target(call, NAMES, NAMES, dict.fromkeys(NAMES, _torchao))
            if tgt is None or not _torchao(tgt.origin):
                continue
            span = ctx.span(call)
            values: dict[str, Setting[Any]] = {
                "enabled": default(True, LABEL, tgt.name, span, None),
            }
            invalid: list[SourceNote] = []
            if tgt.name == mx.MX_CONFIG:
                kind = f"torchao {tgt.name}(...) (low-precision training)"
                read, invalid = mx.linear_config(ctx, call, span)
                values.update(read)
            elif tgt.name in INFERENCE:
                kind = f"torchao {tgt.name}(...) (inference quantization)"
                values["recipe"] = Setting[Any].model_construct(
                    known=False, key=tgt.name, note=_INFERENCE_NOTE
                )
            else:
                scope = "" if tgt.name in DENSE else "MoE "
                kind = f"torchao {tgt.name}(...) ({scope}low-precision training)"
                recipe = TRAINING[tgt.name]
                values["recipe"] = (
                    default(recipe, LABEL, tgt.name, span, None)
                    if recipe is not None
                    else Setting[Any].model_construct(
                        known=False, key=tgt.name, note="its scaling_type decides"
                    )
                )
                chosen = ctx.keywords(call).get("float8_linear_recipe")
                if recipe is Recipe.ROWWISE and chosen is not None:
                    name_ = chosen.arg.value if chosen.arg.known else None
                    values["recipe"] = written(chosen.arg, RECIPES.get(str(name_)))
                fmt = implied_format(values["recipe"])
                if fmt is not None and recipe is not Recipe.NVFP4:  # FP4 only: no FP8 format
                    values["fmt"] = fmt
            found.append(
                Fp8Site.model_construct(
                    path=ctx.file.path,
                    framework=Framework.TORCHAO,
                    kind=kind,
                    span=span,
                    invalid=invalid,
                    **cast("dict[str, Any]", values),  # keys are Setting fields
                )
            )
    return [*found, *mx.factory_sites(ctx)]
