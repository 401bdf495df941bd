"""The command line as users run it: output, ordering, exit codes, bad input."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, run_cli

RISKY = "MODEL_ARGS:\n  --tensor-model-parallel-size: 2\n  --fp8-format: hybrid\n"
GOOD = (
    "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
    "  --fp8-amax-compute-algo: max\n"
)


def write(tmp: Path, name: str, text: str | bytes) -> Path:
    path = tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_text_output_and_exit_one(tmp_path: Path) -> None:
    write(tmp_path, "risky.yaml", RISKY)
    r = run_cli("check", "risky.yaml", cwd=tmp_path)
    assert r.returncode == 1
    first = r.stdout.splitlines()[0]
    assert first == (
        "risky.yaml:3:17: FP8101 [warning] zero headroom: `--fp8-margin` 0 (default) with "
        "`--fp8-amax-compute-algo` most_recent (default)"
    )
    assert "Found 1 finding (1 warning) in 1 file checked." in r.stdout


def test_clean_file_exits_zero(tmp_path: Path) -> None:
    write(tmp_path, "good.yaml", GOOD)
    r = run_cli("check", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    assert "All checks passed (1 file checked)." in r.stdout


def test_fail_on_and_exit_zero(tmp_path: Path) -> None:
    write(tmp_path, "short.yaml", GOOD.replace("1024", "4"))
    assert run_cli("check", ".", cwd=tmp_path).returncode == 0  # an info alone passes
    assert run_cli("check", ".", "--fail-on", "info", cwd=tmp_path).returncode == 1
    write(tmp_path, "risky.yaml", RISKY)
    assert run_cli("check", ".", "--exit-zero", cwd=tmp_path).returncode == 0
    assert run_cli("check", ".", "--fail-on", "error", cwd=tmp_path).returncode == 0


def test_json_output_fields_and_sorting(tmp_path: Path) -> None:
    write(tmp_path, "b.yaml", RISKY)
    write(tmp_path, "a/c.yaml", RISKY.replace("hybrid", "e4m3"))
    r = run_cli("check", ".", "--output-format", "json", cwd=tmp_path)
    data = json.loads(r.stdout)
    assert [(d["filename"], d["location"]["row"], d["code"]) for d in data] == [
        ("a/c.yaml", 3, "FP8101"),
        ("a/c.yaml", 3, "FP8206"),
        ("b.yaml", 3, "FP8101"),
    ]
    d = data[0]
    assert set(d) >= {
        "code",
        "name",
        "severity",
        "message",
        "filename",
        "location",
        "end_location",
        "fix",
    }
    assert d["name"] == "zero-headroom"
    assert d["fix"]["applicability"] == "unsafe"  # it changes the run
    assert d["fix"]["edits"] == [
        {
            "content": "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            "location": {"row": 4, "column": 1},
            "end_location": {"row": 4, "column": 1},
        }
    ]
    assert d["end_location"] == {"row": 3, "column": 21}
    assert d["headroom_binades"] == 0.0


def test_select_ignore_and_unknown_selector(tmp_path: Path) -> None:
    write(tmp_path, "e.yaml", RISKY.replace("hybrid", "e4m3"))

    def codes(*args: str) -> set[str]:
        out = run_cli("check", ".", "--output-format", "json", *args, cwd=tmp_path).stdout
        return {d["code"] for d in json.loads(out)}

    assert codes() == {"FP8101", "FP8206"}
    assert codes("--select", "FP82") == {"FP8206"}
    assert codes("--ignore", "zero-headroom") == {"FP8206"}
    assert codes("--select", "FP8206", "--extend-select", "FP8101") == {"FP8101", "FP8206"}
    r = run_cli("check", ".", "--select", "FP9999", cwd=tmp_path)
    assert r.returncode == 2 and "unknown rule selector" in r.stderr


def test_rule_options_are_validated(tmp_path: Path) -> None:
    write(tmp_path, "h.yaml", GOOD.replace("1024", "32"))
    base = ("check", ".", "--fail-on", "info", "--option")
    assert run_cli(*base, "min-amax-history-len=64", cwd=tmp_path).returncode == 1
    assert run_cli(*base, "min-amax-history-len=16", cwd=tmp_path).returncode == 0
    bad = run_cli(*base, "min-amax-history-len=lots", cwd=tmp_path)
    assert bad.returncode == 2 and "expects int" in bad.stderr
    unknown = run_cli(*base, "nope=1", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown rule option `nope`" in unknown.stderr


def test_bad_inputs_are_diagnostics_and_the_run_goes_on(tmp_path: Path) -> None:
    write(tmp_path, "a_syntax.yaml", "model:\n  fp8: [true\n")
    write(tmp_path, "b_binary.json", b"\x00\x01fp8\x00\xff")
    write(tmp_path, "c_latin1.yaml", "# fp8 caf\xe9\n".encode("latin-1"))
    write(tmp_path, "d_trunc.json", '{"msamp": {"enabled": tr')
    write(
        tmp_path,
        "e_syntax.py",
        "from transformer_engine.common.recipe import DelayedScaling\nr = DelayedScaling(\n",
    )
    write(tmp_path, "f_risky.yaml", RISKY)
    r = run_cli("check", ".", "--output-format", "json", cwd=tmp_path)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    data = json.loads(r.stdout)
    by_file = {d["filename"]: d for d in data}
    assert by_file["a_syntax.yaml"]["code"] == "FP8001"
    assert by_file["a_syntax.yaml"]["location"]["row"] == 3
    assert "binary" in by_file["b_binary.json"]["message"]
    assert by_file["c_latin1.yaml"]["location"] == {"row": 1, "column": 10}
    assert by_file["d_trunc.json"]["code"] == "FP8001"
    assert by_file["e_syntax.py"]["code"] == "FP8001"
    assert by_file["f_risky.yaml"]["code"] == "FP8101"


def test_missing_path_and_directory_as_file(tmp_path: Path) -> None:
    r = run_cli("check", "missing.yaml", cwd=tmp_path)
    assert r.returncode == 1 and "missing.yaml:1:1: FP8001 [error] no such file" in r.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file(tmp_path: Path) -> None:
    p = write(tmp_path, "locked.yaml", RISKY)
    p.chmod(0)
    r = run_cli("check", ".", cwd=tmp_path)
    assert "permission denied" in r.stdout


def test_unreadable_file_via_directory_path(tmp_path: Path) -> None:
    d = tmp_path / "dir.yaml"
    d.mkdir()
    r = run_cli("check", "dir.yaml/", "x.yaml", cwd=tmp_path)
    assert "x.yaml:1:1: FP8001 [error] no such file" in r.stdout
    assert r.returncode == 1


def test_walk_skips_hidden_venv_and_gitignored(tmp_path: Path) -> None:
    write(tmp_path, ".hidden/a.yaml", RISKY)
    write(tmp_path, "node_modules/a.yaml", RISKY)
    write(tmp_path, "venv1/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "venv1/a.yaml", RISKY)
    write(tmp_path, ".gitignore", "build/\n*.gen.yaml\n")
    write(tmp_path, "build/a.yaml", RISKY)
    write(tmp_path, "x.gen.yaml", RISKY)
    write(tmp_path, "kept/a.yaml", RISKY)
    r = run_cli("check", ".", "--output-format", "json", cwd=tmp_path)
    assert {d["filename"] for d in json.loads(r.stdout)} == {"kept/a.yaml"}


def test_crlf_and_bom_files(tmp_path: Path) -> None:
    write(tmp_path, "crlf.yaml", RISKY.replace("\n", "\r\n").encode("utf-8"))
    write(tmp_path, "bom.yaml", b"\xef\xbb\xbf" + RISKY.encode())
    write(tmp_path, "u16.yaml", RISKY.encode("utf-16"))
    r = run_cli("check", ".", "--output-format", "json", cwd=tmp_path)
    rows = {
        (d["filename"], d["code"], d["location"]["row"], d["location"]["column"])
        for d in json.loads(r.stdout)
    }
    assert rows == {(f, "FP8101", 3, 17) for f in ("crlf.yaml", "bom.yaml", "u16.yaml")}


def test_show_prints_values_spans_and_provenance(tmp_path: Path) -> None:
    write(tmp_path, "m.yaml", RISKY)
    r = run_cli("show", "m.yaml", cwd=tmp_path)
    assert r.returncode == 0
    assert "site 1: Megatron `MODEL_ARGS` block (Megatron-LM)" in r.stdout
    assert any(
        line.split()[:3] == ["amax_history_len", "1", "default"] for line in r.stdout.splitlines()
    )
    assert any(
        line.split()[:5] == ["tensor_parallel", "2", "written", "at", "2:33"]
        for line in r.stdout.splitlines()
    )
    j = json.loads(run_cli("show", "m.yaml", "--output-format", "json", cwd=tmp_path).stdout)
    assert j[0]["amax_history_len"]["provenance"] == "default"
    assert j[0]["fmt"]["span"]["line"] == 3


def test_rule_pages_print(tmp_path: Path) -> None:
    r = run_cli("rule", "FP8101")
    assert r.returncode == 0 and r.stdout.startswith("# FP8101 zero-headroom")
    assert run_cli("rule", "zero-headroom").stdout == r.stdout
    everything = run_cli("rule", "--all").stdout
    assert everything.count("## What it does") >= 20
    assert run_cli("rule", "FP0000").returncode == 2


def test_readme_first_command_shows_findings() -> None:
    r = run_cli("check", "examples/", cwd=ROOT)
    assert r.returncode == 1
    codes = {line.split()[1] for line in r.stdout.splitlines() if ": FP8" in line}
    assert {"FP8101", "FP8301", "FP8207", "FP8402", "FP8403", "FP8305"} <= codes
    assert not any("FP8001" in line for line in r.stdout.splitlines())
    assert not any(
        "model_config_nvidia.yaml" in line and "[warning]" in line for line in r.stdout.splitlines()
    )


def test_files_stay_untouched(tmp_path: Path) -> None:
    p = write(tmp_path, "r.yaml", RISKY)
    before = (p.read_bytes(), stat.S_IMODE(p.stat().st_mode), p.stat().st_mtime_ns)
    run_cli("check", ".", cwd=tmp_path)
    assert (p.read_bytes(), stat.S_IMODE(p.stat().st_mode), p.stat().st_mtime_ns) == before


def test_unwritable_output_file_is_a_plain_error(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", RISKY)
    (tmp_path / "out").mkdir()
    for flag in ("-o", "--write-baseline"):
        r = run_cli("check", "a.yaml", flag, "out", cwd=tmp_path)
        assert r.returncode == 2
        assert (
            r.stderr.startswith("fp8lint: error: cannot write out") and "internal" not in r.stderr
        )


def json_report(cwd: Path, workers: str, *flags: str, cache: bool = False) -> str:
    """`fp8lint check . --output-format json` in a fresh process with FP8LINT_WORKERS set
    (and the cache on when asked: the suite turns it off by default)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, FP8LINT_WORKERS=workers)
    if cache:
        env.pop("FP8LINT_NO_CACHE", None)
    r = subprocess.run(
        [sys.executable, "-m", "fp8lint", "check", ".", "--output-format", "json", *flags],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 1 and r.stderr == ""
    return r.stdout


def test_worker_processes_give_the_same_report(tmp_path: Path) -> None:
    for i in range(24):
        write(tmp_path, f"d{i % 3}/c{i}.yaml", RISKY if i % 2 else RISKY.replace("hybrid", "e4m3"))
    write(tmp_path, "d0/broken.yaml", "MODEL_ARGS: [fp8\n")
    serial, pooled = json_report(tmp_path, "1"), json_report(tmp_path, "2")
    assert pooled == serial
    assert len(json.loads(serial)) == 12 * 1 + 12 * 2 + 1


def test_reading_in_worker_processes_gives_the_same_report(tmp_path: Path) -> None:
    """Past READ_POOL_MIN_FILES files, workers read and prefilter too: the report is the same
    as in one process, with and without the cache, after a touch and after an edit."""
    import os

    from fp8lint.engine import READ_POOL_MIN_FILES

    plain = READ_POOL_MIN_FILES + 20
    for i in range(plain):
        write(tmp_path, f"p{i % 7}/plain{i}.yaml", f"model:\n  hidden_size: {i}\n")
    for i in range(24):
        write(tmp_path, f"p{i % 5}/c{i}.yaml", RISKY if i % 2 else RISKY.replace("hybrid", "e4m3"))
    write(tmp_path, "p0/broken.yaml", "MODEL_ARGS: [fp8\n")
    (tmp_path / "p1" / "binary.json").write_bytes(b'{"fp8": 1}\0\0')
    (tmp_path / "p2" / "latin1.yaml").write_bytes(b"# fp8 \xe9\nx: 1\n")

    def report(workers: str, *flags: str) -> str:
        return json_report(tmp_path, workers, *flags, cache=True)

    serial = report("1", "--no-cache")
    codes = [d["code"] for d in json.loads(serial)]
    assert codes.count("FP8001") == 3 and len(codes) == 3 + 12 * 1 + 12 * 2
    assert report("2", "--no-cache") == serial
    assert report("2") == serial  # writes the cache
    assert report("2") == serial  # served from it
    touched = tmp_path / "p1" / "c1.yaml"  # same bytes, new times: hashed, not re-linted
    os.utime(touched, (1_000_000_000, 1_000_000_000))
    assert report("2") == serial
    touched.write_text(RISKY.replace("hybrid", "e4m3"))
    edited = report("2")
    assert edited == report("1", "--no-cache") != serial


def test_display_paths_per_folder_match_display_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from fp8lint.engine import DisplayPaths, display_path

    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    shown = DisplayPaths()
    for path in (
        "x.yaml",
        "./x.yaml",
        "b/x.yaml",
        "./b//x.yaml",
        "../a/b/x.yaml",
        str(tmp_path / "a" / "b" / "x.yaml"),
        str(tmp_path / "x.yaml"),
        str(tmp_path / "a" / ".." / "x.yaml"),
        os.path.join(str(tmp_path), "a", "b", "..", "b", "x.yaml"),
    ):
        assert shown(path) == display_path(path), path


# ----------------------------------------------------------------- files that are never read

NOT_READ = "not checked: fp8lint reads only .bash, .cfg, .json, .py, .sbatch, .sh, .slurm, .toml, "


def test_a_file_named_but_not_read_is_said_on_stderr(tmp_path: Path) -> None:
    write(tmp_path, "notes.txt", "fp8 --fp8-format hybrid\n")
    (tmp_path / "empty").mkdir()
    os.symlink(".", tmp_path / "empty" / "loop.yaml")  # a folder loop named like a config
    for args in (["notes.txt"], ["/dev/stdin"]):
        r = run_cli("check", *args, cwd=tmp_path)
        assert r.returncode == 0
        assert f"warning: {args[0]}: {NOT_READ}" in r.stderr
        assert "warning: no files to check under the given paths" in r.stderr
        shown = run_cli("show", *args, cwd=tmp_path)
        assert f"warning: {args[0]}: {NOT_READ}" in shown.stderr  # check and show agree
    for folder in ("empty", "empty/loop.yaml"):
        r = run_cli("check", folder, cwd=tmp_path)
        assert r.returncode == 0 and "All checks passed (0 files checked)." in r.stdout
        assert "warning: no files to check under the given paths" in r.stderr
        assert run_cli("check", folder, "-q", cwd=tmp_path).stderr == ""  # -q: findings only
        shown = run_cli("show", folder, cwd=tmp_path)  # `show` takes files
        assert shown.returncode == 2 and "is a directory" in shown.stderr
    # a file that is read gets no such warning
    write(tmp_path, "risky.yaml", RISKY)
    r = run_cli("check", "risky.yaml", "notes.txt", cwd=tmp_path)
    assert r.stderr.count("warning:") == 1 and "notes.txt" in r.stderr


def test_show_files_lists_what_check_reads(tmp_path: Path) -> None:
    write(tmp_path, "configs/a.yaml", RISKY)
    write(tmp_path, "configs/job.sbatch", "echo hi\n")
    write(tmp_path, "configs/notes.md", "fp8\n")
    write(tmp_path, "configs/skip/b.yaml", RISKY)
    write(tmp_path, "pyproject.toml", '[tool.fp8lint]\nexclude = ["configs/skip"]\n')
    r = run_cli("check", "--show-files", "configs", "notes.txt", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["configs/a.yaml", "configs/job.sbatch"]
    assert "warning: notes.txt: no such file or directory" in r.stderr
    # pre-commit and the Action name files: --force-exclude applies exclusions to them
    r = run_cli(
        "check", "--show-files", "--force-exclude", "configs/skip/b.yaml", "configs/a.yaml",
        cwd=tmp_path,
    )  # fmt: skip
    assert r.stdout.splitlines() == ["configs/a.yaml"]


def test_stdin_with_a_file_name(tmp_path: Path) -> None:
    def run(*args: str, text: str, process: bool = False) -> subprocess.CompletedProcess[str]:
        return run_cli("check", *args, cwd=tmp_path, input=text, process=process)

    # the first through a real process's standard input, the rest in this process
    r = run(
        "-", "--stdin-filename", "configs/x.yaml", "--output-format", "concise", text=RISKY,
        process=True,
    )  # fmt: skip
    assert r.returncode == 1
    assert r.stdout.startswith("configs/x.yaml:3:17: FP8101 [warning]")
    # --fix: the fixed text on stdout, the report on stderr
    r = run("-", "--stdin-filename", "configs/x.yaml", "--fix", "--unsafe-fixes", text=RISKY)
    assert r.stdout == RISKY + "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    assert "Fixed 1 finding." in r.stderr and r.returncode == 0
    r = run("-", "--stdin-filename", "configs/x.yaml", "--diff", "--unsafe-fixes", text=RISKY)
    assert r.returncode == 1 and r.stdout.startswith("--- a/configs/x.yaml\n+++ b/configs/x.yaml")
    # nothing FP8 with --fix: the input comes back unchanged
    assert run("-", "--stdin-filename", "a.yaml", "--fix", text="x: 1\n").stdout == "x: 1\n"
    # the name decides the kind and the settings: exclusions apply with --force-exclude
    write(tmp_path, "pyproject.toml", '[tool.fp8lint]\nextend-exclude = ["vendor"]\n')
    r = run("-", "--stdin-filename", "vendor/x.yaml", "--force-exclude", text=RISKY)
    assert r.returncode == 0 and "FP8101" not in r.stdout
    r = run("-", "--stdin-filename", "notes.txt", text=RISKY)
    assert r.returncode == 0 and f"warning: notes.txt: {NOT_READ}" in r.stderr
    r = run("-", text=RISKY)  # no name: the kind is guessed from the text, `-` is its name
    assert r.returncode == 1 and r.stdout.startswith("-:3:17: FP8101 [warning]")
    r = run("-", text="just some words\n")
    assert r.returncode == 0 and "-: not checked" in r.stderr and "--stdin-filename" in r.stderr
    r = run("a.yaml", "--stdin-filename", "x.yaml", text="")
    assert r.returncode == 2


# ----------------------------------------------------------------- flags as ruff users expect

TWO_RULES = "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-margin: 9\n"  # FP8105, FP8206 (both info)


def codes_of(stdout: str) -> list[str]:
    return sorted({d["code"] for d in json.loads(stdout)})


def test_repeated_selection_flags_accumulate(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", TWO_RULES)
    both = run_cli("check", "a.yaml", "--output-format", "json", cwd=tmp_path)
    assert {"FP8105", "FP8206"} <= set(codes_of(both.stdout))
    r = run_cli(
        "check", "a.yaml", "--select", "FP8105", "--select", "FP8206",
        "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert codes_of(r.stdout) == ["FP8105", "FP8206"]
    r = run_cli(
        "check", "a.yaml", "--ignore", "FP8105", "--ignore", "FP8206", "--ignore", "FP8101",
        "--output-format", "json", cwd=tmp_path,
    )  # fmt: skip
    assert not {"FP8105", "FP8206", "FP8101"} & set(codes_of(r.stdout))


def test_unsafe_fixes_alone_shows_them_as_fixable_as_ruff_does(tmp_path: Path) -> None:
    """ruff: `--unsafe-fixes` without `--fix` applies nothing but shows the unsafe fixes as
    available (`[*]`, "N fixable"), and the hint to add `--unsafe-fixes` is not printed."""
    text = "MODEL_ARGS:\n  --fp8-format: hybrid\n  --first-last-layers-bf16: true\n"
    write(tmp_path, "a.yaml", text)
    plain = run_cli("check", ".", cwd=tmp_path)
    assert "(2 more fixable with --fix --unsafe-fixes.)" in plain.stdout.splitlines()
    assert "[*]" not in plain.stdout
    widened = run_cli("check", ".", "--unsafe-fixes", cwd=tmp_path)
    lines = widened.stdout.splitlines()
    assert "2 fixable with --fix --unsafe-fixes." in lines
    assert not any("more fixable" in line for line in lines)
    assert sum(" [*] " in line for line in lines) == 2
    assert (tmp_path / "a.yaml").read_text() == text  # nothing applied


def test_statistics(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", TWO_RULES)
    write(tmp_path, "b.yaml", TWO_RULES.replace("9", "8"))
    # both rules are info: the exit code follows --fail-on, as without --statistics
    assert run_cli("check", ".", "--statistics", cwd=tmp_path).returncode == 0
    r = run_cli("check", ".", "--statistics", "--fail-on", "info", cwd=tmp_path)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert "2\tFP8105\tlarge-margin" in lines
    assert "2\tFP8206\te4m3-gradients" in lines  # an info finding's fix is unsafe: no [*]
    rows = [line for line in lines if "\t" in line]
    assert len(rows) == len({line.split("\t")[1] for line in rows}) == 2
    # the text form ends with the summary, as ruff's "Found N errors." line
    assert lines[len(rows) :] == [
        "Found 4 findings (4 info) in 2 files checked.",
        "(2 more fixable with --fix --unsafe-fixes.)",
    ]
    assert run_cli("check", ".", "--statistics", "--fix", cwd=tmp_path).returncode == 2
    r = run_cli("check", ".", "--statistics", "-q", cwd=tmp_path)
    assert len(r.stdout.splitlines()) == 2  # --quiet: the rows alone


def test_exclusions_and_per_file_ignores_on_the_command_line(tmp_path: Path) -> None:
    write(tmp_path, "keep/a.yaml", RISKY)
    write(tmp_path, "vendor/b.yaml", RISKY)
    write(tmp_path, "legacy/c.yaml", RISKY)
    write(tmp_path, "pyproject.toml", '[tool.fp8lint]\nexclude = ["legacy"]\n')

    def files(*args: str) -> list[str]:
        r = run_cli("check", ".", "--output-format", "json", "--exit-zero", *args, cwd=tmp_path)
        return sorted({d["filename"] for d in json.loads(r.stdout)})

    assert files() == ["keep/a.yaml", "vendor/b.yaml"]
    assert files("--extend-exclude", "vendor") == ["keep/a.yaml"]
    # --exclude replaces the configuration's exclude
    assert files("--exclude", "vendor") == ["keep/a.yaml", "legacy/c.yaml"]
    r = run_cli(
        "check", ".", "--per-file-ignores", "vendor/*:FP8101,FP8301", "--output-format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert {(d["filename"], d["code"]) for d in json.loads(r.stdout) if d["code"] == "FP8101"} == {
        ("keep/a.yaml", "FP8101")
    }
    for bad in ("vendor/*", ":FP8101", "vendor/*:NOPE"):
        assert run_cli("check", ".", "--per-file-ignores", bad, cwd=tmp_path).returncode == 2


def test_color_choices_and_environment(tmp_path: Path) -> None:
    import subprocess
    import sys

    write(tmp_path, "a.yaml", RISKY)

    def out(*args: str, **env: str) -> str:
        environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
        environ.update(env)
        return subprocess.run(
            [sys.executable, "-m", "fp8lint", "check", "a.yaml", *args],
            capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=60,
        ).stdout  # fmt: skip

    assert "\x1b[" not in out()  # a pipe: no colour
    assert "\x1b[" in out("--color", "always")
    assert "\x1b[" in out(FORCE_COLOR="1")
    assert "\x1b[" not in out(FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" not in out("--color", "never", FORCE_COLOR="1")


def test_rule_without_a_code_lists_the_rules() -> None:
    r = run_cli("rule")
    lines = r.stdout.splitlines()
    assert r.returncode == 0
    assert lines[0].split()[:3] == ["FP8001", "parse-error", "error"]
    assert any(line.startswith("FP8101  zero-headroom") for line in lines)
    assert any("FP8106" in line and "(not selected by default)" in line for line in lines)
    rows = json.loads(run_cli("rule", "--output-format", "json").stdout)
    assert len(rows) == len(lines)
    first = rows[0]
    assert first == {
        "code": "FP8001",
        "name": "parse-error",
        "summary": "A file that cannot be read or parsed",
        "severity": "error",
        "selected_by_default": True,
    }
    assert {r["code"]: r["selected_by_default"] for r in rows}["FP8405"] is False


def test_simulate_format_flag_is_named_for_the_fp8_format() -> None:
    from fp8lint.arguments import build_parser

    parser = build_parser()
    new = parser.parse_args(
        ["simulate", "--synthetic", "--fp8-format", "e4m3", "--amax-compute-algo", "max"]
    )
    old = parser.parse_args(["simulate", "--synthetic", "--format", "e4m3", "--algo", "max"])
    assert (new.fmt, new.algo) == (old.fmt, old.algo) == ("e4m3", "max")
    assert "--fp8-format" in run_cli("simulate", "--help").stdout


@pytest.mark.skipif(os.name == "nt", reason="newlines in file names")
def test_a_file_name_cannot_forge_a_workflow_command(tmp_path: Path) -> None:
    """In a GitHub Actions log a line that starts with `::error` is a command: a file name
    holding a newline must not be able to start such a line in the default output."""
    name = "x\n::error file=README.md,line=1::forged\n.yaml"
    write(tmp_path, name, RISKY)
    for args in ([], ["--output-format", "concise"], ["--statistics"], ["--show-files"]):
        r = run_cli("check", ".", *args, cwd=tmp_path)
        lines = (r.stdout + r.stderr).splitlines()
        assert not [line for line in lines if line.startswith("::")], (args, lines)
        if not args:
            assert "x\\n::error file=README.md,line=1::forged\\n.yaml:3:17: FP8101" in r.stdout
    r = run_cli("check", ".", "--fix", "--show-fixes", cwd=tmp_path)
    assert not [line for line in r.stdout.splitlines() if line.startswith("::")]


# ------------------------------------------------ the lean parser a pre-commit call gets


def _parse_full(words: list[str]) -> tuple[object, str]:
    """What the parser with every subcommand says about `words` (the behaviour before the
    lean parser): the namespace, or the exit code and stderr."""
    from fp8lint.arguments import build_parser

    command = next((w for w in words if not w.startswith("-")), None)
    try:
        return vars(build_parser(command).parse_args(words)), ""
    except SystemExit as exc:
        return exc.code, "exit"


@pytest.mark.parametrize(
    "words",
    [
        ["check", "a.yaml", "--select", "FP81", "--output-format", "json"],
        ["check", "--sel", "FP81"],  # an abbreviation
        ["check", "--bogus", "x"],  # reported by the top-level parser
        ["check", "--output-format=nope", "x"],  # reported by the subcommand's parser
        ["check", "--max-file-size", "3zb", "x"],  # a type error
        ["check", "--fail-on"],
        ["rule", "FP8101", "--bogus"],
        ["clean"],
        # the quick scan's lines, and the ones it hands to argparse
        ["check"],
        ["check", "a.yaml"],
        ["check", "--no-cache", "a.yaml", "b.py"],
        ["check", "a.yaml", "b.yaml", "-q", "--exit-zero"],
        [
            "check",
            *("--fix", "--diff", "--unsafe-fixes", "--show-fixes", "--exit-non-zero-on-fix"),
            *("--force-exclude", "--statistics", "--quiet", "--no-cache", "x"),
        ],
        ["check", "--force-exclude", "--force-exclude", "x"],
        ["check", "--cache-dir", "c", "--config=f.toml", "--output-format", "json", "x", "y"],
        ["check", "x", "--fail-on", "info", "--output-format=sarif", "--cache-dir=d"],
        ["check", "--cache-dir", "a", "--cache-dir", "b", "x"],  # the last one counts
        ["check", "--output-format", "nope", "x"],  # not a choice: argparse's message
        ["check", "--fail-on=fatal", "x"],
        ["check", "--cache-dir", "-x", "x"],
        ["check", "--cache-dir=", "x"],
        ["check", "x", "--cache-dir"],  # no value
        ["check", "x", "--config", "c.toml", "y"],
        ["check", "a", "--no-cache", "b"],  # paths split by a flag: argparse rejects it
        ["check", "-", "--stdin-filename", "x.yaml"],
        ["check", "--", "-x.yaml"],
        ["check", "-qq", "x"],
        ["check", "--no-c", "x"],
        ["check", "--help"],
        ["check", "x", "--version"],
    ],
)
def test_the_lean_parser_says_what_the_full_parser_says(
    words: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from fp8lint.cli import parse_arguments

    monkeypatch.setenv("COLUMNS", "70")
    expected = _parse_full(words)
    full = capsys.readouterr()
    try:
        got: tuple[object, str] = (vars(parse_arguments(words)), "")
    except SystemExit as exc:
        got = (exc.code, "exit")
    lean = capsys.readouterr()
    assert got == expected
    assert (lean.out, lean.err) == (full.out, full.err)
    if words[1:2] == ["--bogus"]:  # the usage lists every subcommand, as ever
        assert "{check,clean,show,schema,rule,review,simulate}" in lean.err


@pytest.mark.parametrize(
    "words",
    [
        ["check", "a.yaml"],
        ["check", "--force-exclude", "a.yaml", "b/c.py"],
        ["check", "a.yaml", "--no-cache", "--exit-zero"],
        ["check", "--cache-dir", ".c", "--output-format", "github", "a.yaml"],
    ],
)
def test_a_pre_commit_line_is_read_without_argparse(words: list[str]) -> None:
    """argparse (with gettext and locale) and building its parser were a fifth of a
    pre-commit call on a file without FP8 settings: such lines take the quick scan."""
    from fp8lint.cli import quick_check

    quick = quick_check(words)
    assert quick is not None and vars(quick) == _parse_full(words)[0]
    probe = (
        "import sys; before = set(sys.modules); from fp8lint.cli import parse_arguments; "
        f"parse_arguments({words!r}); print(sorted({{'argparse', 'gettext'}} & "
        "(set(sys.modules) - before)))"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "[]", r.stderr


@pytest.mark.parametrize("columns", ["", "0", "abc", "45", "200"])
def test_help_is_as_wide_as_argparse_makes_it(
    columns: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The formatter finds the width without shutil, as shutil.get_terminal_size does."""
    import argparse
    import shutil

    from fp8lint.arguments import _Formatter, build_parser

    monkeypatch.setenv("COLUMNS", columns)
    ours = _Formatter("p")
    theirs = argparse.HelpFormatter("p")
    assert ours._width == theirs._width == shutil.get_terminal_size().columns - 2
    assert ours._max_help_position == theirs._max_help_position
    parser = build_parser("check")
    assert parser.formatter_class is _Formatter
    text = parser.format_help()
    parser.formatter_class = argparse.HelpFormatter
    assert text == parser.format_help()


# ------------------------------------------------ the request a `check` runs from


def test_every_check_option_is_added_once_in_the_help_order() -> None:
    from fp8lint.arguments import CHECK_OPTIONS, CHECK_ORDER
    from fp8lint.cli import CHECK_DEFAULTS

    assert sorted(CHECK_ORDER) == sorted(CHECK_OPTIONS)
    assert len(set(CHECK_ORDER)) == len(CHECK_ORDER)
    assert set(CHECK_ORDER) == set(CHECK_DEFAULTS) - {"command"}


@pytest.mark.parametrize(
    "words",
    [
        ["check"],
        ["check", "a.yaml", "b.py", "--no-cache", "--exit-zero", "-q"],
        ["check", "--fix", "--unsafe-fixes", "--show-fixes", "--exit-non-zero-on-fix", "x"],
        ["check", "--diff", "x"],
        ["check", "--cache-dir", ".c", "--config=f.toml", "--output-format", "github", "x"],
        ["check", "x", "--fail-on", "info", "--statistics", "--force-exclude"],
    ],
)
def test_the_quick_scan_and_argparse_make_the_same_request(words: list[str]) -> None:
    from fp8lint.arguments import parse_full
    from fp8lint.cli import quick_check
    from fp8lint.cli.check import check_request

    quick = quick_check(words)
    assert quick is not None
    assert check_request(quick) == check_request(parse_full(words))  # type: ignore[arg-type]


def test_the_request_holds_what_the_command_line_said() -> None:
    from fp8lint.arguments import parse_full
    from fp8lint.cli.check import check_request
    from fp8lint.settings import FixMode, PathRules, Selection

    request = check_request(
        parse_full(
            [
                *("check", "a", "b", "--select", "FP81,FP82", "--ignore", "FP8101"),
                *("--per-file-ignores", "t/*:FP82", "--extend-exclude", "build"),
                *("--diff", "--unsafe-fixes", "--max-file-size", "1KiB", "--rule-url-base", "u/"),
                *("--option", "min-margin=2", "-o", "out.txt", "--baseline", "b.json"),
            ]
        )
    )
    assert request.paths == ("a", "b")
    assert request.settings.selection == Selection(("FP81", "FP82"), (), ("FP8101",))
    assert request.settings.options == {"FP8106": {"min-margin": 2}}
    assert request.settings.max_bytes == 1024
    assert request.settings.command_line == frozenset({"max_bytes"})
    assert request.path_rules == PathRules(None, ("build",), (("t/*", ("FP82",)),))
    assert request.fix == FixMode(unsafe=True, write=False)
    assert request.diff and request.unsafe and not request.cache
    assert (request.output_file, request.baseline, request.rule_url_base) == (
        "out.txt",
        "b.json",
        "u/",
    )


def test_the_command_exits_with_mains_code_its_heap_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`fp8lint` and `python -m fp8lint` run `cli.entry`: main's exit code, and the heap
    frozen first so the interpreter's last collections skip it; `main` alone freezes nothing
    (tests and embedders call it in-process)."""
    import gc

    import fp8lint.cli as cli

    assert '\nfp8lint = "fp8lint.cli:entry"\n' in (ROOT / "pyproject.toml").read_text()
    assert "entry()" in (ROOT / "src" / "fp8lint" / "__main__.py").read_text()
    frozen: list[int] = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(cli, "main", lambda: 3)
    with pytest.raises(SystemExit) as exited:
        cli.entry()
    assert exited.value.code == 3 and frozen == [1]
    monkeypatch.undo()
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(2))
    assert cli.main(["rule", "FP8101"]) == 0
    assert frozen == [1]
