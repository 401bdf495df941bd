"""Differential test of fp8lint against Megatron-LM's and Transformer Engine's own launch
validation (a developer tool: not part of the test suite or CI).

    python scripts/oracle [--report docs/oracle.md] [--seed 0] [--count 500]

Sets up (once) a venv with PyPI's torch, the Megatron-LM source and TE's recipe module in a
folder outside the repository, writes the targeted twins and the seeded random set there,
runs the frameworks' validation and `fp8lint check` of this checkout on every file, and
prints the comparison as Markdown.  It exits 0 whatever fp8lint finds; it exits non-zero only
when it cannot run (no Python 3.12, no Megatron source).  README.md says more.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import oracle_env
from oracle_cases import Case, write
from oracle_compare import build_rows, report, run_fp8lint, summary_lines
from oracle_random import random_cases
from oracle_twins import SKIPPED, TWINS, twin_cases

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEFAULT_WORKDIR = Path.home() / ".cache" / "fp8lint-oracle"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python scripts/oracle", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--workdir",
        type=Path,
        default=DEFAULT_WORKDIR,
        help=f"where the venv, sources and cases live (default {DEFAULT_WORKDIR})",
    )
    p.add_argument("--report", type=Path, help="also write the Markdown report here")
    p.add_argument("--seed", type=int, default=0, help="seed of the random set (default 0)")
    p.add_argument("--count", type=int, default=500, help="random cases (default 500)")
    p.add_argument("--only", choices=("all", "targeted", "random"), default="all")
    p.add_argument(
        "--workers", type=int, default=1, help="framework processes in parallel (default 1)"
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per case (default 60)")
    p.add_argument("--python", help="interpreter (>= 3.12) for the venv (default: found)")
    p.add_argument(
        "--torch",
        default="torch",
        help="pip requirement for torch (default `torch`: PyPI's, with CUDA wheels)",
    )
    p.add_argument("--megatron", help="a Megatron-LM source tree to use instead of the mirror")
    p.add_argument("--te-recipe", help="TE's transformer_engine/common/recipe/__init__.py")
    p.add_argument("--reinstall", action="store_true", help="make the venv again")
    p.add_argument(
        "--fp8lint-python",
        default=sys.executable,
        help="interpreter that runs `-m fp8lint` (this checkout's src/ goes first "
        "on its PYTHONPATH; default: this one)",
    )
    return p.parse_args(argv)


def run_frameworks(
    env: oracle_env.Environment,
    cases: list[Case],
    paths: dict[str, Path],
    workdir: Path,
    workers: int,
    timeout: float,
) -> dict[str, dict[str, Any]]:
    jobs = [{"id": c.id, "surface": c.surface, "path": str(paths[c.id])} for c in cases]
    shards = [jobs[i::workers] for i in range(max(1, workers))]
    procs = []
    for n, shard in enumerate(shards):
        if not shard:
            continue
        job_file = workdir / f"jobs-{n}.jsonl"
        out_file = workdir / f"results-{n}.jsonl"
        out_file.unlink(missing_ok=True)  # never read an earlier run's verdicts
        job_file.write_text("".join(json.dumps(j) + "\n" for j in shard))
        cmd = [
            str(env.python),
            str(HERE / "framework_runner.py"),
            "--jobs",
            str(job_file),
            "--out",
            str(out_file),
            "--megatron",
            str(env.megatron),
            "--shim",
            str(env.shim),
            "--support",
            str(env.support),
            "--timeout",
            str(timeout),
        ]
        procs.append((subprocess.Popen(cmd), out_file))
    verdicts: dict[str, dict[str, Any]] = {}
    for proc, out_file in procs:
        proc.wait()
        if out_file.is_file():
            for line in out_file.read_text().splitlines():
                result = json.loads(line)
                verdicts[result["id"]] = result
    return verdicts


def _git(args: list[str]) -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    except OSError:
        return ""
    return out.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    workdir = options.workdir.expanduser().resolve()
    started = time.monotonic()
    env = oracle_env.ensure(
        workdir,
        python=options.python,
        torch_spec=options.torch,
        megatron=options.megatron,
        te_recipe=options.te_recipe,
        reinstall=options.reinstall,
    )
    setup_s = time.monotonic() - started

    cases: list[Case] = []
    if options.only in ("all", "targeted"):
        cases += twin_cases()
    if options.only in ("all", "random"):
        cases += random_cases(options.seed, options.count)
    root = workdir / "cases"
    shutil.rmtree(root, ignore_errors=True)
    paths = write(cases, root)
    oracle_env.log(f"{len(cases)} case files under {root}")

    t0 = time.monotonic()
    verdicts = run_frameworks(env, cases, paths, workdir, options.workers, options.timeout)
    framework_s = time.monotonic() - t0
    oracle_env.log(f"frameworks: {len(verdicts)} verdicts in {framework_s:.0f} s")

    t0 = time.monotonic()
    findings, failed = run_fp8lint(
        [paths[c.id] for c in cases], options.fp8lint_python, REPO, workdir
    )
    fp8lint_s = time.monotonic() - t0
    oracle_env.log(f"fp8lint: {fp8lint_s:.0f} s")

    rows = build_rows(cases, paths, verdicts, findings, failed)
    install = env.install
    commit = _git(["rev-parse", "--short", "HEAD"])
    dirty = " (with uncommitted changes)" if _git(["status", "--porcelain", "src", "rules"]) else ""
    header = [
        f"Run {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC: fp8lint at {commit}{dirty}; "
        f"Megatron-LM {oracle_env.MEGATRON_COMMIT[:8]} (`{env.megatron}`); TE recipe module "
        f"{oracle_env.TE_COMMIT[:8]} as TE 2.20.2 (shim); torch {install.get('torch_version')} "
        f"on Python {install.get('python')}, CUDA available: {install.get('cuda_available')}; "
        f"pydantic {install.get('pydantic_version')}.",
        "",
        f"Times: setup {setup_s:.0f} s (the first install took "
        f"{install.get('install_seconds')} s), frameworks {framework_s:.0f} s, "
        f"fp8lint {fp8lint_s:.0f} s; {options.workers} worker(s). Case files: "
        f"`{root}/<case>/`.",
        "",
        "A case counts when the framework accepted or rejected it; fp8lint agrees when it reports"
        " an `error` exactly on the rejected ones (warnings and info are not counted).",
    ]
    no_passing = {f"{t.check} ({t.label})": t.why_no_passing for t in TWINS if t.why_no_passing}
    text = report(rows, skipped=SKIPPED, no_passing=no_passing, header=header, seed=options.seed)
    text = text.replace(str(Path.home()), "~")  # a report names no one's home folder
    print(text)
    for line in summary_lines(rows):
        oracle_env.log(line)
    if options.report:
        options.report.parent.mkdir(parents=True, exist_ok=True)
        options.report.write_text(text + "\n")
        oracle_env.log(f"report written to {options.report}")
    oracle_env.log(f"done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
