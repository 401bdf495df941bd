"""The oracle's environment, outside the repository: a virtual environment with PyPI's torch
and pydantic, the Megatron-LM source at a pinned commit, and the Transformer Engine shim
holding TE's recipe module at a pinned commit.  Each part is made once and reused (a marker
file records what was made); `--reinstall` starts over."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEGATRON_COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
TE_COMMIT = "d0067d0da6cb01811b8072a7d304f0e00344ce2b"
TE_RECIPE = "transformer_engine/common/recipe/__init__.py"
MEGATRON_MIRROR = Path("/work/.mirror/NVIDIA+Megatron-LM/repo")
TE_MIRROR = Path("/work/.mirror/NVIDIA+TransformerEngine/repo")
# what the venv needs: torch for Megatron, numpy/packaging (Megatron's own dependencies),
# pydantic (TE's recipe dataclasses), PyYAML (the runner reads the YAML cases)
PACKAGES = ("numpy", "packaging", "pydantic", "pyyaml")
MIN_PYTHON = (3, 12)  # Megatron-LM at d98e8a64 needs 3.12 (typing.override; requires-python)

QUANTIZERS = '''"""Quantizer factories the oracle's custom-recipe cases name
(`--fp8-quantizer-factory oracle_quantizers.fp8_factory`): Megatron imports the dotted path
and hands the callable to TE's CustomRecipe, which checks only that it is callable."""


def fp8_factory(*args, **kwargs):
    return None


def fp4_factory(*args, **kwargs):
    return None
