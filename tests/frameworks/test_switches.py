"""On/off switches above an FP8 block (NeMo-RL `fp8_cfg.enabled`, `megatron_cfg.enabled`) and
`activation_checkpointing`: a switched-off block is dormant (FP8405 territory only), and
recompute exists only where checkpointing is on."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Fp8Site

from ..conftest import lint

NEMO_RL = """\
policy:
  model_name: meta-llama/Llama-3.1-8B
  megatron_cfg:
    enabled: {megatron}
    activation_checkpointing: {ac}
    tensor_model_parallel_size: 2
    sequence_parallel: true
    recompute_granularity: full
    fp8_cfg:
      enabled: {fp8}
      fp8: "e4m3"
      fp8_recipe: "delayed"
      fp8_param: false
"""


def config(megatron: str = "true", fp8: str = "true", ac: str = "true") -> str:
    return NEMO_RL.format(megatron=megatron, fp8=fp8, ac=ac)


def site_of(text: str) -> Fp8Site:
    (site,) = parse_file(SourceFile("grpo.yaml", text), "yaml")
    return site


def codes(text: str, *extra: str) -> list[str]:
    select = ["ALL"] if extra else None
    return [d.code for d in lint("grpo.yaml", text, select=select)]


def test_enabled_false_on_the_fp8_block_makes_it_dormant() -> None:
    text = config(fp8="false")
    site = site_of(text)
    assert site.enabled.value is False and site.enabled.written
    assert site.enabled.key == "policy.megatron_cfg.fp8_cfg.enabled"
    assert site.enabled.span is not None and site.enabled.span.line == 10
    # was FP8101, FP8206 and FP8501 on a block NeMo-RL never builds
    assert codes(text) == []
    assert "FP8405" in codes(text, "ALL")  # the opt-in template check still sees it


def test_enabled_false_above_the_block_wins() -> None:
    text = config(megatron="false", fp8="true")
    site = site_of(text)
    assert site.enabled.value is False
    assert site.enabled.key == "policy.megatron_cfg.enabled"
    assert site.enabled.span is not None and site.enabled.span.line == 4
    assert codes(text) == []


def test_both_on_is_live_and_activation_checkpointing_is_recompute() -> None:
    text = config().replace("    recompute_granularity: full\n", "")
    site = site_of(text)
    # NeMo-RL's own switch is the site's: fp8_cfg.enabled, with fp8_cfg.fp8 the format
    assert site.is_on and site.enabled.key == "policy.megatron_cfg.fp8_cfg.enabled"
    rec = site.recompute_granularity
    assert rec.value == "full" and rec.key == "policy.megatron_cfg.activation_checkpointing"
    found = codes(text)
    assert {"FP8101", "FP8206", "FP8501"} <= set(found)


def test_activation_checkpointing_false_means_no_recompute() -> None:
    text = config(ac="false")  # recompute_granularity: full is written, but never applied
    site = site_of(text)
    assert site.is_on and site.recompute_granularity.value is None
    assert "FP8501" not in codes(text)
    assert "FP8501" in codes(config(ac="true"))


def test_an_unreadable_switch_leaves_fp8_unknown() -> None:
    text = config(fp8="${oc.env:USE_FP8}")
    site = site_of(text)
    assert site.enabled.known is False and site.enabled.key == "policy.megatron_cfg.fp8_cfg.enabled"
    assert codes(text) == []


def test_a_sibling_switch_does_not_count() -> None:
    text = "policy:\n  dtensor_cfg:\n    enabled: false\n" + config().split("\n", 1)[1]
    assert site_of(text).is_on


# -- Transformer Engine in Python: `fp8_autocast(enabled=False, fp8_recipe=...)` ---------------

TE_SRC = """\
import transformer_engine.pytorch as te
from transformer_engine.common.recipe import DelayedScaling
recipe = DelayedScaling(margin=0, amax_history_len=1, amax_compute_algo="most_recent")
def f(m, x):
    with te.fp8_autocast({first}, fp8_recipe=recipe):
        return m(x)
def g(m, x):
    with te.fp8_autocast({second}, fp8_recipe=recipe):
        return m(x)
"""


def te_codes(first: str, second: str) -> list[str]:
    return [d.code for d in lint("m.py", TE_SRC.format(first=first, second=second))]


def test_a_recipe_only_used_switched_off_is_dormant() -> None:
    text = TE_SRC.format(first="enabled=False", second="False")
    (site,) = parse_file(SourceFile("m.py", text), "python")
    assert site.enabled.value is False and site.enabled.written
    assert site.enabled.span is not None and site.enabled.span.line == 5
    assert te_codes("enabled=False", "False") == []


def test_one_autocast_left_on_keeps_the_recipe_live() -> None:
    assert "FP8101" in te_codes("enabled=False", "enabled=True")
    assert "FP8101" in te_codes("enabled=False", "enabled=use_fp8")  # not known to be off
