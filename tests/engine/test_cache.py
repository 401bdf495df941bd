"""The on-disk cache of `fp8lint check` (`.fp8lint_cache`, as ruff's `.ruff_cache`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fp8lint.cli import main
from fp8lint.diagnostics import (
    Applicability,
    Diagnostic,
    Fix,
    Related,
    Severity,
    TextEdit,
)
from fp8lint.engine import cache as cache_mod
from fp8lint.engine import cache_keys
from fp8lint.engine import lint as lint_module
from fp8lint.engine import runner as run_module
from fp8lint.engine.cache_files import Seal, seal_for
from fp8lint.report import OUTPUT_FORMATS

from ..conftest import run_cli

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"  # FP8101 at 2:17
GOOD = (
    "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
    "  --fp8-amax-compute-algo: max\n"
)
E4M3 = GOOD.replace("hybrid", "e4m3")  # FP8206
NEMO_BASE = (
    "trainer:\n  devices: 8\n  num_nodes: 2\n"
    "model:\n  transformer_engine: true\n  fp8: false\n  fp8_hybrid: true\n"
    "  fp8_margin: 0\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n"
    "  tensor_model_parallel_size: 2\n"
)
NEMO_TOP = "defaults:\n  - base\n  - _self_\nmodel:\n  fp8: true\n"
SCRIPT = (
    "python megatron_gpt_pretraining.py --config-path=../conf --config-name=gpt \\\n"
    "    model.fp8=True\n"
)
TREE = {
    "risky.yaml": RISKY,
    "e4m3.yaml": E4M3,
    "good.yaml": GOOD,
    "notes.yaml": "model:\n  hidden_size: 4096\n",  # no FP8 settings: a "nothing here" entry
    "ds.json": '{"fp8": {"enabled": true}}\n',
    "titan.toml": '[model]\nconverters = ["float8"]\n',
    "launch.sh": "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 4\n",
    "conf/base.yaml": NEMO_BASE,
    "conf/top.yaml": NEMO_TOP,
    "conf/gpt.yaml": NEMO_BASE,
    "scripts/run.sh": SCRIPT,
}


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tree in the working directory, with the cache on (the suite turns it off)."""
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    monkeypatch.setenv("FP8LINT_WORKERS", "1")
    monkeypatch.chdir(tmp_path)
    write(tmp_path, TREE)
    return tmp_path


class Parses:
    """Counts the files the engine parses (a cache hit parses nothing)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        real = lint_module.parse_file

        def counting(file: object, kind: str, reader: object = None) -> object:
            self.paths.append(file.path)  # type: ignore[attr-defined]
            return real(file, kind, reader)  # type: ignore[arg-type]

        monkeypatch.setattr(lint_module, "parse_file", counting)

    def take(self) -> list[str]:
        out, self.paths = sorted(self.paths), []
        return out


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def shards(root: Path) -> list[Path]:
    return sorted((root / ".fp8lint_cache").glob("*/*/*.json"))


def _seal(shard: Path) -> Seal:
    seal = seal_for(str(shard.parents[2]))
    assert seal is not None
    return seal


def unsealed(shard: Path) -> Any:
    """A cache file's JSON, after checking its seal."""
    opened = _seal(shard).open(str(shard))
    assert opened is not None, f"{shard} is not sealed"
    return json.loads(opened[0])


def write_sealed(shard: Path, data: bytes) -> None:
    """Damage written as this user's fp8lint would write it: what lies under the seal must
    be checked too."""
    shard.write_bytes(_seal(shard).seal(data))


def entries(root: Path) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for shard in shards(root):
        out.update(unsealed(shard)["entries"])
    return out


def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(file: object, kind: str, reader: object = None) -> object:
        raise AssertionError("parsed although the result is cached")

    monkeypatch.setattr(lint_module, "parse_file", refuse)


# ----------------------------------------------------------------------------- hits


FORMATS = OUTPUT_FORMATS  # every format the renderer has