'''


@dataclass(frozen=True)
class Environment:
    python: Path  # the venv's interpreter
    megatron: Path  # a Megatron-LM source tree (holds megatron/ and pretrain_gpt.py)
    shim: Path  # holds transformer_engine/
    support: Path  # holds oracle_quantizers.py
    install: dict[str, object]  # what the torch install took (time, size), when measured


def log(message: str) -> None:
    print(f"[oracle] {message}", file=sys.stderr, flush=True)


def find_python(explicit: str | None) -> Path:
    """An interpreter new enough for Megatron: --python, else python3.13/python3.12 on PATH,
    else a pyenv installation."""
    candidates: list[str] = [explicit] if explicit else []
    if not explicit:
        candidates += ["python3.14", "python3.13", "python3.12", "python3"]
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        if pyenv.is_dir():
            found = sorted(pyenv.glob("3.1[2-9]*/bin/python3"), reverse=True)
            candidates += [str(p) for p in found]
    for candidate in candidates:
        exe = shutil.which(candidate) or candidate
        try:
            out = subprocess.run(
                [exe, "-c", "import sys; print(sys.version_info[:2] >= (3, 12))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "True":
            return Path(exe)
    raise SystemExit("oracle: no Python >= 3.12 found (Megatron-LM needs it); pass --python PATH")


def _du(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with_path = Path(root) / name
            if not with_path.is_symlink():
                total += with_path.stat().st_size
    return total


def ensure_venv(workdir: Path, python: str | None, torch_spec: str, reinstall: bool) -> Path:
    venv = workdir / "venv"
    marker = venv / "oracle-installed.json"
    wanted = {"torch": torch_spec, "packages": list(PACKAGES)}
    if reinstall and venv.exists():
        shutil.rmtree(venv)
    if marker.is_file():
        made = json.loads(marker.read_text())
        if {k: made.get(k) for k in wanted} == wanted:
            return venv
        shutil.rmtree(venv)
    interpreter = find_python(python)
    log(f"creating {venv} with {interpreter}")
    subprocess.run([str(interpreter), "-m", "venv", str(venv)], check=True)
    exe = venv / "bin" / "python"
    log(f"pip install {torch_spec} {' '.join(PACKAGES)} (PyPI's torch pulls in the CUDA wheels)")
    started = time.monotonic()
    subprocess.run(
        [str(exe), "-m", "pip", "install", "--no-cache-dir", "-q", torch_spec, *PACKAGES],
        check=True,
    )
    seconds = time.monotonic() - started
    probe = subprocess.run(
        [
            str(exe),
            "-c",
            "import torch, pydantic; print(torch.__version__, torch.cuda.is_available(),"
            " pydantic.VERSION)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    version, cuda, pydantic_version = probe.stdout.split()
    size = _du(venv)
    made = {
        **wanted,
        "python": subprocess.run(
            [str(exe), "-c", "import sys; print(sys.version.split()[0])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip(),
        "torch_version": version,
        "cuda_available": cuda,
        "pydantic_version": pydantic_version,
        "install_seconds": round(seconds, 1),
        "venv_bytes": size,
    }
    marker.write_text(json.dumps(made, indent=2) + "\n")
    gib = size / 2**30
    log(f"installed torch {version} in {seconds:.0f} s; the venv holds {gib:.1f} GiB")
    return venv


def _git_show(mirror: Path, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={mirror}", "show", f"{commit}:{path}"],
        capture_output=True,
        check=True,
    ).stdout


def ensure_megatron(workdir: Path, explicit: str | None, mirror: Path, commit: str) -> Path:
    if explicit:
        tree = Path(explicit).resolve()
        if not (tree / "megatron" / "training" / "arguments.py").is_file():
            raise SystemExit(f"oracle: {tree} is not a Megatron-LM source tree")
        return tree
    tree = workdir / f"megatron-lm-{commit[:8]}"
    if (tree / "oracle-commit").is_file():
        return tree
    if not mirror.is_dir():
        raise SystemExit(f"oracle: no Megatron-LM mirror at {mirror}; pass --megatron DIR")
    log(f"extracting Megatron-LM {commit[:8]} from {mirror}")
    partial = tree.with_name(tree.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    archive = subprocess.Popen(
        ["git", f"--git-dir={mirror}", "archive", "--format=tar", commit, "megatron"],
        stdout=subprocess.PIPE,
    )
    assert archive.stdout is not None
    with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(partial, filter="data")
        else:  # Python < 3.10.12: a git archive of a pinned commit holds no odd members
            tar.extractall(partial)
    if archive.wait() != 0:
        raise SystemExit(f"oracle: git archive {commit} failed")
    (partial / "pretrain_gpt.py").write_bytes(_git_show(mirror, commit, "pretrain_gpt.py"))
    (partial / "oracle-commit").write_text(commit + "\n")
    shutil.rmtree(tree, ignore_errors=True)
    partial.rename(tree)
    return tree


def ensure_shim(workdir: Path, recipe_file: str | None, mirror: Path, commit: str) -> Path:
    """te-shim/transformer_engine: this folder's te_shim files plus TE's recipe module."""
    shim = workdir / "te-shim"
    if recipe_file:
        source = Path(recipe_file).read_bytes()
    else:
        if not mirror.is_dir():
            raise SystemExit(f"oracle: no TE mirror at {mirror}; pass --te-recipe FILE")
        source = _git_show(mirror, commit, TE_RECIPE)
    shutil.rmtree(shim, ignore_errors=True)
    shutil.copytree(HERE / "te_shim", shim, ignore=shutil.ignore_patterns("__pycache__"))
    target = shim / TE_RECIPE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source)
    return shim


def ensure(
    workdir: Path,
    *,
    python: str | None,
    torch_spec: str,
    megatron: str | None,
    te_recipe: str | None,
    reinstall: bool,
) -> Environment:
    workdir.mkdir(parents=True, exist_ok=True)
    venv = ensure_venv(workdir, python, torch_spec, reinstall)
    tree = ensure_megatron(workdir, megatron, MEGATRON_MIRROR, MEGATRON_COMMIT)
    shim = ensure_shim(workdir, te_recipe, TE_MIRROR, TE_COMMIT)
    support = workdir / "support"
    support.mkdir(exist_ok=True)
    (support / "oracle_quantizers.py").write_text(QUANTIZERS)
    install = json.loads((venv / "oracle-installed.json").read_text())
    return Environment(venv / "bin" / "python", tree, shim, support, install)
