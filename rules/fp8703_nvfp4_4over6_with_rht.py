"""FP8703: NVFP4 4over6 or row-scaled activations while the random Hadamard transform is on.

TE builds the NVFP4 quantizer of an activation (a forward input) with the random Hadamard
transform unless `disable_rht` (`NVTE_NVFP4_DISABLE_RHT=1`): `fp4_quant_fwd_inp` takes
`random_hadamard_transform=not self.disable_rht`, weights never take it
(NVIDIA/TransformerEngine@d0067d0da6cb01811b8072a7d304f0e00344ce2b
`transformer_engine/common/recipe/__init__.py` L558, L595-604).  Two activation options
refuse that transform:

- 4over6 (`NVTE_NVFP4_4OVER6`, L564: the text, one of `none`, `weights`, `activations`,
  `all`, asserted at L582-584): with `activations` or `all` the activation quantizer uses
  4over6, and `NVFP4BlockScalingRecipeState` raises `ValueError("NVFP4 4over6 quantization
  does not support RHT.")` when it makes it (`transformer_engine/pytorch/quantization.py`
  L1704-1715); the C++ quantizer checks it again (`pytorch/csrc/quantizer.cpp` L2561-2562).
  `weights` is fine: the weight quantizer has no RHT.  Since v2.17 (the variable is new
  there; older releases do not read it).
- row-scaled activations (`NVTE_NVFP4_ROW_SCALED_ACTIVATION=1`, L563): the forward
  activation quantizers get `row_scaled_nvfp4` (`quantization.py` L1738-1742) and the first
  quantization fails `NVTE_CHECK(!this->with_rht, ...)` (`quantizer.cpp` L2571-2573).  Since
  v2.16.

Both are refusals, so the rule is an error.  Only a launch that writes both values is
checked: a variable the script does not write may be set by the job's environment, so RHT
is on here only for a written `NVTE_NVFP4_DISABLE_RHT` other than `1`.  NVIDIA's NeMo-RL
per-token NVFP4 recipe sets row-scaled activations with `NVTE_NVFP4_DISABLE_RHT=1`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe, Setting
from fp8lint.rule import Example, Finding, Rule, targets, term, where

# the 4over6 scopes that reach an activation's quantizer (quantization.py L1704-1710)
ACTIVATION_SCOPES = ("activations", "all")

_LAUNCH = "torchrun pretrain_gpt.py --fp4-format e2m1 --fp4-recipe nvfp4 --num-layers 32\n"


class Nvfp4FourOverSixWithRht(Rule):
    code = "FP8703"
    name = "nvfp4-4over6-with-rht"
    severity = Severity.ERROR
    summary = "NVFP4 4over6 on activations, or row-scaled activations, with RHT on (TE refuses)"
    valid = (
        Example(
            "no_rht.sh",
            "export NVTE_NVFP4_4OVER6=all\nexport NVTE_NVFP4_DISABLE_RHT=1\n" + _LAUNCH,
        ),
        Example(
            "weights.sh",
            "export NVTE_NVFP4_4OVER6=weights\nexport NVTE_NVFP4_DISABLE_RHT=0\n" + _LAUNCH,
        ),
        # RHT unknown: the job's environment may disable it
        Example("unknown.sh", "export NVTE_NVFP4_ROW_SCALED_ACTIVATION=1\n" + _LAUNCH),
        Example(
            "pertoken.sh",
            "export NVTE_NVFP4_ROW_SCALED_ACTIVATION=1\nexport NVTE_NVFP4_DISABLE_RHT=1\n"
            "export NVTE_NVFP4_DISABLE_2D_QUANTIZATION=1\n"
            "export NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1\n" + _LAUNCH,
        ),
    )
    invalid = (
        Example(
            "four_over_six.sh",
            "export NVTE_NVFP4_DISABLE_RHT=0\nexport NVTE_NVFP4_4OVER6=activations\n" + _LAUNCH,
            lines=(2,),
        ),
        Example(
            "row_scaled.sh",
            "export NVTE_NVFP4_DISABLE_RHT=0\nexport NVTE_NVFP4_ROW_SCALED_ACTIVATION=1\n"
            + _LAUNCH,
            lines=(2,),
        ),
        Example(
            "bridge.sh",
            "export NVTE_NVFP4_DISABLE_RHT=0\nexport NVTE_NVFP4_4OVER6=all\n"
            "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
            "mixed_precision=bf16_with_nvfp4_mixed\n",
            lines=(2,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.active_recipe is not Recipe.NVFP4:
            return
        rht = site.nvfp4_disable_rht
        if not (rht.known and rht.value is False):
            return  # RHT off, or not known to be on
        target = targets(options)
        scope, row = site.nvfp4_4over6, site.nvfp4_row_scaled
        if target.has("transformer-engine 2.17") and scope.known:
            if scope.value in ACTIVATION_SCOPES:
                yield Finding(
                    span=where(scope, site),
                    message=f"NVFP4 4over6 {_term(scope)} with RHT on ({_term(rht)})",
                    note="TE refuses 4over6 on activations with the random Hadamard transform "
                    "(quantization.py L1715): set `NVTE_NVFP4_DISABLE_RHT=1`",
                )
        if target.has("transformer-engine 2.16") and row.known and row.value is True:
            yield Finding(
                span=where(row, site),
                message=f"NVFP4 row-scaled activations {_term(row)} with RHT on ({_term(rht)})",
                note="TE refuses row-scaled NVFP4 with the random Hadamard transform "
                "(quantizer.cpp L2573): set `NVTE_NVFP4_DISABLE_RHT=1`",
            )


def _term(setting: Setting[Any]) -> str:
    """A variable as the launch writes it (`NVTE_NVFP4_DISABLE_RHT` 0), not TE's reading."""
    return term(setting, setting.raw if setting.raw is not None else None)
