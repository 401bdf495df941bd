"""Lightning with Transformer Engine: the precision strings and `TransformerEnginePrecision`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, mentions_fp8, parse_file
from fp8lint.model import AmaxAlgo, AmaxScope, Fp8Format, Framework, Recipe
from fp8lint.settings import RunSettings
from tests.conftest import run_cli
from tests.frameworks.python_case import at, bind

CORPUS = Path(__file__).resolve().parents[3] / "shared/corpus/real/Lightning-AI__pytorch-lightning"
PLUGIN = "from lightning.fabric.plugins import TransformerEnginePrecision\n"


parse, one, codes = bind("train.py")


@pytest.mark.parametrize("owner", ["L.Fabric", "L.Trainer"])
@pytest.mark.parametrize("precision", ["transformer-engine", "transformer-engine-float16"])
def test_precision_string_is_te_default_delayed_scaling(owner: str, precision: str) -> None:
    src = f'import lightning as L\nrun = {owner}(devices=8, precision="{precision}")\n'
    site = one(src)
    assert site.framework == Framework.TE
    assert site.kind == f'Lightning {owner}(precision="{precision}")'
    assert site.enabled.value is True and site.enabled.written
    start = src.splitlines()[1].index('"') + 1
    assert at(site.enabled.span) == (2, start, 2, start + len(precision) + 2)
    assert site.recipe.value is Recipe.DELAYED and site.recipe.default_of == "Lightning"
    assert site.fmt.value is Fp8Format.HYBRID and site.fmt.default_of == "Transformer Engine"
    assert site.margin.value == 0 and site.amax_history_len.value == 1024
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.amax_scope.value is AmaxScope.WORLD and site.amax_scope.default_of == "Lightning"
    assert site.output_head_fp8.known is False
    assert codes(src) == []


def test_other_precisions_and_other_trainers_are_not_sites() -> None:
    assert parse('import lightning as L\nf = L.Fabric(precision="bf16-mixed")\n') == []
    other = 'from transformers import Trainer\nt = Trainer(precision="transformer-engine")\n'
    assert parse(other) == []


def test_plugin_recipe_mapping_is_read_as_delayed_scaling() -> None:
    src = PLUGIN + (
        "plugin = TransformerEnginePrecision(weights_dtype=torch.bfloat16, "
        'recipe={"fp8_format": "HYBRID", "amax_history_len": 1, "amax_compute_algo": '
        '"most_recent"})\n'
    )
    site = one(src)
    assert site.kind == "Lightning TransformerEnginePrecision(...)"
    assert site.recipe.value is Recipe.DELAYED and site.recipe.written
    assert site.amax_history_len.value == 1 and site.amax_history_len.written
    line = src.splitlines()[1]
    start = line.index('"amax_history_len"') + 1
    assert at(site.amax_history_len.span) == (2, start + 20, 2, start + 21)
    assert site.amax_compute_algo.value is AmaxAlgo.MOST_RECENT
    assert site.margin.value == 0 and site.margin.provenance == "default"
    assert ("FP8101", 2) in codes(src)


def test_plugin_without_recipe_is_te_default() -> None:
    site = one(PLUGIN + "p = TransformerEnginePrecision(weights_dtype=torch.float16)\n")
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "default"
    assert at(site.span) == (2, 5, 2, 60)


def test_lower_case_format_name_is_invalid() -> None:
    call = 'TransformerEnginePrecision(weights_dtype=w, recipe={"fp8_format": "hybrid"})'
    src = PLUGIN + f"p = {call}\n"
    assert ("FP8401", 2) in codes(src)


def test_te_recipe_object_is_the_recipes_own_site() -> None:
    site = one(
        PLUGIN
        + "from transformer_engine.common.recipe import DelayedScaling\n"
        + "p = TransformerEnginePrecision(weights_dtype=w, recipe=DelayedScaling(margin=1))\n"
    )
    assert site.kind == "Transformer Engine DelayedScaling(...)" and site.margin.value == 1


def test_precision_string_passes_the_prefilter(tmp_path: Path) -> None:
    assert mentions_fp8(b'trainer = L.Trainer(precision="transformer-engine")')
    assert mentions_fp8(b"p = TransformerEnginePrecision(weights_dtype=w)")
    (tmp_path / "train.py").write_text(
        'import lightning as L\ntrainer = L.Trainer(precision="transformer-engine")\n'
    )
    r = run_cli("show", str(tmp_path / "train.py"), "--output-format", "json")
    kinds = [s["kind"] for s in json.loads(r.stdout)]
    assert kinds == ['Lightning L.Trainer(precision="transformer-engine")']


def test_published_fabric_fp8_example_keeps_its_torchao_site_quiet() -> None:
    files = sorted(CORPUS.glob("*.py")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip("corpus not present")
    for path in files:
        text = path.read_text()
        sites = parse_file(SourceFile(str(path), text), "python")
        assert [s.framework for s in sites] == [Framework.TORCHAO]
        diags, _ = lint_text(str(path), text, "python", RunSettings())
        assert [d for d in diags if d.severity.value in ("warning", "error")] == []


def test_unknown_mapping_key_is_an_ignored_setting() -> None:
    # as in Lightning's own test_transformer_engine.py: {"foo": 0, "fp8_format": "HYBRID"}
    call = 'TransformerEnginePrecision(weights_dtype=w, recipe={"foo": 0, "fp8_format": "HYBRID"})'
    src = PLUGIN + f"precision = {call}\n"
    site = one(src)
    assert [(n.kind, n.key) for n in site.notes] == [("ignored", "foo")]
    assert at(site.notes[0].span) == (2, 65, 2, 73)
    assert site.fmt.value is Fp8Format.HYBRID and site.invalid == []
    assert codes(src) == [("FP8402", 2)]
