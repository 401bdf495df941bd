"""Hostile inputs, one fresh `fp8lint check` process each: time, peak memory, exit code, verdict.

    python3 bench/hostile.py [--fp8lint 'python3 -m fp8lint'] [--timeout 60] [--only TEXT]

Builds every input in a temporary folder (nothing here comes from outside the project), runs
`fp8lint check --no-cache CASE` on it, and prints a Markdown table. A verdict is `ok` when the
run ended within the timeout, with exit code 0, 1 or 2, under 1 GiB, with no Python traceback
on either stream, and, where a diagnostic was expected, with one that names the file (and, for
the rows of issue 20: a `--fix` that must leave the file byte-identical, a value from a file
outside the repository that must not be printed, no forged workflow command). The test
suite checks the same behaviours without timing them (tests/e2e/test_hostile.py,
tests/e2e/test_bounds.py); this script is for the numbers. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

RISKY = (
    "trainer:\n  devices: 8\nmodel:\n  transformer_engine: true\n  fp8: true\n"
    "  fp8_hybrid: true\n  fp8_margin: 0\n  fp8_amax_history_len: 1\n"
    "  fp8_amax_compute_algo: most_recent\n"
)
RECIPE = (
    "from transformer_engine.common.recipe import DelayedScaling\n"
    "recipe = DelayedScaling(margin=0, amax_history_len=1, amax_compute_algo='most_recent')\n"
)
Case = tuple[str, Callable[[Path], list[str]], str]  # name, build -> argv, expected outcome


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _big(path: Path, head: str, line: str, count: int, tail: str) -> Path:
    """A large file written in chunks, so this process stays small: a child's peak memory
    starts from its parent's at fork, and the table must show fp8lint's own."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        fh.write(head)
        chunk = line * 10_000
        for _ in range(count // 10_000):
            fh.write(chunk)
        fh.write(line * (count % 10_000) + tail)
    return path


def _project(root: Path, extend: str) -> list[str]:
    _write(root / "pyproject.toml", f'[tool.fp8lint]\nextend = "{extend}"\n')
    _write(root / "model.yaml", RISKY)
    return [str(root / "model.yaml")]


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _bomb() -> str:
    lines = ["a0: &a0 [fp8, fp8, fp8, fp8, fp8, fp8, fp8, fp8, fp8]"]
    for i in range(1, 10):
        prev = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{prev}]")
    return "\n".join(lines) + "\nmodel:\n  fp8: true\n"


