"""The TransformerConfig families: defaults from their surface models (that no family imports
another is `test_registry.py`'s, for every family)."""

from __future__ import annotations

import pytest

from fp8lint.frameworks.shared import surfaces
from fp8lint.frameworks.shared.transformer_config import SurfaceDefaults


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
