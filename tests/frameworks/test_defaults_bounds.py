"""Issue 13 defect 4: `defaults:` parents are read only inside the repository root.

A parent reached through `../..` (or a link) that leaves the repository is not read; the
site says so and FP8407 names it.  Parents inside the repository, NeMo-RL's
`defaults: ../../parent.yaml` among them, are merged as before.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks import launch
from fp8lint.frameworks.shared import paths
from fp8lint.model import Recipe

from ..conftest import run_cli

# a parent whose history 1 / most_recent would reach FP8101 if it were merged
SECRET = (
    "model:\n  transformer_engine: true\n  fp8_hybrid: true\n"
    "  fp8_margin: 0\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n"
)
TOP = (
    "defaults:\n  - _self_\n  - {parent}\n"  # after `_self_`: the parent's values win
    "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
    "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
)

NEMO_RL_BASE = """\
policy:
  megatron_cfg:
    enabled: true
    tensor_model_parallel_size: 2
    sequence_parallel: true
    fp8_cfg:
      enabled: false
      fp8: "hybrid"
      fp8_recipe: "delayed"
      fp8_param: false
"""
NEMO_RL_RECIPE = """\
defaults: ../../grpo_math_1B.yaml
policy:
  megatron_cfg:
    fp8_cfg:
      enabled: true
      fp8: "e4m3"
      fp8_recipe: "blockwise"
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def findings(cwd: Path, path: str) -> list[dict[str, object]]:
    r = run_cli("check", "--no-cache", path, "--output-format", "json", "--exit-zero", cwd=cwd)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    data: list[dict[str, object]] = json.loads(r.stdout)
    return data


@pytest.mark.parametrize(
    "parent", ["../../../outside/secret", "../../../outside/secret.yaml", "../" * 12 + "etc/x"]
)
def test_parent_outside_the_repository_is_not_read(tmp_path: Path, parent: str) -> None:
    """Before: the parent was read wherever `../..` led (here FP8101 from its history 1)."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    top = TOP.format(parent=parent)
    write(tmp_path, {"outside/secret.yaml": SECRET, "repo/conf/llm/top.yaml": top})
    data = findings(tmp_path / "repo", "conf/llm/top.yaml")
    codes = [d["code"] for d in data]
    assert "FP8101" not in codes  # the parent's history 1 was not merged
    (info,) = [d for d in data if d["code"] == "FP8407"]
    assert info["severity"] == "info" and info["location"]["row"] == 3  # type: ignore[index]
    assert f"`{parent}`" in str(info["message"]) and "outside the repository" in str(
        info["message"]
    )
    (site,) = parse_file(
        SourceFile(str(tmp_path / "repo/conf/llm/top.yaml"), top), "yaml"
    )  # the site carries the note, and only this file as its layer
    (note,) = [n for n in site.notes if n.kind == "parent-outside-repository"]
    assert note.key == parent and "not read" in note.message
    assert site.layers == [] or site.layers == [str(tmp_path / "repo/conf/llm/top.yaml")]


def test_the_same_parent_inside_the_repository_is_read(tmp_path: Path) -> None:
    """The control: with the repository root above both files, the parent is merged."""
    (tmp_path / ".git").mkdir()
    write(
        tmp_path,
        {
            "outside/secret.yaml": SECRET,
            "repo/conf/llm/top.yaml": TOP.format(parent="../../../outside/secret"),
        },
    )
    codes = [d["code"] for d in findings(tmp_path, "repo/conf/llm/top.yaml")]
    assert "FP8101" in codes and "FP8407" not in codes


def test_a_link_out_of_the_repository_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    write(
        tmp_path, {"outside/secret.yaml": SECRET, "repo/conf/top.yaml": TOP.format(parent="base")}
    )
    os.symlink(tmp_path / "outside" / "secret.yaml", tmp_path / "repo" / "conf" / "base.yaml")
    data = findings(tmp_path / "repo", "conf/top.yaml")
    assert "FP8101" not in [d["code"] for d in data]
    assert [d["code"] for d in data if d["code"] == "FP8407"] == ["FP8407"]


def test_a_leading_slash_is_from_the_config_folder_not_the_file_system(tmp_path: Path) -> None:
    """Hydra's `/name` is from the config root; it used to be looked up as `/name.yaml`."""
    (tmp_path / ".git").mkdir()
    write(tmp_path, {"conf/secret.yaml": SECRET, "conf/top.yaml": TOP.format(parent="/secret")})
    codes = [d["code"] for d in findings(tmp_path, "conf/top.yaml")]
    assert "FP8101" in codes and "FP8407" not in codes


def test_nemo_rl_recipe_parent_two_levels_up_inside_the_repository(tmp_path: Path) -> None:
    """NeMo-RL's `examples/configs/recipes/llm/*.yaml` name `../../grpo_math_1B.yaml`."""
    (tmp_path / ".git").mkdir()
    write(
        tmp_path,
        {
            "examples/configs/grpo_math_1B.yaml": NEMO_RL_BASE,
            "examples/configs/recipes/llm/grpo-fp8.yaml": NEMO_RL_RECIPE,
        },
    )
    child = tmp_path / "examples/configs/recipes/llm/grpo-fp8.yaml"
    (site,) = parse_file(SourceFile(str(child), NEMO_RL_RECIPE), "yaml")
    assert site.recipe.value is Recipe.BLOCKWISE
    assert site.tensor_parallel.value == 2  # from the parent
    assert site.tensor_parallel.span is not None
    assert site.tensor_parallel.span.path.endswith("grpo_math_1B.yaml")
    assert not [n for n in site.notes if n.kind in ("missing-parent", "parent-outside-repository")]
    data = findings(tmp_path, "examples/configs/recipes/llm/grpo-fp8.yaml")
    assert "FP8407" not in [d["code"] for d in data]


def test_one_repository_root_definition() -> None:
    """Launch scripts and `defaults:` parents share `paths.repository_root`."""
    assert launch.repository_root is paths.repository_root
    assert not hasattr(launch, "_inside")
