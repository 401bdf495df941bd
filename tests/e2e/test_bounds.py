"""Per-file bounds: a time limit (`--file-timeout`) and a size limit (`--max-file-size`)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fp8lint import engine
from fp8lint.cli import main
from fp8lint.engine import human_size
from fp8lint.engine.config import parse_seconds, parse_size
from fp8lint.settings import RunSettings

from ..conftest import run_cli

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"  # FP8101 at 2:17
# the time limit of the slow-file tests: the slow file waits for it (the alarm is the event),
# and the other files must finish inside it even on a loaded machine
LIMIT = "2"
TIMEOUT = f"checking this file took longer than {LIMIT} s; skipped (raise --file-timeout)"

needs_alarm = pytest.mark.skipif(
    not hasattr(signal, "SIGALRM"), reason="no SIGALRM on this platform"
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


class Slow:
    def __init__(self) -> None:
        self.entered: list[str] = []  # the files the slow parser was entered for
        self.on = True


@pytest.fixture
def slow_parser(monkeypatch: pytest.MonkeyPatch) -> Slow:
    """`slow*.yaml` takes forever to parse (a loop that sleeps) while `.on`; other files
    parse as usual."""
    real = engine.lint.parse_file
    slow = Slow()
    # import the parser, the rules and the fixes now, so that no file's clock includes that
    engine.lint_text("warm.yaml", RISKY, "yaml", RunSettings())

    def parse(file: Any, kind: str, reader: Any = None) -> Any:
        if slow.on and Path(file.path).name.startswith("slow"):
            slow.entered.append(file.path)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                time.sleep(0.01)
            raise AssertionError("the time limit did not stop the parse")
        return real(file, kind, reader)

    monkeypatch.setattr(engine.lint, "parse_file", parse)
    monkeypatch.setenv("FP8LINT_WORKERS", "1")
    return slow


# ----------------------------------------------------------------------------- time limit


@needs_alarm
def test_a_slow_file_is_reported_and_the_run_goes_on(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    slow_parser: Slow,
) -> None:
    write(tmp_path, {"risky.yaml": RISKY, "slow.yaml": RISKY, "z_risky.yaml": RISKY})
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    code, out = check(capsys, ".", "--file-timeout", LIMIT, "--output-format", "concise")
    assert time.monotonic() - started < 60  # the slow parse alone would take 120 s
    assert slow_parser.entered == ["slow.yaml"]
    assert code == 1
    lines = out.splitlines()
    assert f"slow.yaml:1:1: FP8001 [error] {TIMEOUT}" in lines
    # the files before and after it still get their findings
    assert [line.split(" ")[0] for line in lines if "FP8101" in line] == [
        "risky.yaml:2:17:",
        "z_risky.yaml:2:17:",
    ]
    # the alarm is gone: nothing fires later
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None, signal.default_int_handler)


@needs_alarm
def test_a_timeout_is_not_cached(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    slow_parser: Slow,
) -> None:
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    write(tmp_path, {"slow.yaml": RISKY})
    monkeypatch.chdir(tmp_path)
    _, out = check(capsys, ".", "--file-timeout", LIMIT)
    assert TIMEOUT in out
    slow_parser.on = False
    _code, out = check(capsys, ".", "--file-timeout", LIMIT)
    assert "slow.yaml:2:17: FP8101" in out and TIMEOUT not in out


@needs_alarm
def test_the_worker_job_has_the_same_limit(slow_parser: Slow) -> None:
    """`_lint_job` is what each worker process runs."""
    settings = RunSettings(file_timeout=float(LIMIT))
    diags, read = engine.runner._lint_job(("slow.yaml", RISKY, "yaml", settings, True, True))
    assert [(d.code, d.line, d.message) for d in diags] == [("FP8001", 1, TIMEOUT)]
    assert read is None  # not to be cached
    diags, read = engine.runner._lint_job(("fine.yaml", RISKY, "yaml", settings, True, True))
    assert [d.code for d in diags] == ["FP8101"] and read == []


@needs_alarm
def test_fix_mode_leaves_a_slow_file_untouched(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    slow_parser: Slow,
) -> None:
    write(tmp_path, {"risky.yaml": RISKY, "slow.yaml": RISKY})
    monkeypatch.chdir(tmp_path)
    code, out = check(capsys, ".", "--fix", "--unsafe-fixes", "--file-timeout", LIMIT)
    assert (tmp_path / "slow.yaml").read_text() == RISKY
    assert (tmp_path / "risky.yaml").read_text() != RISKY  # fixed
    assert f"slow.yaml:1:1: FP8001 [error] {TIMEOUT}" in out
    assert code == 1
    code, out = check(capsys, ".", "--diff", "--unsafe-fixes", "--file-timeout", LIMIT)
    assert "slow.yaml" not in out


@needs_alarm
def test_the_previous_handler_and_timer_come_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fired: list[int] = []

    def mine(signum: int, frame: Any) -> None:
        fired.append(signum)

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        signal.setitimer(signal.ITIMER_REAL, 1000)
        write(tmp_path, {"risky.yaml": RISKY})
        monkeypatch.chdir(tmp_path)
        check(capsys, ".", "--file-timeout", "60")
        assert signal.getsignal(signal.SIGALRM) is mine
        left, _interval = signal.getitimer(signal.ITIMER_REAL)
        assert 900 < left <= 1000
        # a timer that would have expired meanwhile still fires
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with engine.limits.time_limit(60):
            time.sleep(0.2)
        time.sleep(0.05)
        assert fired == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


@needs_alarm
def test_zero_disables_the_limit_and_threads_do_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = engine.lint.parse_file

    def slowish(file: Any, kind: str, reader: Any = None) -> Any:
        time.sleep(0.3)
        return real(file, kind, reader)

    engine.lint.preload("yaml")
    monkeypatch.setattr(engine.lint, "parse_file", slowish)
    diags, _ = engine.runner._lint_job(
        ("a.yaml", RISKY, "yaml", RunSettings(file_timeout=0), True, True)
    )
    assert [d.code for d in diags] == ["FP8101"]
    # outside the main thread there is no SIGALRM to use: no limit, no error
    out: list[Any] = []
    job = ("a.yaml", RISKY, "yaml", RunSettings(file_timeout=0.1), True, False)
    thread = threading.Thread(target=lambda: out.append(engine.runner._lint_job(job)))
    thread.start()
    thread.join()
    assert [d.code for d in out[0][0]] == ["FP8101"]


def test_file_timeout_in_the_configuration(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.fp8lint]\nfile-timeout = 2.5\n", "a.yaml": RISKY})
    r = run_cli("check", "a.yaml", "--show-settings", cwd=tmp_path)
    data = json.loads(r.stdout)
    assert data["file-timeout"] == 2.5 and data["effective"]["file-timeout"] == 2.5
    r = run_cli("check", "a.yaml", "--show-settings", "--file-timeout", "0", cwd=tmp_path)
    assert json.loads(r.stdout)["effective"]["file-timeout"] == 0


@pytest.mark.parametrize("value", ["-1", '"soon"', "true", "inf"])
def test_a_bad_file_timeout_is_a_configuration_error(tmp_path: Path, value: str) -> None:
    write(
        tmp_path, {"pyproject.toml": f"[tool.fp8lint]\nfile-timeout = {value}\n", "a.yaml": RISKY}
    )
    r = run_cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2
    assert "pyproject.toml" in r.stderr and "`file-timeout`" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_file_timeout_flag_is_a_usage_error(tmp_path: Path, value: str) -> None:
    r = run_cli("check", ".", f"--file-timeout={value}", cwd=tmp_path)
    assert r.returncode == 2 and "--file-timeout" in r.stderr


def test_parse_seconds() -> None:
    assert parse_seconds(0) == 0.0 and parse_seconds(2.5) == 2.5
    for bad in (-0.1, True, "1", None, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            parse_seconds(bad)


# ----------------------------------------------------------------------------- size limit


def test_human_size() -> None:
    assert human_size(16 * 1024 * 1024) == "16 MiB"
    assert human_size(512 * 1024) == "512 KiB"
    assert human_size(2 * 1024**3) == "2 GiB"
    assert human_size(1024) == "1 KiB"
    assert human_size(100) == "100 bytes"
    assert human_size(1) == "1 byte"
    # never rounds up: a file over the limit is over the size shown
    assert human_size(2_000_000) == "1.9 MiB (2000000 bytes)"
    assert human_size(1535) == "1.4 KiB (1535 bytes)"


@pytest.mark.parametrize(
    ("text", "size"),
    [
        (4096, 4096),
        ("4096", 4096),
        ("100B", 100),
        ("16MiB", 16 * 1024 * 1024),
        ("512 KiB", 512 * 1024),
        ("512kib", 512 * 1024),
        ("2MB", 2_000_000),
        ("1kB", 1000),
        ("1.5GiB", 3 * 1024**3 // 2),
    ],
)
def test_parse_size(text: object, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "", "lots", "16 MiBs", "1e3", "0KiB", None])
def test_parse_size_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_size(bad)


def test_a_file_just_over_a_configured_limit(tmp_path: Path) -> None:
    body = RISKY + "#" * (1024 - len(RISKY) - 1) + "\n"
    assert len(body) == 1024
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fp8lint]\nmax-file-size = "1KiB"\n',
            "at_limit.yaml": body,
            "over.yaml": body + "\n",
        },
    )
    r = run_cli("check", ".", "--output-format", "json", cwd=tmp_path)
    found = {(d["filename"], d["code"]): d["message"] for d in json.loads(r.stdout)}
    assert found[("over.yaml", "FP8001")] == (
        "file too large: over 1 KiB (not read; raise the limit with --max-file-size or "
        "`max-file-size`)"
    )
    assert ("at_limit.yaml", "FP8101") in found
    assert ("over.yaml", "FP8101") not in found


def test_the_flag_wins_over_the_configuration(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": '[tool.fp8lint]\nmax-file-size = "1KiB"\n', "a.yaml": RISKY * 40},
    )
    r = run_cli("check", "a.yaml", "--output-format", "concise", cwd=tmp_path)
    assert "over 1 KiB" in r.stdout
    r = run_cli(
        "check", "a.yaml", "--max-file-size", "2MB", "--output-format", "concise", cwd=tmp_path
    )
    assert "too large" not in r.stdout and "FP8101" in r.stdout
    r = run_cli(
        "check", "a.yaml", "--max-file-size", "100", "--output-format", "concise", cwd=tmp_path
    )
    assert "file too large: over 100 bytes" in r.stdout


def test_the_message_under_one_mebibyte(tmp_path: Path) -> None:
    """It used to say "over 0 MiB"."""
    write(tmp_path, {"a.yaml": RISKY + "#" * 600_000 + "\n"})
    r = run_cli("check", "a.yaml", "--max-file-size", "512KiB", cwd=tmp_path)
    assert "file too large: over 512 KiB" in r.stdout
    assert "0 MiB" not in r.stdout


def test_a_nested_configuration_sets_its_own_limit(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.fp8lint]\n",
            "big.yaml": RISKY * 40,
            "sub/fp8lint.toml": "max-file-size = 200\n",
            "sub/big.yaml": RISKY * 40,
        },
    )
    r = run_cli("check", ".", "--output-format", "concise", cwd=tmp_path)
    assert "sub/big.yaml:1:1: FP8001 [error] file too large: over 200 bytes" in r.stdout
    assert "big.yaml:1:1: FP8001" not in r.stdout.replace("sub/big.yaml", "")


@pytest.mark.parametrize("value", ['"lots"', "0", "true", "1.5", '"16 MiBs"'])
def test_a_bad_max_file_size_is_a_configuration_error(tmp_path: Path, value: str) -> None:
    write(
        tmp_path, {"pyproject.toml": f"[tool.fp8lint]\nmax-file-size = {value}\n", "a.yaml": RISKY}
    )
    r = run_cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2
    assert "pyproject.toml" in r.stderr and "`max-file-size`" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_bad_max_file_size_flag_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("check", ".", "--max-file-size", "12XB", cwd=tmp_path)
    assert r.returncode == 2
    assert "--max-file-size" in r.stderr and "not a size" in r.stderr


def test_show_settings_reports_the_limits(tmp_path: Path) -> None:
    write(tmp_path, {"fp8lint.toml": 'max-file-size = "2MiB"\n', "a.yaml": RISKY})
    r = run_cli("check", "a.yaml", "--show-settings", cwd=tmp_path)
    data = json.loads(r.stdout)
    assert data["max-file-size"] == 2 * 1024 * 1024
    assert data["effective"]["max-file-size"] == 2 * 1024 * 1024
    assert data["effective"]["file-timeout"] == 60


# ------------------------------------------------- every read on a config's behalf is bounded


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


@needs_fifo
@pytest.mark.parametrize("target", ["/dev/zero", "pipe.toml"])
def test_extend_never_reads_a_device_or_waits_on_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    """`extend = "/dev/zero"` used to read until memory ran out; a FIFO hung forever."""
    fifo(tmp_path / "pipe.toml")
    (tmp_path / "pyproject.toml").write_text(f'[tool.fp8lint]\nextend = "{target}"\n')
    (tmp_path / "risky.yaml").write_text(RISKY)
    monkeypatch.chdir(tmp_path)
    code = main(["check", "risky.yaml"])
    err = capsys.readouterr().err
    assert code == 2
    assert "not a regular file (pipe, socket or device): not read" in err


@needs_fifo
def test_config_option_pointing_at_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo(tmp_path / "cfg.toml")
    (tmp_path / "risky.yaml").write_text(RISKY)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "risky.yaml", "--config", "cfg.toml"]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_huge_extended_configuration_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "big.toml").write_text("# " + "x" * (2 * 1024 * 1024) + "\n")
    (tmp_path / "pyproject.toml").write_text('[tool.fp8lint]\nextend = "big.toml"\n')
    (tmp_path / "risky.yaml").write_text(RISKY)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "risky.yaml"]) == 2
    assert "big.toml: over 1 MiB: not read" in capsys.readouterr().err


@needs_fifo
@pytest.mark.parametrize("kind", ["fifo", "device", "huge"])
def test_hydra_parents_are_bounded_like_linted_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A `defaults:` parent that is a FIFO, a device or over the size limit is not read: the
    run neither hangs nor reads without end, and the child is linted on its own, with what
    the parent could set (here the recipe) unknown rather than defaulted (issue 19)."""
    conf = tmp_path / "conf"
    conf.mkdir()
    if kind == "fifo":
        fifo(conf / "base.yaml")
    elif kind == "device":
        os.symlink("/dev/zero", conf / "base.yaml")
    else:
        (conf / "base.yaml").write_text("model:\n  fp8_margin: 0\n" + "# pad\n" * 300_000)
    (conf / "child.yaml").write_text(
        "defaults:\n  - base\n  - _self_\nmodel:\n  transformer_engine: true\n  fp8: true\n"
        "  fp8_hybrid: true\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n"
    )
    monkeypatch.chdir(tmp_path)
    code = main(
        ["check", "conf/child.yaml", "--max-file-size", "1MiB", "--output-format", "concise"]
    )
    out = capsys.readouterr().out
    assert "FP8101" not in out and "base.yaml" not in out
    assert code == 0
    if kind == "huge":
        return  # `show` has no size limit option: it would read this parent
    assert main(["show", "conf/child.yaml"]) == 0
    shown = capsys.readouterr().out
    recipe = next(line for line in shown.splitlines() if line.strip().startswith("recipe "))
    assert "unknown" in recipe and "not read" in recipe and "`base` may set it" in recipe