@pytest.mark.parametrize("fmt", FORMATS)
def test_second_run_is_served_from_the_cache_byte_for_byte(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    fresh = check(capsys, ".", "--no-cache", "--output-format", fmt)
    assert not (project / ".fp8lint_cache").exists()  # --no-cache writes nothing
    first = check(capsys, ".", "--output-format", fmt)
    assert first == fresh
    assert fresh[0] == 1 and fresh[1]
    no_parsing(monkeypatch)
    assert check(capsys, ".", "--output-format", fmt) == fresh


def test_cache_directory_layout(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check(capsys, ".")
    root = project / ".fp8lint_cache"
    tag = (root / "CACHEDIR.TAG").read_text()
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    assert (root / ".gitignore").read_text().splitlines()[-1] == "*"
    # every file has an entry, the one without FP8 settings too ("nothing here": null)
    stored = entries(project)
    assert set(stored) == set(TREE)
    assert stored["notes.yaml"][6] is None
    assert stored["risky.yaml"][6]
    # no temporary files left behind
    assert not [p for p in root.rglob("*") if p.name.startswith(".tmp-")]


def test_nothing_is_parsed_on_a_warm_run(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parses = Parses(monkeypatch)
    first = check(capsys, ".")
    assert len(parses.take()) == len(TREE) - 1  # notes.yaml fails the prefilter
    assert check(capsys, ".") == first
    assert parses.take() == []


def test_a_trusted_fingerprint_skips_even_the_read(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # files written just now are "racy" (re-hashed on the next run); pretend they are old
    monkeypatch.setattr(cache_keys, "RACY_NS", -(10**15))
    first = check(capsys, ".")
    real_read = run_module.read_bytes

    def refuse(path: str, max_bytes: int) -> tuple[bytes, os.stat_result]:
        raise AssertionError(f"read {path}")

    monkeypatch.setattr(run_module, "read_bytes", refuse)
    assert check(capsys, ".") == first
    # an edit that keeps the size, with another mtime: the fingerprint differs, it is read
    monkeypatch.setattr(run_module, "read_bytes", real_read)
    (project / "risky.yaml").write_text(RISKY.replace("hybrid", "HYBRID"))
    os.utime(project / "risky.yaml", ns=(10**18, 10**18))
    parses = Parses(monkeypatch)
    _code, out = check(capsys, ".")
    assert parses.take() == ["risky.yaml"]
    assert out == check(capsys, ".", "--no-cache")[1]


# ----------------------------------------------------------------------------- invalidation


def test_editing_a_file_invalidates_its_entry_only(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    check(capsys, ".")
    parses = Parses(monkeypatch)
    (project / "risky.yaml").write_text(GOOD)
    code, out = check(capsys, ".")
    assert parses.take() == ["risky.yaml"]
    assert "risky.yaml" not in out
    assert (code, out) == check(capsys, ".", "--no-cache")
    # the same size, the same mtime: the content hash decides
    stat = (project / "e4m3.yaml").stat()
    (project / "e4m3.yaml").write_text(E4M3.replace("e4m3", "E4M3"))
    os.utime(project / "e4m3.yaml", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    parses.take()
    code, out = check(capsys, ".")
    assert parses.take() == ["e4m3.yaml"]
    assert "e4m3.yaml:2:17: FP8401" in out  # choices are case-sensitive: the new text is read
    # a file that gains FP8 settings is no longer "nothing here"
    (project / "notes.yaml").write_text(RISKY)
    code, out = check(capsys, ".")
    assert parses.take() == ["notes.yaml"]
    assert "notes.yaml:2:17: FP8101" in out


def test_editing_a_defaults_parent_invalidates_the_child(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = check(capsys, ".")
    assert "conf/base.yaml > conf/top.yaml" in out  # top's finding, at base's line
    parses = Parses(monkeypatch)
    (project / "conf/base.yaml").write_text(
        NEMO_BASE.replace("fp8_amax_history_len: 1", "fp8_amax_history_len: 1024").replace(
            "most_recent", "max"
        )
    )
    code, out = check(capsys, ".")
    # base itself changed; top and the script that names gpt.yaml did not, but top read base
    assert parses.take() == ["conf/base.yaml", "conf/top.yaml"]
    assert "conf/base.yaml > conf/top.yaml" not in out
    assert (code, out) == check(capsys, ".", "--no-cache")


def test_editing_the_config_a_script_names_invalidates_the_script(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = check(capsys, ".")
    assert "conf/gpt.yaml > scripts/run.sh:1 (overrides)" in out
    parses = Parses(monkeypatch)
    (project / "conf/gpt.yaml").write_text(NEMO_BASE.replace("fp8_margin: 0", "fp8_margin: 3"))
    code, out = check(capsys, ".")
    assert parses.take() == ["conf/gpt.yaml", "scripts/run.sh"]
    assert (code, out) == check(capsys, ".", "--no-cache")


def test_a_vanished_dependency_invalidates(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    check(capsys, ".")
    parses = Parses(monkeypatch)
    (project / "conf/base.yaml").unlink()
    code, out = check(capsys, ".")
    assert parses.take() == ["conf/top.yaml"]
    assert "conf/base.yaml" not in out
    assert (code, out) == check(capsys, ".", "--no-cache")


def test_changing_settings_invalidates(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    check(capsys, ".")
    parses = Parses(monkeypatch)
    code, out = check(capsys, ".", "--select", "FP8206")
    assert len(parses.take()) == len(TREE) - 1
    assert "FP8101" not in out and "FP8206" in out
    assert check(capsys, ".", "--select", "FP8206") == (code, out)
    assert parses.take() == []
    # a rule option in the configuration, a severity, a size limit
    for config in (
        "[tool.fp8lint.options]\nmin-amax-history-len = 2048\n",
        '[tool.fp8lint.severity]\nFP8101 = "error"\n',
        "[tool.fp8lint]\nmax-file-size = 100\n",
    ):
        (project / "pyproject.toml").write_text(config)
        code, out = check(capsys, ".")
        assert len(parses.take()) >= 1, config
        assert (code, out) == check(capsys, ".", "--no-cache"), config
        parses.take()
        assert check(capsys, ".") == (code, out), config
        assert parses.take() == [], config


def test_internal_errors_are_not_cached(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = lint_module.parse_file

    def broken(file: object, kind: str, reader: object = None) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(lint_module, "parse_file", broken)
    _, out = check(capsys, "risky.yaml")
    assert "internal error while checking this file: RuntimeError: boom" in out
    monkeypatch.setattr(lint_module, "parse_file", real)
    _code, out = check(capsys, "risky.yaml")
    assert "risky.yaml:2:17: FP8101" in out


# ----------------------------------------------------------------------------- planned fixes


def test_fixes_are_planned_only_for_what_reads_them(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A check plans fixes to apply, show or cache them; `github`, `markdown` and
    --write-baseline without the cache, `show`, plan none (and print the same)."""
    from fp8lint.frameworks import writer

    planned: list[object] = []
    real = writer.plan_to_fix

    def counting(*args: object) -> object:
        planned.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(writer, "plan_to_fix", counting)
    runs = [
        (["--no-cache", "--output-format", "github"], False),
        (["--no-cache", "--output-format", "markdown"], False),
        (["--no-cache", "--write-baseline", "b.json"], False),
        (["--no-cache"], True),
        (["--no-cache", "--output-format", "json"], True),
        (["--no-cache", "--output-format", "github", "--statistics"], True),
        (["--no-cache", "--output-format", "github", "--diff"], True),
        (["--output-format", "github"], True),  # the cache keeps them for any later run
    ]
    for args, plans in runs:
        main(["check", ".", *args])
        capsys.readouterr()
        assert bool(planned) is plans, args
        planned.clear()
    main(["show", "risky.yaml"])
    assert "site 1: Megatron" in capsys.readouterr().out and not planned


def test_findings_stored_without_fixes_do_not_serve_a_run_that_plans_them(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry from a run that planned no fix is whole only when it holds no finding: a run
    that plans fixes lints the files with findings again, and stores them whole."""
    from fp8lint.engine import RunSettings, run
    from fp8lint.engine.cache import Cache

    bare = run(["."], RunSettings(plan_fixes=False), cache=Cache(".fp8lint_cache"))
    assert bare.diagnostics and all(d.fix is None for d in bare.diagnostics)
    stored = entries(project)
    with_findings = sorted(k for k, e in stored.items() if e[6])
    assert with_findings and all(stored[k][7] is False for k in with_findings)
    assert all(e[7] is True for k, e in stored.items() if k not in with_findings)
    parses = Parses(monkeypatch)
    again = run(["."], RunSettings(plan_fixes=False), cache=Cache(".fp8lint_cache"))
    assert parses.take() == [] and again.diagnostics == bare.diagnostics
    planned = run(["."], RunSettings(), cache=Cache(".fp8lint_cache"))
    assert parses.take() == with_findings
    assert any(d.fix is not None for d in planned.diagnostics)
    assert all(e[7] is True for e in entries(project).values())
    assert run(["."], RunSettings(), cache=Cache(".fp8lint_cache")).diagnostics == (
        planned.diagnostics
    )
    assert parses.take() == []


# ----------------------------------------------------------------------------- off switches


def test_no_cache_neither_reads_nor_writes(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    check(capsys, ".", "--no-cache")
    assert not (project / ".fp8lint_cache").exists()
    check(capsys, ".")  # fills the cache
    before = {p: p.read_bytes() for p in shards(project)}
    parses = Parses(monkeypatch)
    (project / "risky.yaml").write_text(GOOD)
    check(capsys, ".", "--no-cache")
    assert len(parses.take()) == len(TREE) - 1  # read nothing from it
    assert {p: p.read_bytes() for p in shards(project)} == before  # wrote nothing


def test_environment_and_configuration_turn_it_off(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FP8LINT_NO_CACHE", "1")
    check(capsys, ".")
    assert not (project / ".fp8lint_cache").exists()
    monkeypatch.setenv("FP8LINT_NO_CACHE", "0")
    (project / "pyproject.toml").write_text("[tool.fp8lint]\ncache = false\n")
    check(capsys, ".")
    assert not (project / ".fp8lint_cache").exists()
    (project / "pyproject.toml").write_text('[tool.fp8lint]\ncache-dir = "build/lint-cache"\n')
    check(capsys, ".")
    assert not (project / ".fp8lint_cache").exists()
    assert (project / "build/lint-cache/CACHEDIR.TAG").is_file()


def test_fix_and_diff_do_not_use_the_cache(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check(capsys, ".", "--diff")
    check(capsys, ".", "--fix")
    assert not (project / ".fp8lint_cache").exists()


@pytest.mark.parametrize(
    "damage",
    ["empty", "not-json", "wrong-shape", "foreign-version", "bad-entries", "bad-findings"],
)
def test_a_corrupt_cache_is_a_miss(
    project: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    fresh = check(capsys, ".", "--no-cache")
    check(capsys, ".")
    for shard in shards(project):
        data = unsealed(shard)
        if damage == "empty":
            shard.write_bytes(b"")
        elif damage == "not-json":
            write_sealed(shard, b'{"format": 1, "entries": {"risky.yaml": [0, [1, 2')
        elif damage == "wrong-shape":
            write_sealed(shard, b"[1, 2, 3]")
        elif damage == "foreign-version":
            data["fp8lint"] = "0.0.0-other"
            write_sealed(shard, json.dumps(data).encode())
        elif damage == "bad-entries":
            data["entries"] = {
                key: [99, "x", "yes", 5, None, {"a": 1}, 7] for key in data["entries"]
            }
            write_sealed(shard, json.dumps(data).encode())
        else:  # right hashes and fingerprints, nonsense findings
            for entry in data["entries"].values():
                entry[6] = [{"code": 5, "line": "one"}] if entry[6] is not None else "x"
                entry[5] = [[1, 2, 3, 4]] if entry[5] else entry[5]
            write_sealed(shard, json.dumps(data).encode())
    assert check(capsys, ".") == fresh
    assert check(capsys, ".") == fresh  # and the next run repaired it
    assert set(entries(project)) == set(TREE)


def test_a_cache_that_cannot_be_written_is_skipped(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "blocker").write_text("a file where the cache folder would go\n")
    fresh = check(capsys, ".", "--no-cache")
    assert check(capsys, ".", "--cache-dir", "blocker/cache") == fresh
    assert check(capsys, ".", "--cache-dir", "blocker/cache") == fresh


def test_a_cache_whose_writes_fail_is_skipped(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a read-only folder behaves for a user who is not root: every write refused."""
    check(capsys, ".")
    before = {p: p.read_bytes() for p in shards(project)}
    (project / "risky.yaml").write_text(GOOD)
    real_open = os.open

    def refuse(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if ".fp8lint_cache" in str(path) and flags & os.O_CREAT:
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    fresh = check(capsys, ".", "--no-cache")
    assert check(capsys, ".") == fresh
    assert {p: p.read_bytes() for p in shards(project)} == before
    assert not [p for p in (project / ".fp8lint_cache").rglob(".tmp-*")]


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders"
)
def test_a_read_only_cache_directory_is_skipped(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    check(capsys, ".")
    folder = project / ".fp8lint_cache"
    (project / "risky.yaml").write_text(GOOD)
    fresh = check(capsys, ".", "--no-cache")
    modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if p.is_dir()}
    try:
        for p in modes:
            p.chmod(0o555)
        assert check(capsys, ".") == fresh
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


# ----------------------------------------------------------------------------- location, clean


def test_the_cache_goes_to_the_project_root_not_next_to_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    write(tmp_path / "elsewhere", {"risky.yaml": RISKY})
    write(tmp_path / "proj", {"pyproject.toml": "[tool.fp8lint]\n", "sub/x.yaml": RISKY})
    # from a folder under a configuration: its folder is the project root
    monkeypatch.chdir(tmp_path / "proj" / "sub")
    check(capsys, ".", str(tmp_path / "elsewhere"))
    assert (tmp_path / "proj" / ".fp8lint_cache" / "CACHEDIR.TAG").is_file()
    assert not (tmp_path / "proj" / "sub" / ".fp8lint_cache").exists()
    assert not (tmp_path / "elsewhere" / ".fp8lint_cache").exists()
    # without a configuration: the working directory
    monkeypatch.chdir(tmp_path)
    check(capsys, "elsewhere")
    assert (tmp_path / ".fp8lint_cache" / "CACHEDIR.TAG").is_file()
    assert not (tmp_path / "elsewhere" / ".fp8lint_cache").exists()
    # FP8LINT_CACHE_DIR
    monkeypatch.setenv("FP8LINT_CACHE_DIR", str(tmp_path / "env-cache"))
    check(capsys, "elsewhere")
    assert (tmp_path / "env-cache" / "CACHEDIR.TAG").is_file()


def test_clean_removes_the_cache(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    check(capsys, ".")
    assert (project / ".fp8lint_cache").is_dir()
    assert main(["clean"]) == 0
    assert "Removed cache directory" in capsys.readouterr().out
    assert not (project / ".fp8lint_cache").exists()
    assert main(["clean"]) == 0
    assert "No cache" in capsys.readouterr().out
    # a folder that is not an fp8lint cache is never removed
    (project / "precious").mkdir()
    (project / "precious" / "keep.txt").write_text("x")
    assert main(["clean", "--cache-dir", "precious"]) == 2
    assert "CACHEDIR.TAG" in capsys.readouterr().err
    assert (project / "precious" / "keep.txt").is_file()


def test_the_command_line_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real executable, many files (worker processes), no switches: a cache in the
    working directory, the same report twice, and an edit to a parent seen through it."""
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    files = dict(TREE)
    files.update({f"many/r{i:02}.yaml": RISKY for i in range(20)})
    write(tmp_path, files)
    monkeypatch.setenv("FP8LINT_WORKERS", "2")
    first = run_cli("check", ".", cwd=tmp_path, process=True)
    assert first.returncode == 1, first.stderr
    assert (tmp_path / ".fp8lint_cache" / "CACHEDIR.TAG").is_file()
    assert set(entries(tmp_path)) == set(files)
    second = run_cli("check", ".", cwd=tmp_path, process=True)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
    (tmp_path / "conf/base.yaml").write_text(NEMO_BASE.replace("fp8_margin: 0", "fp8_margin: 2"))
    third = run_cli("check", ".", cwd=tmp_path, process=True)
    fresh = run_cli("check", ".", "--no-cache", cwd=tmp_path, process=True)
    assert third.stdout == fresh.stdout != first.stdout
    r = run_cli("clean", cwd=tmp_path, process=True)
    assert r.returncode == 0 and not (tmp_path / ".fp8lint_cache").exists()


# ----------------------------------------------------------------------------- encoding


def test_diagnostics_round_trip_through_json() -> None:
    fix = Fix(
        Applicability.UNSAFE,
        "set it",
        (TextEdit("1024", 2, 3, 2, 7, 10, 14), TextEdit("", 3, 1, 4, 1, 20, 30)),
        site=2,
        intent=(
            ("amax_history_len", 1024),
            ("margin", 1.5),
            ("-fp8_wgrad", None),
            ("flag", True),
            ("layers", (1, [2, "x"], {"k": (None,)})),
        ),
    )
    d = Diagnostic(
        "FP8101",
        "zero-headroom",
        Severity.WARNING,
        "message with ünïcode and \udcff a surrogate",
        "dir/file.yaml",
        2,
        3,
        2,
        7,
        related=(Related("other.yaml", 1, 1, "here"),),
        headroom_binades=0.0,
        fix=fix,
        source_line="  --fp8-format: hybrid",
        key="--fp8-format: hybrid",
        note="why it matters",
    )
    for original in (d, Diagnostic("FP8001", "parse-error", Severity.ERROR, "m", "p", 1, 1, 1, 2)):
        wire = json.dumps(cache_mod.encode_diagnostic(original))
        back = cache_mod.decode_diagnostic(json.loads(wire))
        assert back == original
    back = cache_mod.decode_diagnostic(json.loads(json.dumps(cache_mod.encode_diagnostic(d))))
    assert back.fix is not None and type(back.fix.intent[-1][1]) is tuple
    assert back.note == "why it matters"
    # an entry written before notes existed (format 1) is not decoded as a note-less finding
    old = cache_mod.encode_diagnostic(d)
    del old["note"]
    with pytest.raises(cache_mod.CorruptEntry):
        cache_mod.decode_diagnostic(old)
    assert cache_mod.FORMAT >= 2


@pytest.mark.parametrize(
    "raw",
    [None, [], {}, {"code": "FP8101"}, {"code": 1}, "x", 5],
)
def test_decoding_garbage_is_a_corrupt_entry(raw: object) -> None:
    with pytest.raises(cache_mod.CorruptEntry):
        cache_mod.decode_diagnostic(raw)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_checking_a_dependency_never_blocks_on_a_pipe(tmp_path: Path) -> None:
    """A parent that was unreadable and is now a FIFO: the check answers at once (an open()
    of a FIFO would wait for a writer)."""
    pipe = tmp_path / "base.yaml"
    os.mkfifo(pipe)
    assert cache_keys.dependency_holds((str(pipe), None, False, None)) is True
    assert cache_keys.read_dependency(str(pipe)) is None
    big = tmp_path / "big.yaml"
    big.write_text("x" * 200)
    with cache_keys.recording() as read:
        assert cache_keys.read_dependency(str(big), limit=100) is None
    assert read is not None and read[0][3] == "over:100"
    assert cache_keys.dependency_holds(read[0]) is True
    big.write_text("x" * 50)  # now under the limit: the result that skipped it is stale
    assert cache_keys.dependency_holds(read[0]) is False


def test_code_fingerprint_covers_the_whole_package() -> None:
    # an edit to a framework recognizer or a rule must start a new cache, not only an edit to
    # the engine: the fingerprint counts every .py/.md file of the package (rules via their link)
    import fp8lint
    from fp8lint.engine.cache_keys import code_fingerprint

    top = os.path.dirname(os.path.abspath(fp8lint.__file__))
    files = [
        name
        for folder, dirs, names in os.walk(top, followlinks=True)
        if "__pycache__" not in folder.split(os.sep)
        for name in names
        if name.endswith((".py", ".md"))
    ]
    assert any(n.startswith("fp8101_") for n in files)  # the rules are inside
    assert "python_sites.py" in files  # and the frameworks
    assert int(code_fingerprint()[16:], 16) == len(files) + 1  # + the version
