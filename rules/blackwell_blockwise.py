"""Blockwise FP8 on a Blackwell GPU the file names: the check for upstream-2026 §3 rows 23-24,
kept out of the catalog (reserved code FP8643) until a reader fills `Fp8Site.gpu`; no family
does yet, so no config can show it and the catalog's examples could not be flagged.

On SM 10.x and newer TE emulates the blockwise recipe with MXFP8, whose E8M0 scales are powers
of two: TE's blockwise quantizers refuse non-power-of-two scales there with "On Blackwell and
newer, the FP8 block scaling recipe is emulated with MXFP8, which requires using power of two
scaling factors" (NVIDIA/TransformerEngine@d0067d0da
`transformer_engine/common/transpose/quantize_transpose_vector_blockwise.cu` L533-536 and
`quantize_transpose_square_blockwise.cu` L498-501).  `NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1`
turns the power-of-two scales off (`common/recipe/__init__.py` L429-434), so it stops the run
at its first quantization: an error (miles PR #1337 sets it to 0 on Blackwell).  With MoE,
SkyRL PR #1898 reports that experts receiving no tokens give all-zero gradient blocks whose
emulated scales overflow the gradient norm, and moved Blackwell runs to MXFP8: a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

from fp8lint.diagnostics import Severity
from fp8lint.model import Fp8Site, Recipe
from fp8lint.rule import Finding, gpu_sm, term, where

CODE = "FP8643"
BLACKWELL = frozenset({"sm100", "sm120"})  # TE's check is `sm_arch() >= 100`


def findings(site: Fp8Site) -> Iterator[Finding]:
    """The findings for one site: blockwise FP8 on, and the file names a Blackwell GPU."""
    if not site.is_on or site.recipe.value is not Recipe.BLOCKWISE:
        return
    sm = gpu_sm(site)
    if sm not in BLACKWELL:
        return
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
            related=((where(site.gpu, site), f"GPU {term(site.gpu)}"),),
        )
    experts = site.num_experts.value
    if isinstance(experts, int) and experts > 1:
        yield Finding(
            span=where(site.recipe, site),
            severity=Severity.WARNING,
            message=f"blockwise FP8 for an MoE model on {site.gpu.value}: {term(site.recipe)}",
            note=(
                "emulated with MXFP8 scales on Blackwell, experts without tokens overflowed "
                "the grad norm; prefer mxfp8 (SkyRL PR #1898)"
            ),
            related=((where(site.gpu, site), f"GPU {term(site.gpu)}"),),
        )
