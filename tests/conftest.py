from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from fp8lint.diagnostics import Diagnostic
from fp8lint.documents import kind_for
from fp8lint.engine import lint_text
from fp8lint.settings import RunSettings, Selection

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "real"


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


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("FP8LINT_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "fp8lint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


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
