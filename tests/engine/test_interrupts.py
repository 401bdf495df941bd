"""Ctrl-C and long runs: a run with worker processes stops at once and says what it did; an
interrupted --fix lists the files it already changed; progress appears only on a terminal."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fp8lint.engine import workers

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"

# A run where checking `slow*` files blocks for five minutes: without the interrupt
# handling, Ctrl-C would wait for the workers (and this test would hit its own timeout).
SLOW_PARSE = """
import sys, time
from fp8lint.engine import lint
real = lint.parse_file
def parse(file, kind, reader=None):
    if "slow" in file.path:
        open(sys.argv[1], "a").close()  # tell the test we are stuck in a slow file
        time.sleep(300)
    return real(file, kind, reader)
lint.parse_file = parse
from fp8lint.cli import main
raise SystemExit(main(sys.argv[2:]))
"""

SLOW_FIX = """
import sys, time
from fp8lint.engine import runner
real = runner.fix_text
def fix(path, text, kind, settings, unsafe):
    if "slow" in path:
        open(sys.argv[1], "a").close()
        time.sleep(300)
    return real(path, text, kind, settings, unsafe)
runner.fix_text = fix
from fp8lint.cli import main
raise SystemExit(main(sys.argv[2:]))
"""

needs_sigint = pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name == "nt", reason="POSIX")


def interrupt(
    code: str,
    marker: Path,
    args: list[str],
    cwd: Path,
    sig: int = signal.SIGINT,
    pooled: bool = True,
) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FP8LINT_DEBUG", "CI")}
    env.update(FP8LINT_WORKERS="2", FP8LINT_NO_CACHE="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(marker), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"never reached the slow file:\n{out}\n{err}")
        time.sleep(0.05)
    time.sleep(0.2)
    children = _children(proc.pid)
    assert bool(children) == pooled, children
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the signal did not stop the run")
    deadline = time.monotonic() + 60  # the loop ends as soon as they are gone
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in children if _alive(pid)], "workers outlived the run"
    return proc.returncode, out, err


def _children(pid: int) -> list[int]:
    """The processes `pid` started (Linux's /proc; empty elsewhere)."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(c) for c in task.read_text().split()]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@needs_sigint
def test_ctrl_c_with_worker_processes_stops_and_reports(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(300):  # enough for workers to read, prefilter and lint
        (tree / f"f{i:03}.yaml").write_text(RISKY)
    (tree / "slow.yaml").write_text(RISKY)
    code, _out, err = interrupt(SLOW_PARSE, tmp_path / "stuck", ["check", "tree"], tmp_path)
    assert code == 130
    assert "fp8lint: interrupted; the report covers the " in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    done = int(err.split("the report covers the ")[1].split()[0])
    # a tree is found in batches as it is checked: this one fits in the first
    assert 0 <= done < 301 and "of 301 files found so far, done before it" in err


@needs_sigint
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_sigterm_with_worker_processes_stops_them_and_reports(tmp_path: Path) -> None:
    """SIGTERM to the parent used to leave its workers running for the rest of their files,
    each ending in a BrokenPipeError traceback."""
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(300):
        (tree / f"f{i:03}.yaml").write_text(RISKY)
    (tree / "slow.yaml").write_text(RISKY)
    code, _out, err = interrupt(
        SLOW_PARSE, tmp_path / "stuck", ["check", "tree"], tmp_path, signal.SIGTERM
    )
    assert code == 143, err
    assert "fp8lint: terminated; the report covers the " in err
    assert "Traceback" not in err and "BrokenPipeError" not in err


@needs_sigint
def test_an_interrupted_fix_lists_the_files_it_changed(tmp_path: Path) -> None:
    for name in ("a1.yaml", "a2.yaml", "b_slow.yaml", "c.yaml"):
        (tmp_path / name).write_text(RISKY)
    code, _out, err = interrupt(
        SLOW_FIX,
        tmp_path / "stuck",
        ["check", "--fix", "--unsafe-fixes", "."],
        tmp_path,
        pooled=False,  # four files: checked in this process
    )
    assert code == 130
    assert "files already changed by --fix:\n  a1.yaml\n  a2.yaml\n" in err
    for name in ("a1.yaml", "a2.yaml"):
        assert "--fp8-amax-history-len: 1024" in (tmp_path / name).read_text()
    for name in ("b_slow.yaml", "c.yaml"):
        assert (tmp_path / name).read_text() == RISKY  # untouched


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workers, "PROGRESS_DELAY_S", 0.0)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("FP8LINT_NO_PROGRESS", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with workers.Progress(3, "checking") as bar:
        bar.update(3)
    drawn = terminal.getvalue()
    assert "checking:" in drawn and "/3 [" in drawn and "file" in drawn

    monkeypatch.setenv("CI", "true")
    ci = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", ci)
    with workers.Progress(3) as bar:
        bar.update(3)
    assert ci.getvalue() == ""

    monkeypatch.delenv("CI")
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    with workers.Progress(3) as bar:
        bar.update(3)
    assert piped.getvalue() == ""


def test_piped_runs_import_no_progress_library(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(RISKY)
    code = (
        "import sys; before = set(sys.modules); from fp8lint.cli import main; "
        "main(['check', '-q', sys.argv[1]]); "
        "print('TQDM=' + str('tqdm' in set(sys.modules) - before))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert r.stdout.strip().splitlines()[-1] == "TQDM=False"
