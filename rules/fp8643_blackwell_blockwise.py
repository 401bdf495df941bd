"""FP8643: blockwise FP8 on a Blackwell GPU that the file names (upstream-2026 §3 rows 23-24).

The GPU comes only from a setting that names the hardware (`Fp8Site.gpu`: the performance
launchers' `-g/--gpu`), never from a recipe's or a file's name; when no GPU is written, or one
`fp8lint.rule.gpu_sm` does not list, the rule is silent.

On SM 10.x and newer TE has no blockwise GEMM: it emulates the recipe with MXFP8
(NVIDIA/TransformerEngine@d0067d0da `transformer_engine/pytorch/csrc/extensions/gemm.cpp`
L312, L577), whose E8M0 scales are powers of two, and its blockwise quantizers refuse other
scales there ("On Blackwell and newer, the FP8 block scaling recipe is emulated with MXFP8,
which requires using power of two scaling factors", `common/transpose/
quantize_transpose_vector_blockwise.cu` L533-536, `quantize_transpose_square_blockwise.cu`
L498-501).  `NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1` turns the power-of-two scales off
(`common/recipe/__init__.py` L429-434), so TE stops the run at its first quantization: an
error (miles PR #1337 pins the variable to 0 on Blackwell for this reason).  With MoE, SkyRL
PR #1898 reports that experts receiving no tokens give all-zero gradient blocks whose
emulated scales overflowed the gradient norm, and moved its Blackwell runs to MXFP8: a
warning.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Example, Finding, Rule, gpu_sm, term, where

BLACKWELL = frozenset({"sm100", "sm120"})  # TE's check is `sm_arch() >= 100`
LAUNCH = "python scripts/performance/setup_experiment.py -m qwen -mr qwen3_30b_a3b "
FP32_SCALES = "export NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1\n"


class BlackwellBlockwise(Rule):
    code = "FP8643"
    name = "blackwell-blockwise"
    severity = Severity.WARNING
    severity_note = "error with `NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1`, which TE refuses"
    summary = "Blockwise FP8 on a Blackwell GPU: MoE, or FP32 block scales"
    valid = (
        Example("hopper.sh", LAUNCH + "-g h100 -c fp8_sc --num_moe_experts 128\n"),
        Example("mx.sh", LAUNCH + "-g b200 -c fp8_mx --num_moe_experts 128\n"),
        Example("dense.sh", LAUNCH + "-g b200 -c fp8_sc\n"),
        Example("unknown.sh", FP32_SCALES + LAUNCH + "-g $GPU -c fp8_sc --num_moe_experts 128\n"),
        Example(
            "pow2.sh",
            FP32_SCALES.replace("=1", "=0") + "python scripts/performance/setup_experiment.py "
            "-m llama -mr llama3_8b -g gb200 -c fp8_sc\n",
        ),
    )
    invalid = (
        Example("moe.sh", LAUNCH + "-g b200 -c fp8_sc --num_moe_experts 128\n", lines=(1,)),
        Example(
            "fp32.sh",
            FP32_SCALES + "python scripts/performance/setup_experiment.py "
            "-m llama -mr llama3_8b -g gb200 -c fp8_sc\n",
            lines=(1,),
        ),
        Example(
            "nemo.sh",
            FP32_SCALES
            + "python scripts/performance/llm/pretrain_llama3_8b.py -g b200 -c fp8 -fr ss\n",
            lines=(1,),
        ),
    )

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        if not site.is_on or site.recipe.value is not Recipe.BLOCKWISE:
            return
        if gpu_sm(site) not in BLACKWELL:
            return
        gpu = ((where(site.gpu, site), f"GPU {term(site.gpu)}"),)
        fp32 = site.block_scaling_fp32_scales
        if fp32.value is True:
            yield Finding(
                span=where(fp32, site),
                severity=Severity.ERROR,
                message=f"blockwise FP8 with FP32 block scales on {site.gpu.value}: {term(fp32)}",
                note=(
                    "on Blackwell TE emulates blockwise with MXFP8 and refuses non-power-of-two "
                    "scales (miles PR #1337)"
                ),
                related=gpu,
            )
        experts = site.num_experts.value
        if isinstance(experts, int) and experts > 1:
            yield Finding(
                span=where(site.recipe, site),
                message=f"blockwise FP8 for an MoE model on {site.gpu.value}: {term(site.recipe)}",
                note=(
                    "emulated with MXFP8 scales on Blackwell, experts without tokens overflowed "
                    "the grad norm; prefer mxfp8 (SkyRL PR #1898)"
                ),
                related=gpu,
            )
