"""The TransformerConfig families: defaults from their surface models, and no family importing
another (issue 18)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.transformer_config import SurfaceDefaults

FAMILIES = ("megatron", "nemo1", "nemo2", "bridge", "swift", "primus", "nemo_rl", "mlperf")
ROOT = Path(__file__).parents[2] / "src" / "fp8lint" / "frameworks"


def _imported(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


@pytest.mark.parametrize("name", FAMILIES)
def test_a_family_imports_no_other_family(name: str) -> None:
    for path in (ROOT / name).glob("*.py"):
        for module in _imported(path):
            parts = module.split(".")
            if parts[:2] == ["fp8lint", "frameworks"] and len(parts) > 3:
                assert parts[2] in (name, "shared"), f"{path.name} imports {module}"


def test_shared_imports_no_family() -> None:
    for path in (ROOT / "shared").glob("*.py"):
        for module in _imported(path):
            parts = module.split(".")
            if parts[:2] == ["fp8lint", "frameworks"] and len(parts) > 2:
                assert parts[2] == "shared", f"{path.name} imports {module}"


@pytest.mark.parametrize(
    ("family", "changes"),
    [
        ("swift", {"fp8_amax_history_len": 1024, "fp8_amax_compute_algo": "max"}),
        (
            "primus",
            {
                "fp8_amax_history_len": 1024,
                "fp8_amax_compute_algo": "max",
                "sequence_parallel": True,
            },
        ),
        ("nemo_rl", {}),
        ("mlperf", {}),
    ],
)
def test_stacks_over_megatron_keep_its_defaults_but_their_own(
    family: str, changes: dict[str, object]
) -> None:
    core = dict(SurfaceDefaults(None))
    del core["gated_linear_unit"]  # the MLP kind comes from the checkpoint or model file
    drop = ("fp8", "fp8_e4m3", "fp8_hybrid", "transformer_engine", "recompute_granularity")
    assert dict(SurfaceDefaults(family, drop=drop)) == {**core, **changes}


def test_the_moe_overlap_default_is_not_a_site_default() -> None:
    assert "overlap_moe_expert_parallel_comm" in surfaces.defaults("megatron")
    assert "overlap_moe_expert_parallel_comm" not in SurfaceDefaults("megatron")
