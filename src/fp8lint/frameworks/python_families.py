"""The Python families beyond the five core ones (`python_sites`): each reads its own calls
from the parsed file and returns its sites.

* `olmo_core`: OLMo-core's `Float8Config(...)` (torchao underneath);
* `nemo_perf`: NeMo 2's `scripts/performance` launchers, whose recipe is chosen by
  command-line arguments forwarded to `set_primary_perf_configs` / `set_precision_configs`;
* `torchtitan_py`: torchtitan's Python `Float8LinearConverter.Config(...)` (config registry);
* `lightning`: Lightning's `precision="transformer-engine"` and `TransformerEnginePrecision`;
* `msamp`: MS-AMP's `msamp.initialize(model, optimizer, opt_level=...)`;
* `te_default`: a TE autocast that names no recipe (TE's default recipe applies).

This module is imported with `python_sites` (after the byte prefilter), so it holds only the
words that make a file worth parsing for these families; the families themselves (and
libcst) are imported when a file has one of the words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context, Target
    from fp8lint.model import Fp8Site

# what each family's sites start from (a regular-expression alternation per family)
WORDS: dict[str, str] = {
    "olmo_core": r"\bFloat8Config\b",
    "nemo_perf": r"\bset_(?:primary_perf|precision)_configs\b",
    "torchtitan_py": r"\bFloat8LinearConverter\b",
    "lightning": r"transformer-engine|\bTransformerEnginePrecision\b",
    "msamp": r"\bmsamp\b",
    "te_default": r"\bfp8_autocast\b|\bte\.autocast\b|\btransformer_engine\.pytorch\b",
}
PATTERN = "|".join(WORDS.values())


def sites(ctx: Context, targets: list[Target]) -> list[Fp8Site]:
    """Every site these families find in the file (`targets`: the core families' calls,
    which include the TE autocasts)."""
    text = ctx.file.text
    out: list[Fp8Site] = []
    if "Float8Config" in text:
        from fp8lint.frameworks.olmo_core import reader as olmo_core

        out.extend(olmo_core.sites(ctx))
    if "_configs" in text:
        from fp8lint.frameworks.nemo2 import perf as nemo_perf

        out.extend(nemo_perf.sites(ctx))
    if "Float8LinearConverter" in text:
        from fp8lint.frameworks.torchtitan import python as torchtitan_py

        out.extend(torchtitan_py.sites(ctx))
    if "transformer-engine" in text or "TransformerEnginePrecision" in text:
        from fp8lint.frameworks.lightning import reader as lightning

        out.extend(lightning.sites(ctx))
    if "msamp" in text:
        from fp8lint.frameworks.msamp import reader as msamp

        out.extend(msamp.sites(ctx))
    if "autocast" in text:
        from fp8lint.frameworks.te import default as te_default
        from fp8lint.frameworks.te import python as te

        out.extend(te_default.sites(ctx, [t for t in targets if t.name in te.AUTOCASTS]))
    return out
