"""verl: a role's Megatron `override_transformer_config`, in a trainer YAML and as Hydra
overrides on a launch line (issue 19, class 10)."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Fp8Format, Framework, Recipe

from ..conftest import lint

LAUNCH = """\
#!/bin/bash
FP8=(
    +actor_rollout_ref.actor.megatron.override_transformer_config.fp8="e4m3"
    +actor_rollout_ref.actor.megatron.override_transformer_config.fp8_recipe="blockwise"
    +actor_rollout_ref.actor.optim.override_optimizer_config.fp8_recipe="blockwise"
    +actor_rollout_ref.rollout.quantization=fp8
)
python3 -m verl.trainer.main_ppo --config-path=config --config-name=ppo_megatron_trainer \\
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4 \\
    "${FP8[@]}" trainer.total_epochs=1
"""
TRAINER = """\
actor_rollout_ref:
  actor:
    megatron:
      tensor_model_parallel_size: 2
      override_transformer_config:
        fp8: hybrid
        fp8_amax_history_len: 16
  rollout:
    quantization: fp8
critic:
  megatron:
    override_transformer_config:
      recompute_granularity: full
"""


def test_hydra_overrides_in_an_array_are_the_actors_site() -> None:
    (site,) = parse_file(SourceFile("run_dapo.sh", LAUNCH), "shell")
    assert site.framework == Framework.MEGATRON and site.family == "verl"
    assert site.enabled.value is True and site.fmt.value == Fp8Format.E4M3
    assert site.recipe.value == Recipe.BLOCKWISE and site.recipe.written
    assert site.tensor_parallel.value == 4
    # not written anywhere here: verl's own trainer config decides, so it is unknown
    assert not site.pipeline_parallel.known and not site.sequence_parallel.known
    assert site.fine_tune.value is True  # RL post-training
    span = site.enabled.span
    assert span is not None and span.line == 3


def test_a_trainer_yaml_takes_megatron_cores_defaults_for_what_it_omits() -> None:
    (site,) = parse_file(SourceFile("verl.yaml", TRAINER), "yaml")  # the critic has no fp8
    assert site.kind == "verl actor_rollout_ref.actor.megatron.override_transformer_config"
    assert site.recipe.value == Recipe.DELAYED and site.recipe.provenance == "default"
    assert site.amax_history_len.value == 16 and site.margin.value == 0
    assert site.amax_compute_algo.value == AmaxAlgo.MOST_RECENT
    assert site.tensor_parallel.value == 2
    assert [n.kind for n in site.notes] == ["inference"]  # the FP8 rollout, never a finding
    # a fine-tune: the zero-headroom finding is information, and no fix rewrites verl's dict
    found = [d for d in lint("verl.yaml", TRAINER) if d.code == "FP8101"]
    assert found and all(d.severity.value == "info" for d in found)
    assert all(d.fix is None or not d.fix.applies(True) for d in found)


def test_a_role_without_fp8_and_other_programs_are_not_verl() -> None:
    text = "python3 train.py +actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2\n"
    assert parse_file(SourceFile("run.sh", text), "shell") == []
    assert parse_file(SourceFile("x.yaml", "critic:\n  megatron: {}\n"), "yaml") == []


def test_verl_mxfp8_and_thd_packing_from_use_remove_padding() -> None:
    base = (
        "actor_rollout_ref:\n  actor:\n    megatron:\n{extra}"
        "      override_transformer_config:\n        fp8: e4m3\n        fp8_recipe: mxfp8\n"
    )
    (site,) = parse_file(SourceFile("ppo.yaml", base.format(extra="")), "yaml")
    assert site.recipe.value is Recipe.MXFP8 and site.active_recipe is Recipe.MXFP8
    assert site.packing.value is True and site.packing.provenance == "default"  # THD
    off = base.format(extra="      use_remove_padding: false\n")
    (site,) = parse_file(SourceFile("ppo.yaml", off), "yaml")
    assert site.packing.value is False and site.packing.written
    assert not site.invalid and not site.notes  # not a TransformerConfig key: no finding


def test_verl_hydra_override_of_use_remove_padding() -> None:
    cmd = (
        "python3 -m verl.trainer.main_ppo "
        "+actor_rollout_ref.actor.megatron.override_transformer_config.fp8=e4m3 "
        "+actor_rollout_ref.actor.megatron.override_transformer_config.fp8_recipe=mxfp8 "
        "actor_rollout_ref.actor.megatron.use_remove_padding={v}\n"
    )
    (on,) = parse_file(SourceFile("run.sh", cmd.format(v="True")), "shell")
    (off,) = parse_file(SourceFile("run.sh", cmd.format(v="False")), "shell")
    assert on.packing.value is True and on.packing.written
    assert off.packing.value is False and off.recipe.value is Recipe.MXFP8
