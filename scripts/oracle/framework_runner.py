"""The framework side of the oracle: run Megatron-LM's and Transformer Engine's own launch
validation on each case file and say whether the framework accepted or rejected it.

This file runs inside the oracle's virtual environment (Python >= 3.12, torch, pydantic and
the Megatron-LM source on the path, Transformer Engine as the shim in te_shim/); it imports
nothing from fp8lint or from the other oracle modules.  `python framework_runner.py --jobs
JOBS.jsonl --out RESULTS.jsonl --megatron DIR --shim DIR --support DIR`.

One interpreter imports Megatron once (about 15 s), then forks a child per case, so every case
starts from the same freshly imported state and a case that hangs is killed after --timeout
seconds.  Per surface the child runs:

  launch (.sh), model_config (MODEL_ARGS:)
      sys.argv from the file, then `parse_args()` -> `validate_args(args, {'tokenizer_type':
      'GPT2BPETokenizer'})` (the defaults pretrain_gpt.py passes) ->
      `core_transformer_config_from_args(args)` (TransformerConfig.__post_init__) ->
      `get_fp8_recipe(config)` when config.fp8, `get_fp4_recipe(config)` when config.fp4
  transformer_config (a YAML mapping of TransformerConfig fields)
      `TransformerConfig(**mapping)` -> get_fp8_recipe / get_fp4_recipe as above
  te_recipe (.py)
      the file itself (`runpy.run_path`): its recipe constructors run TE's pydantic field
      validation and each recipe's __post_init__

What is faked (nothing here decides an FP8/FP4 outcome; README.md explains each):
  * no GPU: torch.cuda.current_device() is 0 (its only use on this path is the `device`
    keyword Megatron hands DelayedScaling, which the pydantic dataclass ignores);
    torch.cuda.get_device_capability() / get_device_properties() report compute capability
    FAKE_ARCH (Megatron reads the architecture only for the grouped-GEMM floor, stream
    priorities and the CUDA_DEVICE_MAX_CONNECTIONS advice, none an FP8/FP4 check);
  * no torch.distributed: parse_args reads RANK and WORLD_SIZE from the environment, so the
    child sets RANK=0, LOCAL_RANK=0 and WORLD_SIZE (torchrun's --nproc_per_node x --nnodes in a
    launch script, else --world-size); nothing on this path initialises a process group;
  * the environment: NVTE_* variables are removed (TE reads some as recipe defaults) and
    CUDA_DEVICE_MAX_CONNECTIONS=1 is set, as Megatron's example launches do; `export NAME=VALUE`
    lines of a launch script and the ENV_VARS block of a model_config.yaml are applied;
  * Transformer Engine: see te_shim/transformer_engine/__init__.py.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import re
import runpy
import select
import shlex
import signal
import sys
import time
import traceback
from pathlib import Path
from types import SimpleNamespace, TracebackType
from typing import Any

FAKE_ARCH = (10, 0)  # compute capability the fake GPU reports (Blackwell: every recipe runs)
DEFAULT_WORLD_SIZE = 8
REJECTING = (AssertionError, ValueError, TypeError, KeyError, IndexError, SystemExit)
PRELOADED = (
    "megatron.training.arguments",
    "megatron.training.argument_utils",
    "megatron.core.transformer",
    "megatron.core.fp8_utils",
    "megatron.core.fp4_utils",
)
PRETRAIN_DEFAULTS = {"tokenizer_type": "GPT2BPETokenizer"}  # pretrain_gpt.py's args_defaults


class UnknownField(Exception):
    """TransformerConfig has no field of that name (the dataclass refuses the keyword)."""


def apply_patches() -> None:
    """The CUDA calls Megatron's validation makes, answered without a GPU."""
    import torch

    props = SimpleNamespace(
        major=FAKE_ARCH[0],
        minor=FAKE_ARCH[1],
        name="oracle fake GPU",
        total_memory=80 * 2**30,
        multi_processor_count=132,
    )
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_capability = lambda device=None: FAKE_ARCH
    torch.cuda.get_device_properties = lambda device=None: props


def base_environment() -> None:
    for name in list(os.environ):
        if name.startswith("NVTE_"):
            del os.environ[name]
    os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("LOCAL_RANK", "0")
    os.environ.setdefault("WORLD_SIZE", str(DEFAULT_WORLD_SIZE))


# -- reading the case files ---------------------------------------------------------------

_EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$")


