"""`fp8lint schema NAME` offers the FP4 / MXFP8 / NVFP4 keys each YAML family's surface reads,
with the surface's allowed values (issue 22, item 2): an editor using the exported schema
completes `fp4_recipe` and flags `fp4_recipe: mxfp4`."""

from __future__ import annotations

import json
from typing import Any, get_args

import jsonschema
import pytest

from fp8lint.engine.schemas import export
from fp8lint.frameworks.shared.tc_surface import Fp4FormatName, Fp4RecipeName, Fp8RecipeName

FP4_RECIPES = set(get_args(Fp4RecipeName))
FP8_RECIPES = set(get_args(Fp8RecipeName))
BOOL = {"boolean"}
STRING = {"string"}

# family -> (path of keys from the document root, as written; the allowed values: a set of
# choices, or the JSON types a free value may take)
CASES: dict[str, tuple[tuple[tuple[str, ...], set[Any]], ...]] = {
    "megatron": (
        (("MODEL_ARGS", "--fp4-format"), set(get_args(Fp4FormatName))),
        (("MODEL_ARGS", "--fp4-recipe"), FP4_RECIPES),
        (("MODEL_ARGS", "--fp4-param-gather"), BOOL),
        (("MODEL_ARGS", "--fp8-recipe"), FP8_RECIPES),
    ),
    "bridge": (
        (("fp4",), STRING),
        (("fp4_recipe",), FP4_RECIPES),
        (("fp4_param",), BOOL),
        (("fp8_recipe",), FP8_RECIPES),
    ),
    "nemo2": (
        (("fp4",), STRING),
        (("fp4_recipe",), FP4_RECIPES),
        (("fp4_param_gather",), BOOL),
        (("fp8_recipe",), FP8_RECIPES),
    ),
    "nemo_rl": (
        (("policy", "megatron_cfg", "fp4_cfg", "enabled"), BOOL),
        (("policy", "megatron_cfg", "fp4_cfg", "fp4"), STRING),
        (("policy", "megatron_cfg", "fp4_cfg", "fp4_recipe"), FP4_RECIPES),
        (("policy", "megatron_cfg", "fp4_cfg", "fp4_param"), BOOL),
        (("policy", "megatron_cfg", "fp8_cfg", "fp8_recipe"), FP8_RECIPES),
        (("policy", "megatron_cfg", "first_last_layers_bf16"), BOOL),
        (("policy", "megatron_cfg", "num_layers_at_end_in_bf16"), {"integer"}),
        (("policy", "megatron_cfg", "te_precision_config_file"), STRING),
        (("policy", "megatron_cfg", "env_vars", "NVTE_NVFP4_DISABLE_RHT"), {"string", "integer"}),
        (("policy", "megatron_cfg", "env_vars", "NVTE_BACKWARD_OVERRIDE"), STRING),
    ),
}
PARAMS = [(family, path, allowed) for family, rows in CASES.items() for path, allowed in rows]


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node` with a `$ref` (or an `anyOf` of one object and null) followed."""
    if "$ref" in node:
        return _resolve(schema, schema["$defs"][node["$ref"].split("/")[-1]])
    objects = [o for o in node.get("anyOf", ()) if o.get("type") != "null"]
    if "properties" not in node and len(objects) == 1:
        return _resolve(schema, objects[0])
    return node


def _property(schema: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node = schema
    for key in path:
        node = _resolve(schema, node)
        assert key in node.get("properties", {}), f"{key} missing under {path}"
        node = node["properties"][key]
    return node


def _allowed(node: dict[str, Any]) -> set[Any]:
    """The choices a property offers, or (for a free value) its non-null JSON types."""
    options = node.get("anyOf", [node])
    choices = {v for o in options for v in o.get("enum", ())}
    choices |= {o["const"] for o in options if "const" in o}
    if choices:
        return choices
    return {o["type"] for o in options if "type" in o and o["type"] != "null"}


@pytest.mark.parametrize(("family", "path", "allowed"), PARAMS)
def test_fp4_key_is_in_the_schema_with_its_allowed_values(
    family: str, path: tuple[str, ...], allowed: set[Any]
) -> None:
    schema = json.loads(export(family))
    assert _allowed(_property(schema, path)) == allowed


def test_nemo_rl_schema_takes_the_pertoken_recipe_and_rejects_mxfp4() -> None:
    schema = json.loads(export("nemo_rl"))
    validator = jsonschema.Draft202012Validator(schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    cfg = {"enabled": True, "fp4": "e2m1", "fp4_recipe": "nvfp4", "fp4_param": False}
    good = {
        "policy": {
            "megatron_cfg": {
                "enabled": True,
                "fp4_cfg": cfg,
                "first_last_layers_bf16": True,
                "num_layers_at_start_in_bf16": 2,
                "num_layers_at_end_in_bf16": 4,
                "env_vars": {"NVTE_NVFP4_DISABLE_RHT": "1", "PYTORCH_CUDA_ALLOC_CONF": "x"},
            }
        }
    }
    assert list(validator.iter_errors(good)) == []
    bad = json.loads(json.dumps(good))
    bad["policy"]["megatron_cfg"]["fp4_cfg"]["fp4_recipe"] = "mxfp4"
    errors = list(validator.iter_errors(bad))
    assert errors and "mxfp4" in errors[0].message
