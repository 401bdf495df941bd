"""Start-up of a pre-commit-style call on a file without FP8 settings, with and without a
`[tool.fp8lint]` configuration: is a remembered (validated before) configuration as cheap as
none at all?

    python3 bench/config_startup.py [--rounds 15] [--base OTHER_CHECKOUT/src]

Rows: `python3 -c pass`; no configuration file; `[tool.fp8lint]` (with rule options) remembered
from an earlier run; the same with `--no-cache` (validated by pydantic every time); and, with
--base, the same calls on another checkout (its `src` first on PYTHONPATH).  Every call is a
fresh process on byte-compiled modules (in a temporary PYTHONPYCACHEPREFIX, nothing written
into the checkout), rows alternate on every round, and the figure is the child's CPU time
(user + system, os.wait4), steadier than wall time on a shared machine.  Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = (
    "[project]\nname = 'x'\n[tool.fp8lint]\nselect = ['FP81', 'FP82']\n"
    "max-file-size = '1MiB'\n[tool.fp8lint.options]\nmin-margin = 3\n"
)
NOT_FP8 = "model:\n  hidden_size: 4096\n"


def cpu_ms(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    proc = subprocess.Popen(
        args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(args)} in {cwd}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--base", default=None, help="another checkout's src folder")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        bare, project = top / "bare", top / "project"
        for folder in (bare, project):
            folder.mkdir()
            (folder / "a.yaml").write_text(NOT_FP8)
        (project / "pyproject.toml").write_text(CONFIG)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FP8LINT_", "PYTHON"))}
        env["PYTHONPYCACHEPREFIX"] = str(top / "pyc")
        check = [sys.executable, "-m", "fp8lint", "check", "--force-exclude", "a.yaml"]
        rows: list[tuple[str, Path, list[str], dict[str, str]]] = [
            ("python -c pass", bare, [sys.executable, "-c", "pass"], env),
            ("no configuration file", bare, check, env),
            ("[tool.fp8lint], remembered", project, check, env),
            ("[tool.fp8lint], --no-cache (validated)", project, [*check, "--no-cache"], env),
        ]
        if opts.base:
            base_env = {**env, "PYTHONPATH": os.path.abspath(opts.base)}
            rows += [
                ("base: no configuration file", bare, check, base_env),
                ("base: [tool.fp8lint]", project, check, base_env),
            ]
        for _warm_up in range(2):  # byte-compile; fill the cache and the memo
            for _name, cwd, args, row_env in rows:
                cpu_ms(args, cwd, row_env)
        times: dict[str, list[float]] = {name: [] for name, *_ in rows}
        for _round in range(opts.rounds):
            for name, cwd, args, row_env in rows:
                times[name].append(cpu_ms(args, cwd, row_env))
    for name, values in times.items():
        print(f"{name:42s} CPU ms: min {min(values):6.1f}  median {statistics.median(values):6.1f}")


if __name__ == "__main__":
    main()
