from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Generator, Iterable, Sequence
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from fp8lint.diagnostics import Diagnostic
from fp8lint.documents import kind_for
from fp8lint.engine import lint_text
from fp8lint.settings import RunSettings, Selection

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "real"

# No per-example time limit for any property (hypothesis' default is 200 ms): on a loaded
# machine a slow example is not a failure.  Example counts stay as each test sets them.
hypothesis_settings.register_profile("fp8lint", deadline=None)
hypothesis_settings.load_profile("fp8lint")


@pytest.hookimpl(hookwrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, None, None]:
    """Parallel by default: one worker per core (`-n auto`, each file kept whole in one worker,
    so that a module's fixtures are built once) when pytest-xdist is installed, as the `test`
    extra installs it.  `-n 0` (or `-p no:xdist`) runs in this process; without xdist the run
    is serial.  (A wrapper: it runs before xdist's own hook reads the option.)"""
    option = config.option
    if (
        config.pluginmanager.hasplugin("xdist")
        and not hasattr(config, "workerinput")
        and getattr(option, "numprocesses", 0) is None
        and not option.collectonly
        and not option.usepdb
    ):
        option.numprocesses = "auto"
        if option.dist == "no":
            option.dist = "loadfile"
    if not hasattr(config, "workerinput"):
        _byte_compile_the_package()
    yield


def _byte_compile_the_package() -> None:
    """Byte-compile fp8lint's own modules once, before any test starts a `fp8lint` process:
    where PYTHONDONTWRITEBYTECODE is set (as on some CI images) an editable install has no
    `.pyc` files, and every one of the suite's few hundred subprocesses compiled all the
    modules it imported again.  Python reads `.pyc` files even with the variable set."""
    import compileall

    import fp8lint

    package = Path(fp8lint.__file__).resolve().parent
    if sys.dont_write_bytecode and os.access(package, os.W_OK):
        compileall.compile_dir(package, quiet=2)


def lint(
    filename: str,
    text: str,
    select: Iterable[str] | None = None,
    options: dict[str, dict[str, object]] | None = None,
) -> list[Diagnostic]:
    """Diagnostics for one in-memory file, as `fp8lint check` would report them."""
    kind = kind_for(filename)
    assert kind is not None, filename
    settings = RunSettings(
        selection=Selection(select=tuple(select) if select is not None else None),
        options=options or {},
    )
    diags, _ = lint_text(filename, text, kind, settings)
    return sorted(diags, key=Diagnostic.sort_key)


def run_cli(
    *args: str, cwd: Path | None = None, process: bool = False, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`fp8lint ARGS` in `cwd`: exit status, stdout and stderr as `python -m fp8lint` gives
    them.  In this process (a launch costs a quarter of a second, and the suite makes
    hundreds), except with `process=True` or arguments that would read this process's own
    standard input (`-` without `input`, `/dev/...`): a test of the entry point, signals,
    start-up imports or a state kept per process (the code fingerprint of the cache) asks for
    a real process.  `input`: the text on standard input."""
    if process or any(a.startswith("/dev/") or (a == "-" and input is None) for a in args):
        return _run_cli_process(args, cwd, input)
    return _run_cli_here(args, cwd, input)


def _run_cli_process(
    args: Sequence[str], cwd: Path | None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("FP8LINT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fp8lint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
        input=input,
    )


def _run_cli_here(
    args: Sequence[str], cwd: Path | None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`main(args)` with what a child process would have: the environment less
    FP8LINT_DEBUG, `cwd`, a terminal size of none (80 columns), piped UTF-8 streams; the text
    read back as `subprocess.run(text=True)` reads it (universal newlines)."""
    from fp8lint.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    streams = sys.stdin, sys.stdout, sys.stderr
    here = os.getcwd()
    saved = {k: os.environ.get(k) for k in ("FP8LINT_DEBUG", "COLUMNS", "LINES")}
    os.environ.pop("FP8LINT_DEBUG", None)
    os.environ.setdefault("COLUMNS", "80")  # a pipe has no size: shutil's fallback
    os.environ.setdefault("LINES", "24")
    piped = (  # kept referenced: a wrapper collected closes its buffer
        io.TextIOWrapper(out, encoding="utf-8", write_through=True),
        io.TextIOWrapper(err, encoding="utf-8", write_through=True),
    )
    sys.stdout, sys.stderr = piped
    if input is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(input.encode("utf-8")), encoding="utf-8")
    try:
        if cwd is not None:
            os.chdir(cwd)
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: --help, --version, a usage error
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
        os.chdir(here)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def text(stream: io.BytesIO) -> str:
        return stream.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")

    result = subprocess.CompletedProcess(
        [sys.executable, "-m", "fp8lint", *args], code, text(out), text(err)
    )
    for stream in piped:
        stream.detach()
    return result


@pytest.fixture(autouse=True)
def _no_cache_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`fp8lint check` caches results in `.fp8lint_cache` of the working directory: the suite
    runs without it (nothing written into the checkout or the shared corpus) except where a
    test deletes FP8LINT_NO_CACHE (tests/test_cache.py).  The cache's secret goes to a
    folder of the test run, never the user's home."""
    monkeypatch.setenv("FP8LINT_NO_CACHE", "1")
    monkeypatch.delenv("FP8LINT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
    from fp8lint.engine.cache_files import seal_for

    seal_for.cache_clear()


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus/real is not present (it is only in the development tree)")
    return CORPUS