def read_launch(path: Path) -> tuple[list[str], int, dict[str, str]]:
    """The pretrain_gpt.py argv, the world size and the exported variables of a launch script
    (one torchrun command; backslash continuations joined)."""
    text = path.read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        m = _EXPORT.match(line)
        if m:
            env[m.group(1)] = m.group(2).strip("\"'")
            continue
        if "pretrain_gpt.py" not in line:
            continue
        tokens = shlex.split(line, comments=True)
        at = next(i for i, t in enumerate(tokens) if t.endswith("pretrain_gpt.py"))
        launcher = _options(tokens[:at])
        nproc = int(launcher.get("nproc_per_node", launcher.get("nproc-per-node", "1")))
        nnodes = int(launcher.get("nnodes", "1"))
        return tokens[at + 1 :], nproc * nnodes, env
    raise LookupError(f"{path}: no pretrain_gpt.py command")


def _options(tokens: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith("--"):
            if "=" in tok:
                key, value = tok[2:].split("=", 1)
                out[key] = value
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                out[tok[2:]] = tokens[i + 1]
                i += 1
        i += 1
    return out


def _yq_string(value: Any) -> str:
    """What yq's `tostring` prints for a scalar (Megatron's functional tests go through it)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    return str(value)


def read_model_config(path: Path) -> tuple[list[str], dict[str, str]]:
    """argv from a functional-test model_config.yaml, built the way Megatron-LM's
    tests/functional_tests/shell_test_utils/_run_training.sh builds it from `MODEL_ARGS`:
    `true` is the bare flag, a `[a b]` string is its items, a value with a space is one
    quoted word, an empty value drops the key; then the shell's word splitting."""
    import yaml

    doc = yaml.safe_load(path.read_text())
    words: list[str] = []
    for key, value in (doc.get("MODEL_ARGS") or {}).items():
        if value == "":
            continue
        if value is True:
            words.append(shlex.quote(str(key)))
            continue
        text = " ".join(_yq_string(value).split())
        if re.fullmatch(r"\([^)]+\)", text):
            words += [key, shlex.quote(text)]
        elif re.fullmatch(r"\[[^]]+\]", text):
            words += [key, text[1:-1]]
        elif any(c in text for c in " |()"):
            words += [key, shlex.quote(text)]
        else:
            words += [key, text]
    env = {str(k): _yq_string(v) for k, v in (doc.get("ENV_VARS") or {}).items()}
    return shlex.split(" ".join(words)), env


# -- running one case (in the forked child) -------------------------------------------------


def _megatron(argv: list[str]) -> dict[str, Any]:
    from megatron.training.argument_utils import core_transformer_config_from_args
    from megatron.training.arguments import parse_args, validate_args

    sys.argv = ["pretrain_gpt.py", *argv]
    args = parse_args()
    validate_args(args, dict(PRETRAIN_DEFAULTS))
    return _recipes(core_transformer_config_from_args(args))


def _transformer_config(path: Path) -> dict[str, Any]:
    import yaml
    from megatron.core.transformer import TransformerConfig

    mapping = yaml.safe_load(path.read_text())
    if not isinstance(mapping, dict):
        raise LookupError(f"{path}: not a mapping")
    try:
        config = TransformerConfig(**mapping)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):  # raised at the call, in this file
            raise UnknownField(str(exc)) from exc
        raise
    return _recipes(config)


def _recipes(config: Any) -> dict[str, Any]:
    from megatron.core.fp4_utils import get_fp4_recipe
    from megatron.core.fp8_utils import get_fp8_recipe

    made: list[str] = []
    if config.fp8:
        made.append(type(get_fp8_recipe(config)).__name__)
    if config.fp4:
        made.append(type(get_fp4_recipe(config)).__name__)
    return {"fp8": config.fp8, "fp4": config.fp4, "recipes": made}


def _te_recipe(path: Path) -> dict[str, Any]:
    from transformer_engine.common.recipe import Recipe

    scope = runpy.run_path(str(path), run_name="__oracle__")
    made = sorted(type(v).__name__ for v in scope.values() if isinstance(v, Recipe))
    return {"recipes": made}


def run_case(job: dict[str, Any], default_world_size: int) -> dict[str, Any]:
    path = Path(job["path"])
    surface = job["surface"]
    if surface == "launch":
        argv, world_size, env = read_launch(path)
    elif surface == "model_config":
        argv, env = read_model_config(path)
        world_size = default_world_size
    else:
        argv, env, world_size = [], {}, default_world_size
    os.environ.update(env)
    os.environ["WORLD_SIZE"] = str(world_size)
    if surface in ("launch", "model_config"):
        return _megatron(argv)
    if surface == "transformer_config":
        return _transformer_config(path)
    if surface == "te_recipe":
        return _te_recipe(path)
    raise LookupError(f"unknown surface {surface!r}")


