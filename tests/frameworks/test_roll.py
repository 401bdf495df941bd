"""ROLL: a megatron worker's `strategy_args.strategy_config` (issue 19, class 10)."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Format, Framework, Recipe

PIPELINE = """\
actor_train:
  strategy_args:
    strategy_name: megatron_train
    strategy_config:
      tensor_model_parallel_size: 2
      fp8: e4m3
      fp8_recipe: blockwise
      fp8_param: true
      additional_configs:
        fp8_margin: 1
actor_infer:
  strategy_args:
    strategy_name: vllm
    strategy_config:
      fp8: e4m3
reference:
  strategy_args:
    strategy_name: megatron_infer
    strategy_config:
      fp8: hybrid
"""


def test_each_megatron_worker_with_fp8_is_a_site() -> None:
    train, ref = parse_file(SourceFile("rlvr.yaml", PIPELINE), "yaml")  # vLLM: not training
    assert train.framework == Framework.MEGATRON and train.family == "roll"
    assert train.fmt.value == Fp8Format.E4M3 and train.recipe.value == Recipe.BLOCKWISE
    assert train.fp8_param_gather.value is True and train.fp8_param_gather.written
    assert train.margin.value == 1  # through additional_configs
    assert train.tensor_parallel.value == 2 and train.fine_tune.value is True
    # no fp8_recipe: ROLL's help and its code disagree, so the recipe is unknown
    assert ref.fmt.value == Fp8Format.HYBRID and not ref.recipe.known
    assert ref.recipe.note is not None and "delayed" in ref.recipe.note
