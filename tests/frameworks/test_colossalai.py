"""ColossalAI Booster plugins built with `use_fp8=` (issue 19, class 10)."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxScope, Fp8Format, Recipe

from ..conftest import lint

SCRIPT = """\
import argparse

from colossalai.booster.plugin import GeminiPlugin, HybridParallelPlugin
from colossalai.booster.plugin import LowLevelZeroPlugin as LLZ

parser = argparse.ArgumentParser()
parser.add_argument("--use_fp8", action="store_true")
args = parser.parse_args()
hybrid = HybridParallelPlugin(tp_size=2, precision="bf16", use_fp8=args.use_fp8)
gemini = GeminiPlugin(precision="bf16", use_fp8=True, fp8_communication=True)
zero = LLZ(stage=2, use_fp8="yes")
comm_only = HybridParallelPlugin(tp_size=2, fp8_communication=True)
"""


def test_each_plugin_with_use_fp8_is_a_current_scaling_site() -> None:
    sites = parse_file(SourceFile("benchmark.py", SCRIPT), "python")
    assert [s.kind for s in sites] == [
        "ColossalAI HybridParallelPlugin(use_fp8=...)",
        "ColossalAI GeminiPlugin(use_fp8=...)",
        "ColossalAI LowLevelZeroPlugin(use_fp8=...)",
    ]  # `fp8_communication` alone compresses collectives: no FP8 GEMM, no site
    hybrid, gemini, zero = sites
    assert hybrid.enabled.value is None and not hybrid.enabled.known  # `args.use_fp8`
    assert gemini.enabled.value is True
    for site in (hybrid, gemini):
        assert site.recipe.value == Recipe.TENSORWISE and site.fmt.value == Fp8Format.HYBRID
        assert site.amax_scope.value == AmaxScope.LOCAL
    assert [n.kind for n in zero.invalid] == ["invalid-value"]  # "yes" is not a bool


def test_a_plugin_of_another_library_is_not_colossalai() -> None:
    text = "from mylib import GeminiPlugin\np = GeminiPlugin(use_fp8=True)\n"
    assert parse_file(SourceFile("x.py", text), "python") == []
    assert [d.code for d in lint("benchmark.py", SCRIPT) if d.code != "FP8401"] == []


def test_use_fp8_with_fp32_precision_is_refused() -> None:
    """ColossalAI's `_LinearFp8` asserts half-precision inputs: `precision="fp32"` with
    `use_fp8=True` fails once the first FP8 linear runs (FP8403, an error)."""
    text = (
        "from colossalai.booster.plugin import LowLevelZeroPlugin\n"
        'p = LowLevelZeroPlugin(stage=1, precision="fp32", use_fp8=True)\n'
    )
    assert [(d.code, d.severity.value) for d in lint("t.py", text)] == [("FP8403", "error")]
    ok = text.replace('"fp32"', '"bf16"')
    assert lint("t.py", ok) == []
