"""MaxText `key=value` command lines after `MaxText.train ... base.yml`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Framework, Recipe

from ..conftest import run_cli

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "real"
MAXTEXT_SH = (
    CORPUS / "AI-Hypercomputer__maxtext" / "tests__end_to_end__gpu__test_fp8_gemm_llama2_7b.sh"
)

LEGACY = """\
#!/bin/bash
RUN_NAME=llama2-7b-fp8
python3 -m MaxText.train MaxText/configs/base.yml run_name=$RUN_NAME \\
    model_name=llama2-7b quantization=nanoo_fp8 \\
    ici_tensor_parallelism=4 dcn_tensor_parallelism=2 \\
    steps=10 hardware=gpu
"""


@pytest.mark.skipif(not MAXTEXT_SH.is_file(), reason="needs ../shared/corpus/real")
def test_corpus_maxtext_script_is_a_quiet_site() -> None:
    text = MAXTEXT_SH.read_text()
    (site,) = parse_file(SourceFile(MAXTEXT_SH.name, text), "shell")
    assert site.kind == "MaxText command line (`maxtext.trainers.pre_train.train`)"
    assert site.enabled.value is True
    assert site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (44, 18)
    assert text.splitlines()[43][17:20] == "fp8"
    # `fp8` is Flax's Fp8DirectDotGeneralOp: delayed scaling over a 1024-step amax history
    # ("direct" = real FP8 operands, not current scaling), labelled MaxText like the YAML form
    assert site.framework == Framework.MAXTEXT
    assert site.recipe.value is Recipe.DELAYED
    assert site.recipe.note is not None and "Fp8DirectDotGeneralOp" in site.recipe.note
    assert site.amax_history_len.value == 1024 and site.amax_history_len.provenance == "default"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX and site.margin.value == 0
    assert site.fmt.value is not None and site.fmt.value.value == "hybrid"
    assert site.tensor_parallel.value == 8
    assert site.tensor_parallel.span is not None and site.tensor_parallel.span.line == 57
    assert site.span.line == 41  # `python3 -m ...`
    r = run_cli("check", "--no-cache", "--output-format", "concise", str(MAXTEXT_SH))
    assert r.returncode == 0 and "All checks passed" in r.stdout, r.stdout


def test_legacy_module_nanoo_delayed_and_tp_product() -> None:
    (site,) = parse_file(SourceFile("train.sh", LEGACY), "shell")
    assert site.kind == "MaxText command line (`MaxText.train`)"
    assert site.recipe.value is Recipe.DELAYED
    assert site.amax_history_len.value == 1024 and site.amax_history_len.provenance == "default"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.tensor_parallel.value == 8  # ici 4 x dcn 2
    assert (site.enabled.span.line, site.enabled.span.column) == (4, 39)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("mode", "recipe", "fmt"),
    [
        ("te_fp8_delayedscaling", Recipe.DELAYED, "hybrid"),
        ("te_fp8_currentscaling", Recipe.TENSORWISE, "hybrid"),
        ("te_mxfp8", Recipe.MXFP8, "e4m3"),
        ("fp8_full", None, None),
    ],
)
def test_quantization_modes(mode: str, recipe: Recipe | None, fmt: str | None) -> None:
    text = f"python3 MaxText/train.py MaxText/configs/base.yml quantization={mode}\n"
    (site,) = parse_file(SourceFile("t.sh", text), "shell")
    assert site.recipe.value is recipe
    assert (site.fmt.value.value if site.fmt.value is not None else None) == fmt
    assert site.tensor_parallel.value == 1 and site.tensor_parallel.provenance == "default"


def test_no_fp8_and_unknown_modes() -> None:
    assert (
        parse_file(
            SourceFile("t.sh", "python3 -m MaxText.train b.yml quantization=int8\n"), "shell"
        )
        == []
    )
    assert parse_file(SourceFile("t.sh", "python3 -m MaxText.train b.yml steps=5\n"), "shell") == []
    # a value that does not name FP8 is not an FP8 config (as in the YAML form); an
    # FP8-looking value MaxText does not know is FP8401's
    assert (
        parse_file(SourceFile("t.sh", "python3 -m MaxText.train b.yml quantization=fp9\n"), "shell")
        == []
    )
    (site,) = parse_file(
        SourceFile("t.sh", "python3 -m MaxText.train b.yml quantization=fp8_delayed\n"), "shell"
    )
    assert [n.kind for n in site.invalid] == ["invalid-value"]
    (site,) = parse_file(
        SourceFile("t.sh", "python3 -m MaxText.train b.yml quantization=$Q\n"), "shell"
    )
    assert site.enabled.known is False


def test_legacy_script_findings(tmp_path: Path) -> None:
    (tmp_path / "train.sh").write_text(LEGACY)
    r = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    assert "warning" not in r.stdout and "error" not in r.stdout, r.stdout


@pytest.mark.parametrize(
    ("words", "recipe", "history"),
    [
        ("quantization=fp8_gpu use_qwix_quantization=true", Recipe.DELAYED, 1024),
        ("quantization=fp8_nanoo use_qwix_quantization=true", Recipe.DELAYED, 1024),
        ("quantization=fp8 use_qwix_quantization=true", None, None),
        ("quantization=fp8 use_qwix_quantization=false", Recipe.DELAYED, 1024),
    ],
)
def test_qwix_modes(words: str, recipe: Recipe | None, history: int | None) -> None:
    """Qwix's `fp8_gpu`/`fp8_nanoo` run the Flax delayed-scaling ops; `fp8` under Qwix is Qwix's
    own rule (recipe not modelled).  The old command-line table called `fp8_gpu` unknown and
    `fp8` current scaling."""
    text = f"python3 -m MaxText.train b.yml {words}\n"
    (site,) = parse_file(SourceFile("t.sh", text), "shell")
    assert site.framework == Framework.MAXTEXT and site.is_on and site.invalid == []
    assert site.recipe.value is recipe
    assert site.amax_history_len.value == history


def test_single_dtype_qwix_rules_are_no_site_not_fp8401() -> None:
    for mode in ("fp8_e4m3", "fp8_e5m2"):
        text = f"python3 -m MaxText.train b.yml quantization={mode}\n"
        assert parse_file(SourceFile("t.sh", text), "shell") == []


LOOPED = """\
#!/bin/bash
RECIPES=(fp8 te_mxfp8 int8)
for recipe in "${RECIPES[@]}"; do
  python3 -m MaxText.train MaxText/configs/base.yml run_name=r-$recipe \\
      quantization=${recipe} steps=20
done
"""


def test_a_loop_over_recipes_gives_one_site_per_recipe() -> None:
    sites = parse_file(SourceFile("sweep.sh", LOOPED), "shell")
    assert [(s.enabled.value, s.recipe.value) for s in sites] == [
        (True, Recipe.DELAYED),
        (True, Recipe.MXFP8),
    ], sites  # `int8` is not FP8: that run has no FP8 site


def test_newer_quantization_values_that_are_not_fp8_training_are_quiet() -> None:
    """Issue 19, class 11: MaxText 0.2.5's `serve_fp8_weight` (serving) and `te_no_quant`
    are not FP8 training recipes: no site, and never an FP8401 error."""
    for value in ("serve_fp8_weight", "te_no_quant"):
        text = f"python3 -m MaxText.train base.yml quantization={value} steps=10\n"
        assert parse_file(SourceFile("run.sh", text), "shell") == [], value
        yaml_text = f"base_config: base.yml\nquantization: {value}\nici_tensor_parallelism: 2\n"
        assert parse_file(SourceFile("m.yaml", yaml_text), "yaml") == [], value
