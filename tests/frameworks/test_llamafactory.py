"""LLaMA-Factory and axolotl YAML (`fp8: true`, `fp8_backend`, ...): identified by their own
keys, read as the Accelerate recipe their trainer code builds, never taken for DeepSpeed."""

from __future__ import annotations

from pathlib import Path

import pytest

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks.deepspeed.reader import is_deepspeed_config
from fp8lint.model import AmaxAlgo, Fp8Format, Fp8Site, Framework, Recipe

from ..conftest import lint

LF = (
    "model_name_or_path: meta-llama/Meta-Llama-3-8B-Instruct\n"
    "stage: sft\n"
    "finetuning_type: full\n"
    "template: llama3\n"
    "deepspeed: examples/deepspeed/ds_z3_config.json\n"
    "gradient_accumulation_steps: 8\n"
    "bf16: true\n"
    "fp8: true\n"
    "fp8_backend: torchao\n"
    "fp8_enable_fsdp_float8_all_gather: true\n"
)
AXOLOTL = (
    "base_model: NousResearch/Meta-Llama-3.1-8B\n"
    "datasets:\n  - path: tatsu-lab/alpaca\n    type: alpaca\n"
    "sequence_len: 4096\n"
    "micro_batch_size: 1\n"
    "gradient_accumulation_steps: 4\n"
    "bf16: auto\n"
    "gradient_checkpointing: true\n"
    "fp8: true\n"
    "fp8_enable_fsdp_float8_all_gather: true\n"
)


def sites(text: str, name: str = "train.yaml") -> list[Fp8Site]:
    return parse_file(SourceFile(name, text), "yaml")


def line_col(text: str, needle: str) -> tuple[int, int]:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i, line.index(needle) + 1
    raise AssertionError(needle)


def test_llamafactory_torchao_is_rowwise_with_the_head_filtered() -> None:
    (site,) = sites(LF)
    assert site.framework == Framework.ACCELERATE and site.kind == "LLaMA-Factory config"
    assert site.is_on and site.enabled.written
    assert site.enabled.span is not None
    assert (site.enabled.span.line, site.enabled.span.column) == (8, 6)
    assert site.recipe.value is Recipe.ROWWISE and site.recipe.key == "fp8_backend"
    assert site.recipe.span is not None and site.recipe.span.line == 9
    assert site.fmt.value is Fp8Format.E4M3 and site.fmt.default_of == "LLaMA-Factory"
    assert site.output_head_fp8.value is False
    assert site.recompute_granularity.value == "full"
    assert site.recompute_granularity.default_of == "LLaMA-Factory"
    assert site.edit is None  # nothing in the file is a scaling key a fix could write


def test_llamafactory_te_backend_is_accelerates_te_recipe_with_its_values() -> None:
    text = LF.replace("fp8_backend: torchao", "fp8_backend: te")
    (site,) = sites(text)
    assert site.recipe.value is Recipe.DELAYED
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.amax_history_len.value == 16 and site.amax_history_len.default_of == "LLaMA-Factory"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.margin.value == 0 and site.interval.value == 1
    # gradient checkpointing is on by default: delayed scaling + torch checkpoint -> FP8501
    codes = [d.code for d in lint("train.yaml", text)]
    assert "FP8501" in codes
    off = text + "disable_gradient_checkpointing: true\n"
    (site,) = sites(off)
    assert site.recompute_granularity.value is None
    assert "FP8501" not in [d.code for d in lint("train.yaml", off)]
    # Hugging Face's `gradient_checkpointing: true` turns it back on (the Trainer enables it)
    hf = off + "gradient_checkpointing: true\n"
    (site,) = sites(hf)
    assert site.recompute_granularity.value == "full"
    assert site.recompute_granularity.key == "gradient_checkpointing"
    assert "FP8501" in [d.code for d in lint("train.yaml", hf)]


