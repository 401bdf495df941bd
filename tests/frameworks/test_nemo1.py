"""NeMo 1.x `model:` configs: interpolations, the Megatron-Core and legacy paths, world size."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Framework


def sites(text: str, name: str = "x.yaml"):  # type: ignore[no-untyped-def]
    file = SourceFile(name, text)
    return parse_file(file, "json" if name.endswith(".json") else "yaml")


def test_nemo_interpolations_resolve_and_unknown_resolvers_stay_unknown() -> None:
    text = (
        "base:\n  hist: 1024\n"
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
        "  fp8_amax_history_len: ${base.hist}\n  fp8_margin: ${multiply:1,2}\n"
        "  tensor_model_parallel_size: ${.tp}\n  tp: 4\n  fp8_amax_compute_algo: ${nope.x}\n"
        "  fp8_interval: ${int_div:4,2}\n"
    )
    (site,) = sites(text)
    assert site.framework == Framework.NEMO1
    assert site.amax_history_len.value == 1024
    assert site.amax_history_len.via and site.amax_history_len.via[0].line == 2
    # NeMo registers `multiply` (nemo/core/config/hydra_runner.py): fp8lint computes it
    assert site.margin.known is True and site.margin.value == 2
    # `int_div` is registered by none of NeMo, NeMo-RL, the Launcher: unknown, never guessed
    assert site.interval.known is False and "resolver `int_div`" in (site.interval.note or "")
    assert site.tensor_parallel.value == 4
    assert site.amax_compute_algo.known is False


def test_nemo_mcore_path_uses_megatron_defaults_and_ignores_reduce_amax() -> None:
    (site,) = sites(
        "model:\n  mcore_gpt: true\n  transformer_engine: true\n  fp8: true\n"
        "  fp8_hybrid: true\n  reduce_amax: false\n"
    )
    assert site.amax_history_len.value == 1 and site.amax_history_len.provenance == "default"
    assert site.reduce_amax.value is True
    assert [n.kind for n in site.notes] == ["ignored"]


def test_nemo_legacy_path_defaults() -> None:
    (site,) = sites(
        "model:\n  mcore_gpt: false\n  transformer_engine: true\n  fp8: true\n"
        "  fp8_hybrid: true\n  reduce_amax: false\n"
    )
    assert site.amax_history_len.value == 1024
    assert site.reduce_amax.value is False


def test_nemo_world_size_from_trainer() -> None:
    (site,) = sites(
        "trainer:\n  devices: 8\n  num_nodes: 4\nmodel:\n  transformer_engine: true\n  fp8: false\n"
    )
    assert site.world_size.value == 32


SFT = """\
trainer:
  devices: 8
  max_steps: {steps}
model:
  transformer_engine: true
  fp8: true
  fp8_hybrid: true
  fp8_amax_history_len: 1024
  fp8_amax_compute_algo: max
{extra}"""


def test_run_length_and_fine_tune_signals_are_read() -> None:
    """Issue 19, class 2: `trainer.max_steps` is the run length (-1 means epochs: unknown),
    and `model.restore_from_path` or a `model.peft.peft_scheme` make the run a fine-tune."""
    (site,) = sites(SFT.format(steps=2000, extra="  restore_from_path: ???\n"))
    assert site.train_steps.value == 2000 and site.fine_tune.value is True
    (site,) = sites(SFT.format(steps=-1, extra="  peft:\n    peft_scheme: lora\n"))
    assert site.train_steps.value is None and site.fine_tune.value is True
    assert site.fine_tune.key == "model.peft.peft_scheme"
    for extra in ("  restore_from_path: null\n", "  peft:\n    peft_scheme: none\n", ""):
        (site,) = sites(SFT.format(steps=500000, extra=extra))
        assert site.fine_tune.value is not True, extra
        assert site.train_steps.value == 500000
