"""AMD Primus experiment configs: Megatron arguments under `modules.<name>.overrides`."""

from __future__ import annotations

from pathlib import Path

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, Fp8Format, Framework, Recipe

from ..conftest import lint

EXPERIMENT = """\
work_group: ${PRIMUS_TEAM:amd}
modules:
  pre_trainer:
    framework: megatron
    config: pre_trainer.yaml
    model: llama3.1_8B.yaml
    overrides:
      micro_batch_size: 2
      tensor_model_parallel_size: 2
      fp8: hybrid
"""


def sites(text: str):  # type: ignore[no-untyped-def]
    return parse_file(SourceFile("exp.yaml", text), "yaml")


def test_overrides_over_primus_base_defaults() -> None:
    (site,) = sites(EXPERIMENT)
    assert site.framework == Framework.MEGATRON and "Primus" in site.kind
    assert site.enabled.value is True and site.fmt.value is Fp8Format.HYBRID
    assert site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (10, 12)
    assert site.enabled.key == "modules.pre_trainer.overrides.fp8"
    # trainer_base.yaml: delayed, margin 0, history 1024, max (not Megatron's 1 / most_recent)
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "default"
    assert site.amax_history_len.value == 1024
    assert site.amax_history_len.default_of == "AMD Primus"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX and site.margin.value == 0
    assert site.tensor_parallel.value == 2 and site.tensor_parallel.span is not None
    assert site.tensor_parallel.span.line == 9
    assert site.sequence_parallel.value is True  # language_model.yaml
    assert site.gated_mlp.value is None  # the model file is not read
    assert site.span.line == 3


def test_written_history_one_most_recent_is_fp8101() -> None:
    text = EXPERIMENT + "      fp8_amax_history_len: 1\n      fp8_amax_compute_algo: most_recent\n"
    found = [(d.code, d.line) for d in lint("exp.yaml", text) if d.code == "FP8101"]
    assert found == [("FP8101", 12)]


def test_fp8_null_is_off_and_other_frameworks_are_not_read() -> None:
    (site,) = sites(EXPERIMENT.replace("fp8: hybrid", "fp8: null"))
    assert site.enabled.value is False and site.enabled.written
    (other,) = sites(EXPERIMENT.replace("framework: megatron", "framework: torchtitan"))
    assert other.framework == Framework.UNIDENTIFIED  # listed by FP8406, read by no rule


def test_environment_values_are_unknown() -> None:
    (site,) = sites(EXPERIMENT.replace("fp8: hybrid", "fp8: ${FP8:hybrid}"))
    assert site.enabled.known is False and "filled in by Primus" in (site.enabled.note or "")


def test_corpus_example_is_a_site_and_quiet(corpus: Path) -> None:
    (file,) = list((corpus / "AMD-AGI__Primus").glob("*.yaml"))
    text = file.read_text()
    (site,) = sites(text)
    assert site.is_on and site.is_delayed and site.amax_history_len.value == 1024
    loud = [d for d in lint(file.name, text) if d.severity.value in ("warning", "error")]
    assert loud == []


def test_maxtext_module_overrides_use_maxtext_keys() -> None:
    text = (
        "modules:\n  pre_trainer:\n    framework: maxtext\n    config: pre_trainer.yaml\n"
        "    overrides:\n      ici_tensor_parallelism: 1\n      quantization: nanoo_fp8\n"
    )
    (site,) = sites(text)
    assert site.framework == Framework.MAXTEXT and "Primus" in site.kind
    assert site.is_on and site.recipe.value is Recipe.DELAYED
    assert site.enabled.span is not None and site.enabled.span.line == 7
    assert site.tensor_parallel.value == 1


def test_fix_writes_into_the_overrides() -> None:
    from fp8lint.engine import fix_text
    from fp8lint.settings import RunSettings

    text = EXPERIMENT + "      fp8_amax_history_len: 1\n      fp8_amax_compute_algo: most_recent\n"
    result = fix_text("exp.yaml", text, "yaml", RunSettings(), True)
    assert result.failure is None and [d.code for d in result.fixed] == ["FP8101"]
    assert result.text == EXPERIMENT + (
        "      fp8_amax_history_len: 1024\n      fp8_amax_compute_algo: max\n"
    )
