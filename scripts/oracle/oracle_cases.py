"""Oracle cases: the files both sides read, in four surfaces.

  launch               launch.sh: `torchrun --nproc_per_node 8 pretrain_gpt.py --flag ...`
  model_config         model_config.yaml: a Megatron functional-test `MODEL_ARGS:` block
  transformer_config   transformer_config.yaml: a mapping of TransformerConfig fields
  te_recipe            te_recipe.py: Transformer Engine recipe constructors

A case is a small model that Megatron's validation accepts (BASE_FLAGS / BASE_FIELDS) plus
the FP8/FP4 knobs under test.  The targeted twins live in oracle_twins.py, the seeded random
set in oracle_random.py.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

Value = bool | int | float | str | list[str] | None
Knobs = dict[str, Value]

LAUNCH, MODEL_CONFIG, TRANSFORMER_CONFIG, TE_RECIPE = (
    "launch",
    "model_config",
    "transformer_config",
    "te_recipe",
)
SURFACES = (LAUNCH, MODEL_CONFIG, TRANSFORMER_CONFIG, TE_RECIPE)
CLI_SURFACES = (LAUNCH, MODEL_CONFIG)
FILENAMES = {
    LAUNCH: "launch.sh",
    MODEL_CONFIG: "model_config.yaml",
    TRANSFORMER_CONFIG: "transformer_config.yaml",
    TE_RECIPE: "te_recipe.py",
}
WORLD_SIZE = 8
DROP = "<drop>"  # a knob value that removes the base's flag or field

# A GPT small enough for any parallel layout the cases use, on 8 ranks; Megatron's
# validation accepts it as it is (the tokenizer is never built: validate_args only reads it).
# Hidden size and sequence length 256 keep every GEMM dimension a multiple of 128 per rank
# at tensor-parallel size 2, so no recipe's GEMM-time alignment rule applies.
BASE_FLAGS: Knobs = {
    "--num-layers": 4,
    "--hidden-size": 256,
    "--num-attention-heads": 4,
    "--seq-length": 256,
    "--max-position-embeddings": 256,
    "--micro-batch-size": 1,
    "--global-batch-size": 8,
    "--train-iters": 10,
    "--lr": "0.0001",
    "--bf16": True,
    "--tokenizer-type": "NullTokenizer",
    "--vocab-size": 1024,
    "--mock-data": True,
}
# A serialized TransformerConfig lists every field; these are the ones a case reads, with the
# FP8/FP4 fields at their defaults.
BASE_FIELDS: Knobs = {
    "num_layers": 4,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "bf16": True,
    "fp8": None,
    "fp8_recipe": "delayed",
    "fp8_margin": 0,
    "fp8_amax_history_len": 1,
    "fp8_amax_compute_algo": "most_recent",
    "fp4": None,
    "fp4_recipe": "nvfp4",
}
# a small MoE layer the MoE checks switch on (without linear biases: Megatron refuses MoE
# biases when the expert tensor-parallel size, which follows TP, is above 1)
MOE_FLAGS: Knobs = {
    "--num-experts": 4,
    "--moe-router-topk": 2,
    "--moe-token-dispatcher-type": "alltoall",
    "--disable-bias-linear": True,
}
MOE_FIELDS: Knobs = {
    "num_moe_experts": 4,
    "moe_router_topk": 2,
    "moe_token_dispatcher_type": "alltoall",
    "add_bias_linear": False,
}
TE_IMPORTS = (
    "from transformer_engine.common.recipe import (\n"
    "    CustomRecipe,\n"
    "    DelayedScaling,\n"
    "    Float8BlockScaling,\n"
    "    Float8CurrentScaling,\n"
    "    Format,\n"
    "    MMParams,\n"
    "    MXFP8BlockScaling,\n"
    "    NVFP4BlockScaling,\n"
    ")\n"
)


@dataclass(frozen=True)
class Case:
    id: str
    surface: str
    text: str
    check: str | None = None  # the catalogue id a targeted twin is for
    twin: str = "random"  # violating | passing | random
    label: str = ""  # the knobs in a few words
    knobs: Mapping[str, Value] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return FILENAMES[self.surface]


def merged(base: Knobs, knobs: Mapping[str, Value]) -> Knobs:
    out = dict(base)
    for key, value in knobs.items():
        if value == DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


# -- rendering ----------------------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def yaml_scalar(value: Value) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(yaml_scalar(v) for v in value) + "]"
    if _PLAIN.match(value) and value.lower() not in _YAML_WORDS:
        return value
    return json.dumps(value)


def render_launch(flags: Knobs, title: str) -> str:
    lines = [
        f"--{k[2:]}" if v is True else f"{k} {_shell(v)}"
        for k, v in flags.items()
        if v is not False
    ]
    body = " \\\n    ".join(lines)
    return (
        "#!/bin/bash\n"
        f"# {title}\n"
        "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
        f"torchrun --nproc_per_node {WORLD_SIZE} pretrain_gpt.py \\\n    {body}\n"
    )


def _shell(value: Value) -> str:
    if isinstance(value, list):
        return " ".join(shlex.quote(str(v)) for v in value)
    return shlex.quote(str(value))


def render_model_config(flags: Knobs, title: str) -> str:
    """`true` is the bare flag and a list a "[a b]" string, as Megatron's functional tests
    write them; a `false` stays (the test harness passes it on as the word `false`)."""
    rows = []
    for key, value in flags.items():
        if isinstance(value, list):
            text = json.dumps("[" + " ".join(str(v) for v in value) + "]")
        else:
            text = yaml_scalar(value)
        rows.append(f"  {key}: {text}")
    return (
        f"# {title}\n"
        "ENV_VARS:\n"
        "  CUDA_DEVICE_MAX_CONNECTIONS: 1\n"
        "MODEL_ARGS:\n" + "\n".join(rows) + "\n"
    )


def render_transformer_config(fields: Knobs, title: str) -> str:
    rows = [f"{key}: {yaml_scalar(value)}" for key, value in fields.items()]
    return f"# {title}\n" + "\n".join(rows) + "\n"


def render_te(source: str, title: str) -> str:
    """`source` is one or more statements that build recipes, e.g. `recipe = ...`."""
    factory = ""
    if "qfactory" in source:
        factory = "\n\ndef qfactory(role):\n    return None\n"
    return f'"""{title}"""\n\n{TE_IMPORTS}{factory}\n{source.strip()}\n'


def render(surface: str, knobs: Mapping[str, Value] | str, title: str) -> str:
    if surface == TE_RECIPE:
        assert isinstance(knobs, str)
        return render_te(knobs, title)
    assert not isinstance(knobs, str)
    if surface == LAUNCH:
        return render_launch(merged(BASE_FLAGS, knobs), title)
    if surface == MODEL_CONFIG:
        flags = merged(BASE_FLAGS, knobs)
        text = render_model_config(flags, title)
        as_read = {
            k: "[" + " ".join(map(str, v)) + "]" if isinstance(v, list) else v
            for k, v in flags.items()
        }
        _same_when_read(text, as_read, "MODEL_ARGS")
        return text
    fields = merged(BASE_FIELDS, knobs)
    text = render_transformer_config(fields, title)
    _same_when_read(text, fields, None)
    return text


def _same_when_read(text: str, expected: Mapping[str, Value], key: str | None) -> None:
    """The YAML written reads back as the values meant (a guard on the emitter)."""
    import yaml

    doc = yaml.safe_load(text)
    got = doc[key] if key else doc
    if got != dict(expected) or any(type(got[k]) is not type(v) for k, v in expected.items()):
        raise AssertionError(f"YAML emitter: {expected!r} reads back as {got!r}")


def write(cases: list[Case], root: Path) -> dict[str, Path]:
    """Each case in a folder of its own (so no two cases are read as one project)."""
    paths: dict[str, Path] = {}
    for case in cases:
        folder = root / case.id
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / case.filename
        path.write_text(case.text)
        paths[case.id] = path
    return paths