def cases() -> list[Case]:
    rnd = random.Random(0)
    return [
        (
            "binary bytes named model.yaml (64 KiB)",
            lambda d: [
                str(
                    _write(
                        d / "model.yaml", bytes(rnd.randrange(256) for _ in range(65536)) + b"fp8"
                    )
                )
            ],
            "FP8001",
        ),
        (
            "UTF-16 YAML with a BOM",
            lambda d: [str(_write(d / "model.yaml", RISKY.encode("utf-16")))],
            "findings",
        ),
        (
            "Latin-1 bytes in a UTF-8 YAML",
            lambda d: [str(_write(d / "model.yaml", RISKY.encode() + b"name: caf\xe9\n"))],
            "FP8001",
        ),
        (
            "truncated YAML (open quote)",
            lambda d: [str(_write(d / "model.yaml", RISKY + 'name: "abc\n'))],
            "FP8001",
        ),
        (
            "Python syntax error in a recipe",
            lambda d: [
                str(
                    _write(
                        d / "recipe.py",
                        "from transformer_engine.common.recipe import "
                        "DelayedScaling\nr = DelayedScaling(margin=\n",
                    )
                )
            ],
            "FP8001",
        ),
        (
            "50 MB YAML (FP8 keys, padded)",
            lambda d: [str(_big(d / "model.yaml", RISKY, "# pad\n", 8_000_000, "pad: 1\n"))],
            "FP8001",
        ),
        (
            "YAML nested 100,000 deep",
            lambda d: [
                str(_write(d / "model.yaml", "fp8: " + "[" * 100_000 + "]" * 100_000 + "\n"))
            ],
            "FP8001",
        ),
        (
            "JSON nested 100,000 deep",
            lambda d: [str(_write(d / "c.json", '{"fp8": ' + "[" * 100_000 + "]" * 100_000 + "}"))],
            "FP8001",
        ),
        (
            "Python recipe nested 100,000 brackets",
            lambda d: [
                str(
                    _write(d / "r.py", RECIPE + "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n")
                )
            ],
            "FP8001",
        ),
        (
            "Python recipe with a chain of 100,000 operators",
            lambda d: [str(_write(d / "r.py", RECIPE + "x = " + "+".join(["1"] * 100_000) + "\n"))],
            "any",
        ),
        ("YAML alias bomb (9^10 nodes)", lambda d: [str(_write(d / "model.yaml", _bomb()))], "any"),
        (
            "OmegaConf interpolation cycle",
            lambda d: [
                str(
                    _write(
                        d / "model.yaml",
                        RISKY + "  hidden_size: ${model.ffn}\n  ffn: ${model.hidden_size}\n",
                    )
                )
            ],
            "findings",
        ),
        (
            "Hydra defaults cycle (a -> b -> a)",
            lambda d: [
                str(_write(d / "conf/a.yaml", "defaults:\n  - b\n  - _self_\n" + RISKY)),
                str(_write(d / "conf/b.yaml", "defaults:\n  - a\n  - _self_\nx: 1\n")),
            ][:1],
            "findings",
        ),
        (
            "Hydra defaults parent outside the repository",
            lambda d: (
                subprocess.run(["git", "init", "-q", str(d / "repo")], check=True),
                [
                    str(
                        _write(
                            d / "repo/conf/a.yaml",
                            "defaults:\n  - ../../../../../etc/passwd\n  - _self_\n" + RISKY,
                        )
                    )
                ],
            )[1],
            "findings",
        ),
        ("`extend` = /dev/zero", lambda d: _project(d, "/dev/zero"), "config error"),
        ("`extend` = a FIFO", lambda d: _project(d, str(_fifo(d / "fifo.toml"))), "config error"),
        (
            "FIFO named model.yaml, given explicitly",
            lambda d: [str(_fifo(d / "model.yaml"))],
            "warning",
        ),
        ("/dev/zero given explicitly", lambda d: ["/dev/zero"], "warning"),
        (
            "directory-loop link named x.yaml",
            lambda d: (os.symlink(".", d / "x.yaml"), [str(d / "x.yaml")])[1],
            "any",
        ),
        (
            "file name holding a newline and `::error::`",
            lambda d: [str(_write(d / "a\n::error::forged.yaml", RISKY))],
            "findings",
        ),
        (
            "10 MB JSON on one line",
            lambda d: [str(_big(d / "c.json", '{"fp8": true, "pad": "', "x", 10_000_000, '"}'))],
            "any",
        ),
        (
            "shell script with 100,000 continuation lines",
            lambda d: [
                str(
                    _big(
                        d / "run.sh",
                        "torchrun pretrain_gpt.py --fp8-format hybrid \\\n",
                        "  --log-interval 1 \\\n",
                        100_000,
                        "  --seed 1\n",
                    )
                )
            ],
            "any",
        ),
        (
            "notes.txt given explicitly",
            lambda d: [str(_write(d / "notes.txt", "fp8: true\n"))],
            "warning",
        ),
        ("empty directory", lambda d: [str((d / "empty").mkdir() or d / "empty")], "warning"),
        # issue 20
        (
            "--fix --unsafe-fixes on a mapping that two keys alias",
            lambda d: ["--fix", "--unsafe-fixes", str(_write(d / "b.yaml", SHARED))],
            "unchanged",
        ),
        (
            "--fix on a Megatron command in a here-document",
            lambda d: ["--fix", "--unsafe-fixes", str(_write(d / "run.sh", HEREDOC))],
            "unchanged",
        ),
        ("walked link to a file outside the repository", _link_out, "no:7331"),
        ("launch --config-name linked outside the repository", _config_out, "no:7331"),
        ("a file and a link to it, --fix --unsafe-fixes", _twins, "exit0"),
        (
            "YAML keys holding a newline, `::error`, ESC and U+202E (github format)",
            lambda d: [
                "--output-format",
                "github",
                str(
                    _write(
                        d / "keys.yaml",
                        'args: {"fp8-x\\n::error file=README.md,line=1::FORGED\\e[2J\\u202e": 1}\n',
                    )
                ),
            ],
            "no-forged",
        ),
        (
            "chain of 2,000 `${.cN}` interpolations",
            lambda d: [str(_write(d / "model.yaml", _chain(2000)))],
            "any",
        ),
        (
            "4,000 YAML documents in one file",
            lambda d: [str(_write(d / "model.yaml", "---\n".join([RISKY] * 4000)))],
            "any",
        ),
        (
            "20,000 DelayedScaling calls in one recipe",
            lambda d: [str(_big(d / "r.py", RECIPE, "DelayedScaling(margin=0)\n", 20_000, ""))],
            "any",
        ),
    ]


