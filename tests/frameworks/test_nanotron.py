"""nanotron FP8 branch: `model.dtype: float8`, per-module `fp8.model[]` tensor recipes."""

from __future__ import annotations

import json

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.nanotron.surface import Fp8LmLinearRecipe, Fp8Meta
from fp8lint.frameworks.shared import surfaces
from fp8lint.model import AmaxAlgo, Fp8Format, Framework, Recipe

from ..conftest import lint, run_cli

HEAD = "model:\n  dtype: float8\n  make_vocab_size_divisible_by: 1\n"
DEFAULT = HEAD + (
    "fp8:\n  resid_dtype: float32\n  accum_dtype: bfloat16\n  optim:\n"
    "    master_weight_dtype: float32\n    accum_dtype: float32\n"
    "    exp_avg_dtype: float32\n    exp_avg_sq_dtype: float32\n"
)


def _tensor(name: str, dtype: str, interval: int, margin: int = 0) -> str:
    return (
        f"    {name}:\n      dtype: {dtype}\n      margin: {margin}\n      interval: {interval}\n"
    )


def module_config(interval: int, margin: int = 0) -> str:
    return (
        HEAD
        + "fp8:\n  resid_dtype: float32\n  accum_dtype: float16\n  model:\n"
        + "  - module_name: model.decoder.0.mlp.down_proj\n    accum_dtype: float16\n"
        + _tensor("input", "fp8e4m3", interval, margin)
        + _tensor("weight", "fp8e4m3", 1)
        + "    bias: float16\n"
        + _tensor("input_grad", "fp8e5m2", interval)
        + _tensor("weight_grad", "fp8e5m2", 1)
        + _tensor("output_grad", "fp8e5m2", interval)
    )


def sites(text: str):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile("nanotron.yaml", text), "yaml")


def test_float8_without_module_recipes_uses_fp8lm_recipe() -> None:
    (site,) = sites(DEFAULT)
    assert site.framework == Framework.NANOTRON
    assert site.enabled.value is True and site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (2, 10)
    assert site.recipe.value is Recipe.DELAYED and site.margin.value == 0
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.amax_history_len.value == 16 and site.amax_history_len.provenance == "default"
    assert site.fmt.value is Fp8Format.HYBRID
    optim = [o for o in site.precision_overrides if o.feature == "fp8.optim"]
    assert [(o.tensors, o.precision, o.span.line) for o in optim] == [
        (("master_weight",), "float32", 8),
        (("exp_avg",), "float32", 10),
        (("exp_avg_sq",), "float32", 11),
    ]
    assert lint("nanotron.yaml", DEFAULT) == []


def test_module_recipes_are_read_per_tensor_with_spans() -> None:
    text = module_config(4)
    (site,) = sites(text)
    per_tensor = {o.tensors[0]: o for o in site.precision_overrides}
    assert per_tensor["input"].layers == "model.decoder.0.mlp.down_proj"
    assert per_tensor["input"].precision == "fp8e4m3 delayed, window 4, margin 0"
    assert per_tensor["input"].span.line == 10
    assert per_tensor["bias"].precision == "float16"
    # the site's window: the shortest among input / input_grad / output_grad
    assert site.amax_history_len.value == 4 and site.amax_history_len.span is not None
    assert site.amax_history_len.span.line == 13
    assert [(d.code, d.line) for d in lint("nanotron.yaml", text)] == [("FP8102", 13)]


def test_window_of_one_is_zero_headroom() -> None:
    text = module_config(1)
    (site,) = sites(text)
    assert site.amax_history_len.value == 1
    assert [d.code for d in lint("nanotron.yaml", text)] == ["FP8101"]


def test_written_margin_is_noted_as_not_applied() -> None:
    (site,) = sites(module_config(16, margin=2))
    assert site.margin.value == 0
    (n,) = site.notes
    assert n.kind == "unapplied" and n.key == "fp8.model[0].input.margin" and n.span.line == 12


def test_bfloat16_model_with_fp8_section_is_off_and_other_dtypes_are_not_read() -> None:
    (site,) = sites(DEFAULT.replace("dtype: float8", "dtype: bfloat16"))
    assert site.enabled.value is False and site.enabled.written
    assert sites("model:\n  dtype: bfloat16\nfp8_note: none\n") == []


def test_gradient_format_points_at_the_gradient_dtype() -> None:
    text = module_config(16).replace(
        "    output_grad:\n      dtype: fp8e5m2", "    output_grad:\n      dtype: fp8e4m3"
    )
    (site,) = sites(text)
    assert site.fmt.value is Fp8Format.E4M3 and site.fmt.written
    assert site.fmt.span is not None and site.fmt.span.line == 28
    assert [(d.code, d.line) for d in lint("nanotron.yaml", text)] == [("FP8206", 28)]


def test_surface_defaults_are_the_sites_defaults() -> None:
    (site,) = sites(HEAD)
    recipe = surfaces.defaults_of(Fp8LmLinearRecipe)
    assert site.amax_history_len.value == min(
        recipe[t]["interval"] for t in ("input", "input_grad", "output_grad")
    )
    assert site.amax_history_len.provenance == "default"
    fixed = surfaces.defaults_of(Fp8Meta)
    assert site.margin.value == fixed["margin"]
    assert site.amax_compute_algo.value == AmaxAlgo(fixed["amax_compute_algo"])


def test_schema_export_names_the_fp8_keys() -> None:
    result = run_cli("schema", "nanotron")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert {"model", "fp8"} <= set(schema["properties"])
    assert {"resid_dtype", "accum_dtype", "model", "optim"} <= set(
        schema["$defs"]["Fp8Args"]["properties"]
    )
    assert {"dtype", "margin", "interval"} <= set(schema["$defs"]["Fp8TensorRecipe"]["properties"])
