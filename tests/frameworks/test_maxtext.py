"""MaxText YAML configs: `quantization` and the tensor-parallel mesh axes."""

from __future__ import annotations

import json

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.maxtext.config import QUANTIZATIONS, site_from_args
from fp8lint.frameworks.maxtext.surface import FP8_MODES, FlaxDelayedScaling
from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.base import Arg
from fp8lint.model import AmaxAlgo, Fp8Format, Framework, Recipe, make_span

from ..conftest import lint, run_cli

CONFIG = """\
base_config: "base.yml"
model_name: llama2-7b
quantization: "fp8"
ici_tensor_parallelism: 8
remat_policy: full
"""


def sites(text: str, name: str = "llama2_fp8.yml"):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile(name, text), "yaml")


def test_fp8_is_flax_delayed_scaling_with_tp() -> None:
    (site,) = sites(CONFIG)
    assert site.framework == Framework.MAXTEXT
    assert site.enabled.value is True and site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (3, 15)
    assert site.recipe.value is Recipe.DELAYED and site.recipe.written
    assert site.fmt.value is Fp8Format.HYBRID and site.margin.value == 0
    assert site.amax_history_len.value == 1024 and site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.tensor_parallel.value == 8 and site.tensor_parallel.span is not None
    assert site.tensor_parallel.span.line == 4
    assert site.recompute_granularity.value is None  # functional scales: not FP8501
    assert lint("llama2_fp8.yml", CONFIG) == []


@pytest.mark.parametrize(
    ("value", "recipe", "fmt"),
    [
        ("nanoo_fp8", Recipe.DELAYED, Fp8Format.HYBRID),
        ("fp8_nanoo", Recipe.DELAYED, Fp8Format.HYBRID),
        ("fp8_gpu", Recipe.DELAYED, Fp8Format.HYBRID),
        ("te_fp8_delayedscaling", Recipe.DELAYED, Fp8Format.HYBRID),
        ("te_fp8_currentscaling", Recipe.TENSORWISE, Fp8Format.HYBRID),
        ("te_mxfp8", Recipe.MXFP8, Fp8Format.E4M3),
    ],
)
def test_each_fp8_quantization_value(value: str, recipe: Recipe, fmt: Fp8Format) -> None:
    (site,) = sites(CONFIG.replace('"fp8"', value))
    assert site.is_on and site.recipe.value is recipe and site.fmt.value is fmt
    assert lint("x.yml", CONFIG.replace('"fp8"', value)) == []


def test_non_fp8_quantization_is_no_site_and_unknown_fp8_name_is_fp8401() -> None:
    assert sites(CONFIG.replace('"fp8"', '""')) == []
    assert sites(CONFIG.replace('"fp8"', "int8")) == []
    text = CONFIG.replace('"fp8"', "te_fp8_delayed")
    assert [(d.code, d.line) for d in lint("x.yml", text)] == [("FP8401", 3)]


def test_quantization_without_maxtext_keys_is_not_maxtext() -> None:
    assert sites("quantization: fp8\nother: 1\n") == []


def test_site_from_args_for_other_syntaxes() -> None:
    """The shell `key=value` form hands the same Args to `site_from_args`."""
    span = make_span("run.sh", 3, 40, 3, 56, 60, 76)
    tp_span = make_span("run.sh", 3, 57, 3, 81, 77, 101)
    args = {
        "quantization": Arg("quantization", "fp8", span, span),
        "ici_tensor_parallelism": Arg("ici_tensor_parallelism", "8", tp_span, tp_span),
        "dcn_tensor_parallelism": Arg("dcn_tensor_parallelism", 2, tp_span, tp_span),
    }
    site = site_from_args("run.sh", args, span, "MaxText command line")
    assert site is not None and site.is_on and site.is_delayed
    assert site.tensor_parallel.value == 16
    assert site_from_args("run.sh", {}, span, "MaxText command line") is None


def test_fp8_under_qwix_is_on_with_recipe_unknown() -> None:
    text = CONFIG + "use_qwix_quantization: true\n"
    (site,) = sites(text)
    assert site.is_on and site.recipe.known is False and site.amax_history_len.value is None
    assert lint("x.yml", text) == []


def test_surface_defaults_are_the_sites_defaults() -> None:
    (site,) = sites("base_config: base.yml\nquantization: fp8\n")
    flax = surfaces.defaults_of(FlaxDelayedScaling)
    assert site.amax_history_len.value == flax["amax_history_length"]
    assert site.margin.value == flax["margin"]
    assert site.amax_compute_algo.value == AmaxAlgo(flax["amax_compute_algo"])
    dflt = surfaces.defaults("maxtext")
    assert site.tensor_parallel.value == dflt["ici_tensor_parallelism"]
    assert site.tensor_parallel.provenance == "default"
    assert set(FP8_MODES) == set(QUANTIZATIONS)  # the surface's modes are the table's


def test_schema_export_names_the_fp8_keys() -> None:
    result = run_cli("schema", "maxtext")
    assert result.returncode == 0, result.stderr
    properties = json.loads(result.stdout)["properties"]
    assert {"quantization", "ici_tensor_parallelism", "dcn_tensor_parallelism"} <= set(properties)
    assert "te_fp8_delayedscaling" in json.dumps(properties["quantization"])
