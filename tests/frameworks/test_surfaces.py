"""Each family's pydantic surface: its JSON Schema export, and its validation turning a bad
value into FP8401 at that value (and a good one into nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

import jsonschema
import pytest
import tomllib
import yaml

from fp8lint.engine import lint_text
from fp8lint.engine.schemas import JSON_SCHEMA_DIALECT, export
from fp8lint.frameworks.shared import surfaces
from fp8lint.settings import RunSettings

TE = "from transformer_engine.common.recipe import DelayedScaling, Format\n"
NEMO2 = "from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision\n"
BRIDGE = "from megatron.bridge.training.mixed_precision import MixedPrecisionConfig\n"
TORCHAO = (
    "from torchao.float8 import Float8LinearConfig, convert_to_float8_training\n"
    "convert_to_float8_training(m, config=Float8LinearConfig.from_recipe_name({}))\n"
)


@dataclass(frozen=True)
class Case:
    family: str
    path: str
    kind: str
    good: str
    bad: str
    token: str  # the bad value as it appears in `bad` (its first occurrence is the span)
    good_doc: Any = None  # for Python families: the keywords, as a document for the schema
    bad_doc: Any = None


CASES = (
    Case(
        "megatron",
        "model_config.yaml",
        "yaml",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1\n",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1.5\n",
        "1.5",
    ),
    Case(
        "nemo1",
        "megatron_gpt_config.yaml",
        "yaml",
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n",
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: maybe\n",
        "maybe",
    ),
    Case(
        "nemo2",
        "recipe.py",
        "python",
        NEMO2 + "p = MegatronMixedPrecision(precision='bf16-mixed', fp8='hybrid')\n",
        NEMO2 + "p = MegatronMixedPrecision(precision='bf16-mixed', fp8='hybird')\n",
        "'hybird'",
        {"precision": "bf16-mixed", "fp8": "hybrid"},
        {"precision": "bf16-mixed", "fp8": "hybird"},
    ),
    Case(
        "bridge",
        "recipe.py",
        "python",
        BRIDGE + "c = MixedPrecisionConfig(fp8='hybrid', fp8_amax_compute_algo='max')\n",
        BRIDGE + "c = MixedPrecisionConfig(fp8='hybrid', fp8_amax_compute_algo='mean')\n",
        "'mean'",
        {"fp8": "hybrid", "fp8_amax_compute_algo": "max"},
        {"fp8": "hybrid", "fp8_amax_compute_algo": "mean"},
    ),
    Case(
        "te",
        "recipe.py",
        "python",
        TE + "r = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16)\n",
        TE + "r = DelayedScaling(fp8_format=Format.HYBRID, amax_history_len=16.5)\n",
        "16.5",
        {"fp8_format": "HYBRID", "amax_history_len": 16},
        {"fp8_format": "HYBRID", "amax_history_len": 16.5},
    ),
    Case(
        "accelerate",
        "fp8.yaml",
        "yaml",
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: HYBRID\n",
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  fp8_format: E3M4\n",
        "E3M4",
    ),
    Case(
        "deepspeed",
        "ds_config.json",
        "json",
        '{"train_batch_size": 8, "msamp": {"enabled": true, "opt_level": "O2"}}\n',
        '{"train_batch_size": 8, "msamp": {"enabled": true, "opt_level": "O4"}}\n',
        '"O4"',
    ),
    Case(
        "torchao",
        "train.py",
        "python",
        TORCHAO.format('"rowwise"'),
        TORCHAO.format('"colwise"'),
        '"colwise"',
        {"recipe_name": "rowwise"},
        {"recipe_name": "colwise"},
    ),
    Case(
        "torchtitan",
        "llama3_8b.toml",
        "toml",
        '[model]\nconverters = ["float8"]\n[quantize.linear.float8]\nemulate = false\n',
        '[model]\nconverters = ["float8"]\n[quantize.linear.float8]\nemulate = "no"\n',
        '"no"',
    ),
)
IDS = [c.family for c in CASES]


def findings(case: Case, text: str) -> list[tuple[str, int, int]]:
    diags, _ = lint_text(case.path, text, case.kind, RunSettings())
    return [(d.code, d.line, d.column) for d in diags if d.code == "FP8401"]


def position(text: str, token: str) -> tuple[int, int]:
    """1-based line and column of the first `token` in `text`."""
    at = text.index(token)
    line = text.count("\n", 0, at) + 1
    return line, at - (text.rfind("\n", 0, at) + 1) + 1


def document(case: Case, text: str, doc: Any) -> Any:
    if doc is not None:
        return doc
    if case.kind == "toml":
        return tomllib.loads(text)
    return yaml.safe_load(text)  # JSON is YAML


def test_every_family_has_a_case() -> None:
    assert sorted(IDS) == sorted(surfaces.FAMILIES)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bad_value_is_fp8401_at_its_span(case: Case) -> None:
    line, column = position(case.bad, case.token)
    assert findings(case, case.bad) == [("FP8401", line, column)]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_good_value_is_quiet(case: Case) -> None:
    assert findings(case, case.good) == []


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_schema_export_is_a_2020_12_schema_that_tells_good_from_bad(case: Case) -> None:
    schema = json.loads(export(case.family))
    assert (
        schema["$schema"] == JSON_SCHEMA_DIALECT == "https://json-schema.org/draft/2020-12/schema"
    )
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["properties"]
    refs = [r for r in _refs(schema)]
    assert all(r.startswith("#/$defs/") and r.split("/")[-1] in schema["$defs"] for r in refs)
    validator = jsonschema.Draft202012Validator(schema)
    assert list(validator.iter_errors(document(case, case.good, case.good_doc))) == []
    assert list(validator.iter_errors(document(case, case.bad, case.bad_doc))) != []


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if "$ref" in node else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_megatron_schema_spells_flags_and_nemo1_spells_fields() -> None:
    megatron = json.loads(export("megatron"))["$defs"]["MegatronArgs"]["properties"]
    assert "--fp8-format" in megatron and "--fp8-amax-history-len" in megatron
    # Megatron-LM has no legacy `--fp8-hybrid` (FP8408 reports it): the schema does not offer it
    assert "--fp8-hybrid" not in megatron and "--use-distributed-optimizer" in megatron
    nemo1 = json.loads(export("nemo1"))["$defs"]["Nemo1Model"]["properties"]
    assert {"fp8", "fp8_hybrid", "fp8_e4m3", "fp8_params"} <= set(nemo1)
    assert nemo1["fp8_amax_history_len"]["default"] == 1024


def test_message_names_the_key_the_value_and_the_choices() -> None:
    case = CASES[0]
    text = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: current\n"
    diags, _ = lint_text(case.path, text, case.kind, RunSettings())
    (diag,) = [d for d in diags if d.code == "FP8401"]
    assert diag.message.startswith(
        "`--fp8-recipe` is current; expected `tensorwise`, `delayed`, `mxfp8`, `blockwise` or "
        "`custom`"
    )


def test_one_adapter_per_family_built_once() -> None:
    surfaces.adapter.cache_clear()
    case = CASES[0]
    for _ in range(3):
        findings(case, case.bad)
    info = surfaces.adapter.cache_info()
    assert info.misses == 1 and info.hits >= 2  # built on the first lint only


PROBE = """
import sys
from fp8lint.cli import main
main(["check", "--no-cache", *sys.argv[1:]])
print("SURFACES=" + ",".join(sorted(
    m.split(".")[2] for m in sys.modules
    if m.startswith("fp8lint.frameworks.") and m.endswith(".surface")
)))
"""


def surfaces_loaded(*paths: Any) -> str:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, paths)], capture_output=True, text=True, timeout=60
    )
    return r.stdout.strip().splitlines()[-1]


def test_only_the_families_present_load_their_surface(tmp_path: Any) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.yaml").write_text("model:\n  hidden_size: 4096\n")
    assert surfaces_loaded(plain) == "SURFACES="
    mega = tmp_path / "mega"
    mega.mkdir()
    (mega / "model_config.yaml").write_text(CASES[0].good)
    assert surfaces_loaded(mega) == "SURFACES=megatron"


@pytest.mark.parametrize(
    ("path", "kind", "text", "token"),
    [
        (
            "model_config.yaml",
            "yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 0\n",
            "0",
        ),
        (
            "cfg.yaml",
            "yaml",
            "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
            "  fp8_amax_history_len: -1\n",
            "-1",
        ),
        (
            "fp8.yaml",
            "yaml",
            "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_len: 0\n",
            "0",
        ),
    ],
    ids=["megatron", "nemo1", "accelerate"],
)
def test_history_below_one_is_an_error_under_delayed_scaling(
    path: str, kind: str, text: str, token: str
) -> None:
    diags, sites = lint_text(path, text, kind, RunSettings())
    bad = [d for d in diags if d.code == "FP8401"]
    assert [(d.line, d.column) for d in bad] == [position(text, token)]
    # an integer to every surface; the range is the delayed recipe's (FP8401 on the model)
    assert bad[0].message.startswith("amax history length ")
    assert bad[0].message.endswith(": delayed scaling needs at least 1")
    assert sites[0].amax_history_len.value < 1  # the surface takes it: rules judge the range


def test_serialized_nemo2_config_is_checked_against_the_nemo2_surface() -> None:
    text = (
        "model:\n  config:\n    _target_: nemo.collections.llm.gpt.model.llama.Llama3Config8B\n"
        "    fp8: hybrid\n    fp8_recipe: delayed\n    fp8_margin: two\n"
    )
    diags, sites = lint_text("io.yaml", text, "yaml", RunSettings())
    assert [s.framework for s in sites] == ["nemo2"]
    assert [(d.code, d.line, d.column) for d in diags if d.code == "FP8401"] == [
        ("FP8401", *position(text, "two"))
    ]
    # under a recipe that never reads the margin, it reaches nothing that would refuse it
    other = text.replace("delayed", "tensorwise")
    diags, _ = lint_text("io.yaml", other, "yaml", RunSettings())
    assert not [d for d in diags if d.code == "FP8401"]


def test_te_format_member_that_does_not_exist_is_reported_at_the_member() -> None:
    text = TE + "r = DelayedScaling(fp8_format=Format.E6M2)\n"
    diags, sites = lint_text("recipe.py", text, "python", RunSettings())
    (bad,) = [d for d in diags if d.code == "FP8401"]
    assert (bad.line, bad.column) == position(text, "Format.E6M2")
    assert bad.message.startswith(
        "`fp8_format` is Format.E6M2; expected `HYBRID`, `E4M3`, `E5M2` or `E2M1`"
    )
    assert sites[0].fmt.known is False
