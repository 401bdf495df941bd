"""Fuzzing the sources through `lint_text` and `fix_text` with hypothesis.

Configs in every supported family are generated (Megatron `MODEL_ARGS` and `--yaml-cfg`
YAML, NeMo 1.x YAML, Accelerate YAML and JSON, DeepSpeed JSON, Transformer Engine recipes and
autocasts, NeMo 2 / Megatron-Bridge Python), valid ones and near-valid ones: the text is then
mutated by deleting, inserting, duplicating or swapping bytes and tokens.  For every input:

- no exception escapes `lint_text` or `fix_text` (an FP8001 diagnostic is the right answer
  to a broken file);
- every diagnostic, related location and fix edit lies inside the file;
- fixing is idempotent (fixing the fixed text changes nothing), and a fix that fails leaves
  the text exactly as it was.

`test_hostile.py` has the fixed hostile cases; `fuzz/fuzz_sources.py` is the long atheris run;
FP8LINT_FUZZ_EXAMPLES sets how many examples each property tries (default 120).
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import ROOT
from .test_hostile import fix_ok, lint_ok

# a longer run: FP8LINT_FUZZ_EXAMPLES=5000 python -m pytest -q tests/test_fuzz.py
EXAMPLES = int(os.environ.get("FP8LINT_FUZZ_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Config = tuple[str, str]  # (file name, text)

# --------------------------------------------------------------------------- values

ints = st.one_of(
    st.integers(-3, 8),
    st.sampled_from([0, 1, 16, 1024, 2048, 4096, 8192, -1, 2**31, 2**63, -(2**63) - 1]),
    st.integers(-(10**30), 10**30),
)
# Margins get the full range too: messages print 2**margin, which must stay bounded
# (rules.base.pow2) for margins in the billions.
margin_text = st.one_of(
    ints.map(str),
    st.sampled_from(
        [
            "0x10",
            "+4",
            "-0",
            "1.0",
            "2.5",
            ".inf",
            ".nan",
            "null",
            "''",
            "true",
            "20000",
            "1100",
            "30000000000",
            "-1100",
        ]
    ),
)
int_text = st.one_of(
    ints.map(str),
    st.sampled_from(
        [
            "0x10",
            "0o17",
            "1_024",
            "1:30",
            "+4",
            "-0",
            "1e3",
            "1.0",
            "2.5",
            ".inf",
            "-.inf",
            ".nan",
            "null",
            "~",
            "''",
            '""',
            "true",
            "yes",
            "off",
        ]
    ),
)
algo = st.sampled_from(["max", "most_recent", "MAX", "Max", "mean", "", "max ", "${oc.env:A}"])
fmt = st.sampled_from(["hybrid", "e4m3", "e5m2", "HYBRID", "E4M3", "mxfp8", "none", "nvfp4"])
recipe = st.sampled_from(["delayed", "tensorwise", "mxfp8", "blockwise", "nvfp4", "bogus"])
yaml_bool = st.sampled_from(["true", "false", "True", "False", "yes", "no", "on", "1", "0", "null"])
comment = st.sampled_from(
    ["", "  # fp8", "  # fp8lint: ignore[FP8101]", " #x", "  # fp8lint: ignore[FP8104, FP8101]"]
)
interp = st.sampled_from(
    [
        "${model.fp8_margin}",
        "${.fp8_margin}",
        "${..x}",
        "${oc.env:FP8}",
        "${model.hidden_size}",
        "${trainer.devices}",
        "${nowhere}",
    ]
)


def _q(draw: st.DrawFn, text: str) -> str:
    q = draw(st.sampled_from(["", "", "'", '"']))
    return f"{q}{text}{q}"


def _yaml_value(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(interp)
    if kind == 1:
        return "*shared"
    return _q(draw, draw(base)) if kind < 4 else draw(base)


def _flow(entries: list[tuple[str, str]]) -> str:
    """A flow mapping; `${...}` must be quoted there (a bare `{` would open a mapping)."""

    def value(v: str) -> str:
        return f'"{v}"' if v.startswith("${") else v

    return "{" + ", ".join(f"{k}: {value(v)}" for k, v in entries) + "}"


def _lines(draw: st.DrawFn, entries: list[tuple[str, str]], indent: str) -> list[str]:
    out = []
    for key, value in draw(st.permutations(entries)):
        if draw(st.integers(0, 6)) == 0:
            out.append(indent + "# " + key)
        out.append(f"{indent}{key}: {value}{draw(comment)}")
    return out


def _subset(
    draw: st.DrawFn, table: dict[str, st.SearchStrategy[str]], must: tuple[str, ...] = ()
) -> list[tuple[str, str]]:
    return [(k, draw(v)) for k, v in table.items() if k in must or draw(st.booleans())]


def _finish(draw: st.DrawFn, text: str) -> str:
    eol = draw(st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    text = text.replace("\n", eol)
    return text if draw(st.booleans()) else text.rstrip("\r\n")


def _shared(draw: st.DrawFn) -> list[str]:
    return [f"shared: &shared {draw(margin_text)}"]  # `*shared` may appear in any value


# --------------------------------------------------------------------------- YAML


@st.composite
def megatron_model_args(draw: st.DrawFn) -> Config:
    flags = {
        "--fp8-format": fmt,
        "--fp8-recipe": recipe,
        "--fp8-margin": margin_text,
        "--fp8-amax-history-len": int_text,
        "--fp8-amax-compute-algo": algo,
        "--fp8-interval": int_text,
        "--fp8-param-gather": yaml_bool,
        "--tensor-model-parallel-size": int_text,
        "--sequence-parallel": yaml_bool,
        "--context-parallel-size": int_text,
        "--hidden-size": st.sampled_from(["4096", "4100", "0", "-8", "${x}"]),
        "--ffn-hidden-size": st.sampled_from(["16384", "11008", "null", "13"]),
        "--num-attention-heads": st.sampled_from(["32", "7", "0"]),
        "--first-last-layers-bf16": yaml_bool,
        "--num-layers-at-start-in-bf16": int_text,
        "--bf16": yaml_bool,
        "--fp8-e4m3": yaml_bool,
        "--fp8-hybrid": yaml_bool,
    }
    keys = [k for k in flags if k == "--fp8-format" or draw(st.booleans())]
    entries = [(k, _yaml_value(draw, flags[k])) for k in keys]
    indent = draw(st.sampled_from(["  ", "    ", " "]))
    lines = [*_shared(draw), "ENV_VARS:", f"{indent}NCCL_X: 1", "MODEL_ARGS:"]
    if draw(st.integers(0, 5)) == 0:
        lines = [*_shared(draw), "MODEL_ARGS: " + _flow(entries)]
    else:
        lines += _lines(draw, entries, indent)
    if draw(st.booleans()):
        lines += ["TEST_TYPE: regular", "METRICS: [lm loss]"]
    if draw(st.integers(0, 4)) == 0:
        lines = ["---", *lines, "---", *lines]
    return "model_config.yaml", _finish(draw, "\n".join(lines) + "\n")


@st.composite
def megatron_yaml_cfg(draw: st.DrawFn) -> Config:
    lm = {
        "fp8": st.sampled_from(["hybrid", "e4m3", "null", "true"]),
        "fp8_margin": margin_text,
        "fp8_amax_history_len": int_text,
        "fp8_amax_compute_algo": algo,
        "fp8_recipe": recipe,
        "hidden_size": st.sampled_from(["4096", "4095"]),
        "num_attention_heads": st.sampled_from(["32", "3"]),
        "first_last_layers_bf16": yaml_bool,
    }
    mp = {"tensor_model_parallel_size": int_text, "sequence_parallel": yaml_bool}
    lines = [*_shared(draw), "language_model:"]
    lines += _lines(
        draw, [(k, _yaml_value(draw, st.just(v))) for k, v in _subset(draw, lm, ("fp8",))], "  "
    )
    lines += ["model_parallel:", *_lines(draw, _subset(draw, mp), "  ")]
    return "gpt_config.yaml", _finish(draw, "\n".join(lines) + "\n")


@st.composite
def nemo1_yaml(draw: st.DrawFn) -> Config:
    model = {
        "transformer_engine": yaml_bool,
        "fp8": yaml_bool,
        "fp8_e4m3": yaml_bool,
        "fp8_hybrid": yaml_bool,
        "fp8_margin": margin_text,
        "fp8_interval": int_text,
        "fp8_amax_history_len": int_text,
        "fp8_amax_compute_algo": algo,
        "reduce_amax": yaml_bool,
        "mcore_gpt": yaml_bool,
        "tensor_model_parallel_size": int_text,
        "pipeline_model_parallel_size": int_text,
        "sequence_parallel": yaml_bool,
        "hidden_size": st.sampled_from(["4096", "${model.x}", "12288"]),
        "num_attention_heads": st.sampled_from(["32", "96"]),
        "ub_tp_comm_overlap": yaml_bool,
    }
    entries = [
        (k, _yaml_value(draw, st.just(v)))
        for k, v in _subset(draw, model, ("fp8", "transformer_engine"))
    ]
    lines = [
        *_shared(draw),
        "name: megatron_gpt",
        "trainer:",
        f"  devices: {draw(int_text)}",
        f"  num_nodes: {draw(int_text)}",
    ]
    if draw(st.integers(0, 4)) == 0:
        lines.append("model: " + _flow(entries))
    else:
        lines += ["model:", *_lines(draw, entries, "  ")]
        if draw(st.booleans()):
            lines += ["  optim:", "    name: fused_adam", "    lr: 1e-4"]
    if draw(st.booleans()):
        lines += ["defaults:", "  - _self_"]
    return "megatron_gpt_config.yaml", _finish(draw, "\n".join(lines) + "\n")


ACCEL_FP8 = {
    "backend": st.sampled_from(["TE", "te", "MSAMP", "AO", "bogus"]),
    "fp8_format": st.sampled_from(["HYBRID", "E4M3", "hybrid", "E5M2"]),
    "amax_history_len": int_text,
    "amax_history_length": int_text,
    "amax_compute_algo": algo,
    "amax_compute_algorithm": algo,
    "margin": margin_text,
    "interval": int_text,
    "override_linear_precision": st.sampled_from(["[false, false, false]", "true"]),
    "opt_level": st.sampled_from(["O1", "O2", "O3"]),
    "use_autocast_during_eval": yaml_bool,
}


@st.composite
def accelerate_yaml(draw: st.DrawFn) -> Config:
    lines = [
        *_shared(draw),
        "compute_environment: LOCAL_MACHINE",
        f"distributed_type: {draw(st.sampled_from(['MULTI_GPU', 'FSDP', 'DEEPSPEED']))}",
        f"mixed_precision: {draw(st.sampled_from(['fp8', 'bf16', 'FP8', 'no']))}",
        f"num_processes: {draw(int_text)}",
        "fp8_config:",
    ]
    entries = [
        (k, _yaml_value(draw, st.just(v))) for k, v in _subset(draw, ACCEL_FP8, ("backend",))
    ]
    lines += _lines(draw, entries, "  ")
    return "default_config.yaml", _finish(draw, "\n".join(lines) + "\n")


# --------------------------------------------------------------------------- JSON


def _json_scalar(draw: st.DrawFn, text: str) -> object:
    """A JSON value for a YAML-ish text: numbers as numbers, the rest as strings/bools."""
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return {"true": True, "false": False, "null": None}.get(text, text)


@st.composite
def accelerate_json(draw: st.DrawFn) -> Config:
    fp8 = {k: _json_scalar(draw, v) for k, v in _subset(draw, ACCEL_FP8, ("backend",))}
    top: dict[str, object] = {
        "mixed_precision": draw(st.sampled_from(["fp8", "bf16", "FP8"])),
        "fp8_config": fp8,
    }
    if draw(st.booleans()):
        top["num_processes"] = draw(ints)
    return "accelerate.json", _finish(draw, _dump(draw, top))


@st.composite
def deepspeed_json(draw: st.DrawFn) -> Config:
    top: dict[str, object] = {"train_batch_size": draw(ints)}
    if draw(st.booleans()):
        top["msamp"] = {
            "enabled": draw(st.sampled_from([True, False, "true", 1])),
            "opt_level": draw(st.sampled_from(["O1", "O2", "O3", "O4", 2])),
        }
    if draw(st.booleans()) or "msamp" not in top:
        top["fp8"] = {"enabled": draw(st.booleans())}
    for key in ("bf16", "fp16"):
        if draw(st.booleans()):
            top[key] = {"enabled": draw(st.booleans())}
    if draw(st.booleans()):
        top["zero_optimization"] = {"stage": draw(st.integers(0, 3))}
    return "ds_config.json", _finish(draw, _dump(draw, top))


def _dump(draw: st.DrawFn, obj: object) -> str:
    indent = draw(st.sampled_from([None, 0, 1, 2, 4, "\t"]))
    text = json.dumps(obj, indent=indent, ensure_ascii=draw(st.booleans()))
    return text + "\n"


# --------------------------------------------------------------------------- Python


def _kwargs(draw: st.DrawFn, table: dict[str, st.SearchStrategy[str]]) -> list[str]:
    return [f"{k}={v}" for k, v in draw(st.permutations(_subset(draw, table)))]


def _call(draw: st.DrawFn, name: str, kwargs: list[str]) -> str:
    if not kwargs or draw(st.booleans()):
        return f"{name}(" + ", ".join(kwargs) + ")"
    trailing = "," if draw(st.booleans()) else ""
    return f"{name}(\n    " + ",\n    ".join(kwargs) + trailing + "\n)"


py_int = st.one_of(
    ints.map(str),
    st.sampled_from(
        ["1.0", "2.5", "None", "True", "N", "-N", "int('4')", "1 << 4", "0x10", "1_024"]
    ),
)
py_margin = st.one_of(py_int, st.sampled_from(["20000", "1100", "30000000000", "-1100"]))
py_str = st.sampled_from(
    ['"max"', "'most_recent'", '"mean"', "ALGO", "f'{x}'", "None", '"max" "imum"', "b'max'"]
)


@st.composite
def te_python(draw: st.DrawFn) -> Config:
    cls = draw(
        st.sampled_from(
            [
                "DelayedScaling",
                "Float8CurrentScaling",
                "MXFP8BlockScaling",
                "Float8BlockScaling",
                "NVFP4BlockScaling",
                "recipe.DelayedScaling",
                "te.common.recipe.DelayedScaling",
            ]
        )
    )
    kwargs = _kwargs(
        draw,
        {
            "margin": py_margin,
            "amax_history_len": py_int,
            "amax_compute_algo": py_str,
            "fp8_format": st.sampled_from(
                [
                    "Format.HYBRID",
                    "Format.E4M3",
                    "Format.E5M2",
                    "recipe.Format.HYBRID",
                    "FMT",
                    '"hybrid"',
                ]
            ),
            "interval": py_int,
            "reduce_amax": st.sampled_from(["True", "False", "1", "flag"]),
            "fp8_dpa": st.sampled_from(["True", "False"]),
            "override_linear_precision": st.sampled_from(["(False, False, True)", "None"]),
        },
    )
    lines = [
        "import transformer_engine.pytorch as te",
        "from transformer_engine.common import recipe",
        "from transformer_engine.common.recipe import DelayedScaling, Float8CurrentScaling, "
        "MXFP8BlockScaling, Float8BlockScaling, NVFP4BlockScaling, Format",
        "from megatron.core import parallel_state as mpu",
        f"N = {draw(ints)}",
        "ALGO = 'max'",
        "FMT = Format.HYBRID",
        "",
        "fp8_recipe = " + _call(draw, cls, kwargs),
    ]
    if draw(st.booleans()):
        group = draw(
            st.sampled_from(
                [
                    "mpu.get_data_parallel_group()",
                    "mpu.get_amax_reduction_group()",
                    "mpu.get_data_parallel_group(with_context_parallel=True)",
                    "None",
                    "group",
                    "mpu.get_tensor_and_data_parallel_group()",
                ]
            )
        )
        auto = draw(st.sampled_from(["te.fp8_autocast", "te.autocast", "fp8_autocast"]))
        lines += [
            "",
            "def step(model, batch, group=None):",
            f"    with {auto}(enabled={draw(st.sampled_from(['True', 'False', 'x']))}, "
            f"fp8_recipe=fp8_recipe, fp8_group={group}):",
            "        return model(batch)",
        ]
    if draw(st.booleans()):
        lines += [
            "class Trainer:",
            "    def __init__(self):",
            "        self.r = "
            + _call(draw, "DelayedScaling", _kwargs(draw, {"margin": py_margin})),
        ]
    return "train.py", _finish(draw, "\n".join(lines) + "\n")


@st.composite
def nemo2_python(draw: st.DrawFn) -> Config:
    plugin = draw(st.sampled_from(["MegatronMixedPrecision", "MixedPrecisionConfig", "run.Config"]))
    kwargs = _kwargs(
        draw,
        {
            "precision": st.sampled_from(['"bf16-mixed"', '"16-mixed"']),
            "fp8": st.sampled_from(['"hybrid"', '"e4m3"', "None", '"bogus"']),
            "fp8_recipe": st.sampled_from(['"delayed"', '"tensorwise"', '"mxfp8"', '"blockwise"']),
            "fp8_margin": py_margin,
            "fp8_amax_history_len": py_int,
            "fp8_amax_compute_algo": py_str,
            "first_last_layers_bf16": st.sampled_from(["True", "False"]),
            "num_layers_at_start_in_bf16": py_int,
            "num_layers_at_end_in_bf16": py_int,
            "fp8_param_gather": st.sampled_from(["True", "False"]),
        },
    )
    if plugin == "run.Config":
        call = "run.Config(MegatronMixedPrecision, " + ", ".join(kwargs) + ")"
    else:
        call = _call(draw, plugin, kwargs)
    lines = [
        "import nemo_run as run",
        "from nemo.collections import llm",
        "from nemo.collections.llm import MegatronStrategy",
        "from nemo.lightning.pytorch.plugins import MegatronMixedPrecision",
        "from megatron.bridge.training.mixed_precision import MixedPrecisionConfig",
        "from nemo.collections.llm.recipes.precision.mixed_precision import bf16_with_fp8_mixed",
        "",
        f"precision = {call}",
    ]
    if draw(st.booleans()):
        lines.append(
            "strategy = "
            + _call(
                draw,
                "MegatronStrategy",
                _kwargs(
                    draw,
                    {
                        "tensor_model_parallel_size": py_int,
                        "sequence_parallel": st.sampled_from(["True", "False"]),
                        "context_parallel_size": py_int,
                    },
                ),
            )
        )
    if draw(st.booleans()):
        lines.append("preset = bf16_with_fp8_mixed()")
    return "recipe.py", _finish(draw, "\n".join(lines) + "\n")


any_config = st.one_of(
    megatron_model_args(),
    megatron_yaml_cfg(),
    nemo1_yaml(),
    accelerate_yaml(),
    accelerate_json(),
    deepspeed_json(),
    te_python(),
    nemo2_python(),
)

# --------------------------------------------------------------------------- mutations

_TOKEN = re.compile(r"\w+|\s+|.", re.S)
# no lone surrogates: decoded files never hold one (the strict UTF-8/16/32 decoders refuse them)
NASTY = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        '"',
        "'",
        "\n",
        "\r",
        "\r\n",
        "\t",
        "#",
        "&a",
        "*a",
        "!!",
        "!!python/object:os.system",
        "-",
        "|",
        ">",
        "${",
        "}",
        "$",
        "%",
        "@",
        "\\",
        "(",
        ")",
        "=",
        "\x00",
        "\ufeff",
        "\u2028",
        "\x85",
        "é",
        "\U0001f600",
        "---",
        "...",
        "<<: *a",
        " ",
        "  ",
        "fp8",
        "--fp8-margin",
        "fp8_margin: ",
        "margin=",
        "0",
        "-1",
        "1e999",
        "NaN",
        "lambda: ",
        "\\u0000",
        '"\\ud800"',
        "\x1b[31m",
        "\x7f",
        "\u200b",
    ]
)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[Config] = any_config) -> Config:
    name, text = draw(base)
    for _ in range(draw(st.integers(1, 4))):
        tokens = _TOKEN.findall(text)
        if not tokens:
            tokens = [""]
        op = draw(st.integers(0, 6))
        i = draw(st.integers(0, len(tokens) - 1))
        if op == 0:  # delete a token
            del tokens[i]
        elif op == 1:  # duplicate a token
            tokens.insert(i, tokens[i])
        elif op == 2:  # insert something nasty
            tokens.insert(i, draw(NASTY))
        elif op == 3:  # swap two tokens
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif op == 4:  # delete one character inside a token
            t = tokens[i]
            k = draw(st.integers(0, max(0, len(t) - 1)))
            tokens[i] = t[:k] + t[k + 1 :]
        elif op == 5:  # truncate
            text = "".join(tokens)
            tokens = [text[: draw(st.integers(0, len(text)))]]
        else:  # duplicate a whole line
            lines = "".join(tokens).splitlines(keepends=True) or [""]
            k = draw(st.integers(0, len(lines) - 1))
            lines.insert(k, lines[k])
            tokens = lines
        text = "".join(tokens)
    return name, text


# --------------------------------------------------------------------------- properties


def checked(name: str, text: str, unsafe: bool = True) -> None:
    lint_ok(name, text)
    fix_ok(name, text, unsafe=unsafe)


@FUZZ
@given(config=any_config)
def test_generated_configs(config: Config) -> None:
    name, text = config
    checked(name, text, unsafe=False)


@FUZZ
@given(config=mutated())
def test_mutated_configs(config: Config) -> None:
    name, text = config
    checked(name, text)


@settings(FUZZ, max_examples=EXAMPLES // 2)
@given(config=mutated(), data=st.data())
def test_mutated_as_another_format(config: Config, data: st.DataObject) -> None:
    """The same text read by the wrong source (a `.yaml` full of Python, a `.py` of JSON)."""
    _name, text = config
    name = data.draw(st.sampled_from(["x.yaml", "x.json", "x.py"]))
    checked(name, text)


@settings(FUZZ, max_examples=EXAMPLES * 2 // 3)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("{}[]:,\"' \n\t#&*!-|>$@\\=()fp8ae01._")), max_size=200
    ),
    name=st.sampled_from(["x.yaml", "x.json", "x.py"]),
)
def test_noise(text: str, name: str) -> None:
    checked(name, "fp8: " + text)
    checked(name, text + "\nfp8_margin: 0\n")


def _harness() -> Any:
    """fuzz/fuzz_sources.py, imported as atheris would run it (atheris itself not needed)."""
    import importlib.util

    path = ROOT / "fuzz" / "fuzz_sources.py"
    spec = importlib.util.spec_from_file_location("fuzz_sources", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_atheris_harness_imports_and_runs_its_seeds() -> None:
    """The harness once failed at import (a private name it used had moved); it must import,
    and its checks must pass on every seed it would start from and on byte-level mutants."""
    import random
    import shutil
    from pathlib import Path

    harness = _harness()
    folder = Path(harness.seeds())
    try:
        inputs = sorted(folder.iterdir())
        assert len(inputs) >= len(harness.EXTRA_SEEDS) + 10
        rng = random.Random(20)
        for seed in inputs:
            data = seed.read_bytes()
            harness.test_one_input(data)
            for _ in range(3):
                cut = rng.randrange(1, len(data))
                harness.test_one_input(data[:cut] + bytes([rng.randrange(256)]) + data[cut + 1 :])
    finally:
        shutil.rmtree(folder)
    # the byte-order marks it decodes with are the ones `fp8lint check` reads
    assert harness.decode(b"\xef\xbb\xbfa: 1\n") == "a: 1\n"
    assert harness.decode("b: 2\n".encode("utf-16")) == "b: 2\n"