def _where(tb: TracebackType | None, roots: tuple[str, ...]) -> tuple[str, str]:
    """(innermost frame, innermost frame inside the frameworks' own code)."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return "", ""
    last = frames[-1]
    inner = f"{last.filename}:{last.lineno}"
    for frame in reversed(frames):
        for root in roots:
            if frame.filename == root:  # the case file itself
                return inner, f"{Path(root).name}:{frame.lineno}"
            if frame.filename.startswith(root):
                return inner, f"{os.path.relpath(frame.filename, root)}:{frame.lineno}"
    return inner, ""


def _first_lines(text: str, n: int = 2) -> str:
    """The first lines of a message; pydantic's input echo (` [type=..., input_value=...`)
    cut off."""
    lines = [line.strip().split(" [type=", 1)[0] for line in text.splitlines() if line.strip()]
    return " | ".join(lines[:n])[:300]


def classify(
    exc: BaseException, stderr: str, roots: tuple[str, ...], harness: tuple[str, ...]
) -> dict[str, Any]:
    if isinstance(exc, SystemExit):
        if exc.code in (0, None):
            return {"outcome": "harness_error", "message": "exited 0 (help?)"}
        errors = [line for line in stderr.splitlines() if ": error: " in line]
        message = errors[-1].split(": error: ", 1)[1] if errors else f"exit {exc.code}"
        return {
            "outcome": "rejected",
            "exception": "SystemExit",
            "message": f"argparse: {message}"[:300],
            "where": "argparse",
        }
    if isinstance(exc, UnknownField):
        return {
            "outcome": "rejected",
            "exception": "TypeError",
            "message": _first_lines(str(exc)),
            "where": "TransformerConfig(**mapping)",
        }
    inner, where = _where(exc.__traceback__, roots)
    from_harness = any(inner.startswith(h) for h in harness)
    if isinstance(exc, REJECTING) and not from_harness:
        return {
            "outcome": "rejected",
            "exception": type(exc).__name__,
            "message": _first_lines(str(exc)) or type(exc).__name__,
            "where": where or inner,
        }
    return {
        "outcome": "harness_error",
        "exception": type(exc).__name__,
        "message": _first_lines(str(exc)) or type(exc).__name__,
        "where": inner,
        "traceback": "".join(traceback.format_exception(exc))[-2000:],
    }


def child(job: dict[str, Any], out_fd: int, options: argparse.Namespace) -> None:
    roots = (
        str(Path(options.megatron).resolve()) + os.sep,
        str(Path(options.shim).resolve() / "transformer_engine" / "common") + os.sep,
        str(Path(job["path"]).resolve()),
    )
    import torch

    harness = (
        str(Path(torch.__file__).parent) + os.sep,
        str(Path(options.shim).resolve() / "transformer_engine" / "__init__.py"),
        str(Path(__file__).resolve()),
    )
    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            detail = run_case(job, options.world_size)
        result: dict[str, Any] = {"outcome": "accepted", "detail": detail}
    except BaseException as exc:
        result = classify(exc, err.getvalue(), roots, harness)
    payload = json.dumps({"id": job["id"], **result}, default=str).encode()
    view = memoryview(payload)
    while view:
        written = os.write(out_fd, view)
        view = view[written:]
    os.close(out_fd)
    os._exit(0)


def run_forked(job: dict[str, Any], options: argparse.Namespace) -> dict[str, Any]:
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        child(job, write_fd, options)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = started + options.timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    seconds = round(time.monotonic() - started, 3)
    if timed_out:
        return {"id": job["id"], "outcome": "harness_error", "message": "timeout", "s": seconds}
    try:
        result: dict[str, Any] = json.loads(b"".join(chunks))
    except ValueError:
        return {
            "id": job["id"],
            "outcome": "harness_error",
            "message": f"the child died (wait status {status})",
            "s": seconds,
        }
    result["s"] = seconds
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", required=True, help="JSON lines: id, surface, path")
    p.add_argument("--out", required=True, help="JSON lines written here, one per job")
    p.add_argument("--megatron", required=True, help="the Megatron-LM source tree")
    p.add_argument("--shim", required=True, help="the folder holding transformer_engine/")
    p.add_argument("--support", required=True, help="a folder put on sys.path (factories)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per case")
    p.add_argument("--world-size", type=int, default=DEFAULT_WORLD_SIZE)
    options = p.parse_args(argv)
    for folder in (options.support, options.shim, options.megatron):
        sys.path.insert(0, str(Path(folder).resolve()))
    base_environment()
    started = time.monotonic()
    import warnings

    warnings.simplefilter("ignore")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        apply_patches()
        for module in PRELOADED:  # every case needs them: imported once, before the forks
            importlib.import_module(module)
    print(f"framework imported in {time.monotonic() - started:.1f} s", file=sys.stderr)
    jobs = [json.loads(line) for line in Path(options.jobs).read_text().splitlines() if line]
    with open(options.out, "w") as out:
        for n, job in enumerate(jobs, 1):
            out.write(json.dumps(run_forked(job, options)) + "\n")
            out.flush()
            if n % 100 == 0:
                print(f"  {n}/{len(jobs)} cases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