def test_llamafactory_auto_default_and_unknown_backend() -> None:
    (site,) = sites(LF.replace("fp8_backend: torchao\n", ""))
    assert site.recipe.value is Recipe.ROWWISE  # `auto` is LLaMA-Factory's default
    (site,) = sites(LF.replace("fp8_backend: torchao", "fp8_backend: msamp"))
    assert site.recipe.value is Recipe.TENSORWISE and site.output_head_fp8.value is False
    (site,) = sites(LF.replace("fp8_backend: torchao", "fp8_backend: cuda"))
    assert [n.kind for n in site.invalid] == ["invalid-value"]
    assert "FP8401" in [d.code for d in lint("train.yaml", LF.replace("torchao", "cuda"))]


def test_llamafactory_fp8_off_is_a_dormant_site() -> None:
    (site,) = sites(LF.replace("fp8: true", "fp8: false"))
    assert site.enabled.value is False and site.enabled.written
    assert lint("train.yaml", LF.replace("fp8: true", "fp8: false")) == []


def test_axolotl_is_tensorwise_with_accelerates_filter() -> None:
    (site,) = sites(AXOLOTL)
    assert site.kind == "axolotl config" and site.is_on
    assert site.recipe.value is Recipe.TENSORWISE
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.output_head_fp8.value is False and site.output_head_fp8.default_of == "Accelerate"
    assert site.recompute_granularity.value == "full"
    rec = site.recompute_granularity
    assert rec.span is not None and rec.span.line == line_col(AXOLOTL, "gradient_checkpointing")[0]
    assert lint("axolotl.yaml", AXOLOTL) == []


def test_a_deepspeed_key_pointing_at_a_file_is_not_a_deepspeed_config() -> None:
    # the LLaMA-Factory file has `gradient_accumulation_steps` and a boolean `bf16`, which
    # DeepSpeed shares with Hugging Face; it used to be taken for DeepSpeed and --fix
    # deleted `fp8: true`
    for text in (LF, LF.replace("deepspeed: examples/deepspeed/ds_z3_config.json\n", "")):
        (site,) = sites(text)
        assert site.framework != Framework.DEEPSPEED_MSAMP
        assert [d for d in lint("train.yaml", text) if d.fix is not None] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"train_batch_size": 8, "zero_optimization": {"stage": 2}}', True),
        ('{"train_micro_batch_size_per_gpu": 1, "bf16": {"enabled": true}}', True),
        ('{"msamp": {"enabled": true}}', True),
        ('{"gradient_accumulation_steps": 8, "bf16": true}', False),
        ('{"deepspeed": "ds.json", "train_batch_size": 8, "steps_per_print": 10}', False),
        ('{"gradient_accumulation_steps": 8, "fp16": {"enabled": true}}', False),
    ],
)
def test_deepspeed_identification(text: str, expected: bool) -> None:
    from fp8lint.documents.tree import load_json

    (doc,) = load_json(text)
    assert doc.root is not None
    assert is_deepspeed_config(doc.root) is expected


def test_corpus_llamafactory_file_is_a_quiet_site(corpus: Path) -> None:
    path = corpus / "hiyouga__LLaMA-Factory" / "examples__extras__fp8__llama3_fp8_fsdp_sft.yaml"
    text = path.read_text()
    (site,) = sites(text, str(path))
    assert site.kind == "LLaMA-Factory config" and site.is_on
    assert site.recipe.value is Recipe.ROWWISE
    assert [d for d in lint("sft.yaml", text) if d.severity.value != "info"] == []
    assert [d for d in lint("sft.yaml", text) if d.fix is not None] == []


def test_stage_and_finetuning_type_decide_a_fine_tune() -> None:
    """Issue 19, class 2: LLaMA-Factory fine-tunes unless `stage: pt` with
    `finetuning_type: full` (the defaults are sft and lora); `max_steps` is the length."""
    base = "model_name_or_path: m\nfp8: true\nfp8_backend: te\n"
    cases = [
        ("", True),
        ("stage: dpo\n", True),
        ("stage: pt\n", True),  # LoRA by default
        ("stage: pt\nfinetuning_type: full\n", None),
        ("stage: ${oc.env:STAGE}\n", None),
    ]
    for extra, tune in cases:
        (site,) = parse_file(SourceFile("lf.yaml", base + extra + "max_steps: 200\n"), "yaml")
        assert site.fine_tune.value is tune, extra
        assert site.train_steps.value == 200
