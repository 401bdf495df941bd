"""NeMo 2 performance scripts: the FP8 recipe chosen by command-line arguments that the script
forwards to `set_primary_perf_configs` / `set_precision_configs`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, parse_file
from fp8lint.model import Framework, Recipe
from fp8lint.settings import RunSettings
from tests.frameworks.python_case import at, bind

CORPUS = (
    Path(__file__).resolve().parents[3]
    / "shared/corpus/real/NVIDIA__NeMo/scripts__performance__llm__pretrain_llama31_405b.py"
)
HEAD = "from ..helpers import set_precision_configs, set_primary_perf_configs\n"
PRIMARY = (
    'recipe = set_primary_perf_configs(recipe, "pre_train", 2, 8, 1, 128, 100, 8, 1, 2, 1, 1, '
    "{extra})\n"
)


parse, one, codes = bind("pretrain.py")


def test_arguments_from_the_command_line_take_its_defaults() -> None:
    extra = "compute_dtype=args.compute_dtype, fp8_recipe=args.fp8_recipe"
    site = one(HEAD + PRIMARY.format(extra=extra))
    assert site.framework == Framework.NEMO2
    assert site.kind == "NeMo 2 performance script set_primary_perf_configs(...)"
    assert site.enabled.value is False and site.enabled.provenance == "default"
    assert site.enabled.key == "--compute_dtype"
    assert "--compute_dtype fp8" in (site.enabled.note or "")
    assert at(site.enabled.span) == (2, 104, 2, 122)
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "preset"
    assert site.recipe.key == "bf16_with_fp8_mixed"
    assert "defaults it to `ds`" in (site.recipe.note or "")
    assert at(site.recipe.span) == (2, 135, 2, 150)
    assert site.amax_history_len.value == 1024
    assert site.tensor_parallel.value == 8 and at(site.tensor_parallel.span) == (2, 75, 2, 76)
    assert site.context_parallel.value == 2
    assert codes(HEAD + PRIMARY.format(extra=extra)) == []


@pytest.mark.parametrize(
    ("name", "recipe", "preset"),
    [
        ("ds", Recipe.DELAYED, "bf16_with_fp8_mixed"),
        ("cs", Recipe.TENSORWISE, "bf16_with_fp8_current_scaling_mixed"),
        ("mxfp8", Recipe.MXFP8, "bf16_with_mxfp8_mixed"),
        ("ss", Recipe.BLOCKWISE, "bf16_with_fp8_subchannel_scaling_mixed"),
    ],
)
def test_each_recipe_name_installs_its_preset(name: str, recipe: Recipe, preset: str) -> None:
    site = one(HEAD + PRIMARY.format(extra=f'compute_dtype="fp8", fp8_recipe="{name}"'))
    assert site.enabled.value is True and site.enabled.provenance == "written"
    assert site.recipe.value is recipe and site.recipe.key == preset


def test_current_scaling_turns_the_bf16_end_layers_off() -> None:
    site = one(HEAD + PRIMARY.format(extra='compute_dtype="fp8", fp8_recipe="cs"'))
    assert site.first_last_layers_bf16.value is False


def test_precision_helper_with_positional_arguments() -> None:
    site = one(HEAD + 'recipe = set_precision_configs(recipe, "fp8", None)\n')
    assert site.kind == "NeMo 2 performance script set_precision_configs(...)"
    assert site.enabled.value is True and at(site.enabled.span) == (2, 40, 2, 45)
    assert site.recipe.value is Recipe.DELAYED and "`fp8_recipe=None`" in (site.recipe.note or "")
    assert site.tensor_parallel.known is False


def test_bf16_and_no_dtype_are_off() -> None:
    assert one(HEAD + 'r = set_precision_configs(recipe, "bf16")\n').enabled.value is False
    site = one(HEAD + PRIMARY.format(extra=""))
    assert site.enabled.value is False and site.enabled.provenance == "default"


def test_unknown_recipe_name_is_invalid() -> None:
    src = HEAD + 'r = set_precision_configs(recipe, "fp8", "delayed")\n'
    assert one(src).recipe.known is False
    assert codes(src) == [("FP8401", 2)]


def test_the_helpers_own_definition_is_not_a_site() -> None:
    assert (
        parse(
            "def set_precision_configs(recipe, compute_dtype, fp8_recipe=None):\n    ...\n"
            'set_precision_configs(r, "fp8")\n'
        )
        == []
    )


def test_published_405b_script_has_a_quiet_site() -> None:
    if not CORPUS.is_file():
        pytest.skip("corpus not present")
    text = CORPUS.read_text()
    sites = parse_file(SourceFile(str(CORPUS), text), "python")
    assert [s.kind for s in sites] == ["NeMo 2 performance script set_primary_perf_configs(...)"]
    site = sites[0]
    assert site.enabled.value is False and site.enabled.key == "--compute_dtype"
    assert site.recipe.value is Recipe.DELAYED
    assert site.tensor_parallel.known is False  # tp_size comes from the per-GPU tables
    diags, _ = lint_text(str(CORPUS), text, "python", RunSettings())
    assert [d for d in diags if d.severity.value in ("warning", "error")] == []
