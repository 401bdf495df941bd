"""Megatron-Bridge's NVFP4 presets as live FP4 sites: named in Python recipe code, as a
`mixed_precision=` override of `run_recipe.py`, and as `-c nvfp4` of the performance
launchers (presets at NVIDIA-NeMo/Megatron-Bridge 067f987d `training/mixed_precision.py`
L404-429; the Ultra one from 0.6.2)."""

from __future__ import annotations

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Framework, Recipe

# name -> (first_last_layers_bf16, start, end)
PRESETS = {
    "bf16_with_nvfp4_mixed": (False, 0, 0),
    "nemotron_3_super_bf16_with_nvfp4_mixed": (True, 0, 14),
    "nemotron_3_ultra_bf16_with_nvfp4_mixed": (True, 0, 16),
}


def _check(site: object, edges: tuple[bool, int, int]) -> None:
    from fp8lint.model import Fp8Site

    assert isinstance(site, Fp8Site)
    assert site.framework == Framework.BRIDGE
    assert site.fp4_on is True
    assert site.is_on is False
    assert site.active_recipe == Recipe.NVFP4
    assert site.fp4.value == "e2m1"
    assert site.fp4_recipe.value == "nvfp4"
    assert site.fp4_param_gather.value is True
    assert site.fp8_param_gather.value is False
    assert site.first_last_layers_bf16.value is edges[0]
    assert site.num_layers_at_start_in_bf16.value == edges[1]
    assert site.num_layers_at_end_in_bf16.value == edges[2]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_python_preset_string_is_an_fp4_site(name: str) -> None:
    src = (
        "from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n"
        f'cfg = llama3_8b_pretrain_config(mixed_precision="{name}")\n'
    )
    (site,) = parse_file(SourceFile("recipe.py", src), "python")
    _check(site, PRESETS[name])
    assert site.fp4.provenance == "preset"
    assert site.fp4_param_gather.provenance == "preset"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_python_preset_call_is_an_fp4_site(name: str) -> None:
    src = f"from megatron.bridge.training.mixed_precision import {name}\nmp = {name}()\n"
    (site,) = parse_file(SourceFile("recipe.py", src), "python")
    _check(site, PRESETS[name])


def test_override_after_the_preset_wins() -> None:
    src = (
        "from megatron.bridge.training.mixed_precision import bf16_with_nvfp4_mixed\n"
        "mp = bf16_with_nvfp4_mixed()\n"
        "mp.fp4_param_gather = False\n"
    )
    (site,) = parse_file(SourceFile("recipe.py", src), "python")
    assert site.fp4_on is True
    assert site.fp4_param_gather.value is False
    assert site.fp4_param_gather.provenance == "written"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_run_recipe_hyphen_alias(name: str) -> None:
    alias = name.replace("_", "-")
    src = (
        "python scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config "
        f"mixed_precision={alias}\n"
    )
    (site,) = parse_file(SourceFile("run.sh", src), "shell")
    _check(site, PRESETS[name])


@pytest.mark.parametrize("flag", ["-c", "--compute_dtype"])
def test_perf_launcher_nvfp4(flag: str) -> None:
    src = f"python scripts/performance/setup_experiment.py {flag} nvfp4 -tp 2\n"
    (site,) = parse_file(SourceFile("run.sh", src), "shell")
    _check(site, (False, 0, 0))


def test_perf_launcher_bf16_is_not_fp4() -> None:
    src = "python scripts/performance/setup_experiment.py -c bf16 -tp 2\n"
    sites = parse_file(SourceFile("run.sh", src), "shell")
    assert all(s.fp4_on is not True for s in sites)


def test_perf_precision_helper_nvfp4() -> None:
    src = (
        "from megatron.bridge.perf_recipes._common import _perf_precision\n"
        'mp = _perf_precision("nvfp4")\n'
    )
    (site,) = parse_file(SourceFile("recipe.py", src), "python")
    _check(site, (False, 0, 0))


def test_fp8_preset_is_not_fp4() -> None:
    src = (
        "from megatron.bridge.recipes.llama import llama3_8b_pretrain_config\n"
        'cfg = llama3_8b_pretrain_config(mixed_precision="bf16_with_mxfp8_mixed")\n'
    )
    (site,) = parse_file(SourceFile("recipe.py", src), "python")
    assert site.fp4_on is False
    assert site.is_on is True