SHARED = (
    "base: &b\n  fp8: true\n  fp8_hybrid: true\n  fp8_margin: 0\nmodel: *b\nablation_no_fp8: *b\n"
)
HEREDOC = (
    "cat > job.sh <<EOF\npython pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1\n"
    "EOF\nsbatch job.sh\n"
)
OUTSIDE = RISKY.replace("fp8_amax_history_len: 1", "fp8_amax_history_len: 7331")


def _repo(d: Path) -> Path:
    (d / "repo" / ".git").mkdir(parents=True)
    _write(d / "outside" / "gpt.yaml", OUTSIDE)
    return d / "repo"


def _link_out(d: Path) -> list[str]:
    repo = _repo(d)
    os.symlink(d / "outside" / "gpt.yaml", repo / "out.yaml")
    return [str(repo)]


def _config_out(d: Path) -> list[str]:
    repo = _repo(d)
    (repo / "conf").mkdir()
    os.symlink(d / "outside" / "gpt.yaml", repo / "conf" / "gpt.yaml")
    script = (
        "python megatron_gpt_pretraining.py --config-path=conf --config-name=gpt model.fp8=True\n"
    )
    return [str(_write(repo / "run.sh", script))]


def _twins(d: Path) -> list[str]:
    repo = _repo(d)
    _write(repo / "real.yaml", RISKY)
    os.symlink("real.yaml", repo / "alias.yaml")
    return ["--fix", "--unsafe-fixes", str(repo)]


def _chain(n: int) -> str:
    lines = [RISKY, "  c0: 1\n"] + [f"  c{i}: ${{.c{i - 1}}}\n" for i in range(1, n)]
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fp8lint", default=f"{sys.executable} -m fp8lint")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--only", default="", help="run the rows whose name holds this text")
    args = parser.parse_args(argv)
    base = shlex.split(args.fp8lint)
    rows = [
        "| input | wall s | peak MB | exit | first line of output | verdict |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name, build, expect in cases():
        if args.only not in name:
            continue
        with tempfile.TemporaryDirectory(prefix="fp8lint-hostile-") as tmp:
            work = Path(tmp)
            targets = build(work)
            cmd = [*base, "check", "--no-cache", *targets]
            files = [Path(t) for t in targets if Path(t).is_file()]
            before = [f.read_bytes() for f in files]
            wall, rss, code, hung, out = _run(cmd, work, args.timeout)
            text = out.decode("utf-8", "backslashreplace")
            kept = [f.read_bytes() for f in files] == before
            first = next((ln for ln in text.splitlines() if ln.strip()), "")
            first = first.replace(str(work), "TMP").replace("|", "\\|")[:110]
            ok = (
                not hung
                and code in (0, 1, 2)
                and "Traceback" not in text
                and rss < 1024 * 1024
                and (expect != "FP8001" or "FP8001" in text)
                and (expect != "unchanged" or kept)
                and (expect != "exit0" or code == 0)
                and not (expect.startswith("no:") and expect[3:] in text)
                and not (expect == "no-forged" and "\n::error file=README.md" in text)
            )
            verdict = "hang" if hung else ("ok" if ok else "FAIL")
            mb = f"{rss / 1024:.0f}"
            rows.append(f"| {name} | {wall:.2f} | {mb} | {code} | `{first}` | {verdict} |")
            print(rows[-1], file=sys.stderr)
    print("\n".join(rows))
    return 0


def _run(cmd: list[str], cwd: Path, timeout: float) -> tuple[float, int, int, bool, bytes]:
    """(wall s, peak RSS KB, exit code, hung, stdout + stderr) of one child, killed at
    `timeout`.  The peak is the child program's own: its `VmHWM` polled from /proc (exec
    starts a new address space), because Linux's `ru_maxrss` for a child counts this
    process's size at fork too, which hid every peak under the biggest input built so far;
    `ru_maxrss` (os.wait4) only where /proc has nothing."""
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        hung = False
        peak = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _hwm(proc.pid))
            if time.perf_counter() - start > timeout:
                hung = True
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        return wall, peak or usage.ru_maxrss, proc.returncode, hung, log.read()


def _hwm(pid: int) -> int:
    """The peak resident size in KB of process `pid` so far (0 where /proc cannot say)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
