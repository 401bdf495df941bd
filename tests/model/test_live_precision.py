"""FP4 is a live site: the model's `fp4_on` / `quantized` / `active_recipe` and the
`precision` line of `fp8lint show`, for FP8, FP4-only, both, off and unknown."""

from __future__ import annotations

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Site, Recipe, Setting
from fp8lint.report.sites import render_sites
from fp8lint.rule import gpu_sm


def _site(**fields: object) -> Fp8Site:
    return Fp8Site.model_construct(path="x.yaml", framework="megatron", kind="k", **fields)


def _known(value: object) -> Setting[object]:
    return Setting(value=value, known=True, provenance="written", key="k")


def test_fp4_only_is_live_with_the_nvfp4_recipe() -> None:
    site = _site(enabled=_known(False), fp4=_known("e2m1"))
    assert site.fp4_on is True and site.quantized and site.active_recipe is Recipe.NVFP4
    custom = _site(enabled=_known(False), fp4=_known("e2m1"), fp4_recipe=_known("custom"))
    assert custom.active_recipe is Recipe.CUSTOM


def test_fp4_off_unknown_and_unreadable_recipe() -> None:
    off = _site(enabled=_known(False), fp4=_known(None))
    assert off.fp4_on is False and not off.quantized and off.active_recipe is None
    unknown = _site(enabled=_known(False))
    assert unknown.fp4_on is None and not unknown.quantized
    # a recipe written but unreadable (a variable) is not guessed to be nvfp4
    unread = Setting[str](value=None, known=False, provenance="written", key="--fp4-recipe")
    assert _site(fp4=_known("e2m1"), fp4_recipe=unread).active_recipe is None


def test_te_nvfp4_recipe_counts_as_fp4() -> None:
    site = _site(enabled=_known(True), recipe=_known(Recipe.NVFP4))
    assert site.fp4_on is True and site.active_recipe is Recipe.NVFP4
    fp8 = _site(enabled=_known(True), recipe=_known(Recipe.MXFP8))
    assert fp8.fp4_on is None and fp8.active_recipe is Recipe.MXFP8


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        ("--fp4-format e2m1", "FP4 nvfp4 (FP8 off)"),
        ("--fp4-format e2m1 --fp4-recipe custom", "FP4 custom (FP8 off)"),
        ("--fp8-format hybrid --fp8-recipe mxfp8", "FP8 mxfp8"),
        ("--fp8-format hybrid --fp4-format e2m1", "FP8 delayed and FP4 (both on)"),
        ("--num-layers 4", "off"),
    ],
)
def test_show_prints_what_the_site_trains_in(args: str, shown: str) -> None:
    text = f"torchrun pretrain_gpt.py {args}\n"
    sites = parse_file(SourceFile("train.sh", text), "shell")
    assert sites
    line = next(x for x in render_sites("train.sh", sites).splitlines() if "precision" in x)
    assert line.split(None, 1)[1] == shown


@pytest.mark.parametrize(
    ("name", "sm"),
    [
        ("B200", "sm100"),
        ("NVIDIA GB300", "sm100"),
        ("h100", "sm90"),
        ("RTX 5090", "sm120"),
        ("mi300x", None),
        ("", None),
    ],
)
def test_gpu_families_are_read_from_the_name_written(name: str, sm: str | None) -> None:
    assert gpu_sm(_site(gpu=_known(name))) == sm


def test_no_gpu_written_is_no_family() -> None:
    assert gpu_sm(_site()) is None
