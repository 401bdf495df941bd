"""FP8702: NVFP4 training with random Hadamard transforms, stochastic rounding or 2D weight
scaling switched off.

TE's NVFP4 recipe applies three techniques by default (NVIDIA/TransformerEngine@d0067d0da
`transformer_engine/common/recipe/__init__.py`, `NVFP4BlockScaling`, L507-518 and L595-609):
a 16x16 random Hadamard transform on the Wgrad inputs, stochastic rounding of the gradients
and 16x16 scale blocks for the weights.  `disable_rht`, `disable_stochastic_rounding` and
`disable_2d_quantization` (L558-562, their defaults the `NVTE_NVFP4_DISABLE_*` variables)
switch each off, with no warning.  The NVFP4 paper (arXiv 2509.25149v1, §4.2-4.4, Fig. 4,
App. E.3, E.5) found that removing any one of them worsened the 12B run's loss, and that
smaller or shorter runs may not need every one.  NVIDIA ships configs with them off for short
or post-training runs (NeMo-RL's GRPO NVFP4 recipe, with a dequantized backward; JAX-Toolbox's
50-step MaxText `te_nvfp4_no_rht` example): a warning only for a known long pre-training run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe, Setting
from fp8lint.rule import (
    Example,
    Finding,
    Rule,
    long_fp4_pretraining,
    min_tokens_option,
    term,
    where,
)

# model field -> the technique it switches off, in TE's order
TECHNIQUES = (
    ("nvfp4_disable_rht", "RHT"),
    ("nvfp4_disable_sr", "stochastic rounding"),
    ("nvfp4_disable_2d", "2D weight scaling"),
)

_LAUNCH = (
    "torchrun --nproc-per-node 8 pretrain_gpt.py --fp4-format e2m1 --fp4-recipe nvfp4 \\\n"
    "  --num-layers 32 --first-last-layers-bf16 --num-layers-at-end-in-bf16 4 \\\n"
    "  --train-iters 500000 --global-batch-size 1024 --seq-length 8192\n"
)
_TE = "from transformer_engine.common.recipe import NVFP4BlockScaling\n"
_MAXTEXT = (
    "python3 -m maxtext.trainers.pre_train.train maxtext/configs/base.yml model_name=llama3-8b"
    " \\\n  steps=50 quantization=te_nvfp4_no_rht\n"
)


def _off(setting: Setting[Any]) -> bool:
    return setting.known and setting.value is True


class Nvfp4TechniqueOff(Rule):
    code = "FP8702"
    name = "nvfp4-technique-off"
    severity = Severity.WARNING
    severity_note = (
        "info for a run under `min-tokens` or of unknown length, a fine-tune, or a backward "
        "override"
    )
    summary = "NVFP4 training with RHT, stochastic rounding or 2D weight scaling switched off"
    options = (min_tokens_option(),)
    valid = (
        Example("run.sh", "#!/bin/bash\n" + _LAUNCH),
        Example("on.sh", "#!/bin/bash\nexport NVTE_NVFP4_DISABLE_RHT=0\n" + _LAUNCH),
        Example("recipe.py", _TE + "recipe = NVFP4BlockScaling(disable_rht=False)\n"),
    )
    invalid = (
        Example("rht.sh", "#!/bin/bash\nexport NVTE_NVFP4_DISABLE_RHT=1\n" + _LAUNCH, lines=(2,)),
        Example(
            "sr.sh",
            "#!/bin/bash\nexport NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1\n"
            "export NVTE_NVFP4_DISABLE_2D_QUANTIZATION=1\n" + _LAUNCH,
            lines=(2,),
        ),
        Example("recipe.py", _TE + "recipe = NVFP4BlockScaling(disable_rht=True)\n", lines=(2,)),
        Example("nvfp4_example.sh", "#!/bin/bash\n" + _MAXTEXT, lines=(3,)),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if site.fp4_on is not True or site.active_recipe is not Recipe.NVFP4:
            return
        off = [(getattr(site, f), what) for f, what in TECHNIQUES if _off(getattr(site, f))]
        if not off:
            return
        first = min(off, key=lambda o: o[0].span.start_offset if o[0].span else 0)[0]
        names = [what for _, what in off]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        shown = term(first, first.raw) if first.raw is not None else term(first)
        more = f" and {len(off) - 1} more" if len(off) > 1 else ""
        yield Finding(
            span=where(first, site),
            severity=Severity.WARNING if long_fp4_pretraining(site, options) else Severity.INFO,
            message=f"NVFP4 with {listed} off: {shown}{more}",
            note=(
                "NVFP4's recipe uses RHT on Wgrad inputs, stochastic rounding on gradients and "
                "2D weight scales; removing any one worsened a 12B run (arXiv 2509.25149, Fig. 4)"
            ),
        )
