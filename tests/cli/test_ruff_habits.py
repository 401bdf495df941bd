"""The command line's ruff habits (issue 24): no abbreviated options, JSON for `rule` and
`--statistics`, `--add-noqa`, inline `--config 'KEY = VALUE'`, `-` without a name, and
scripts without an extension found by their `#!` line.  In-process calls of `main`."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from fp8lint.cli import main, parse_arguments, quick_check

RISKY = "MODEL_ARGS:\n  --tensor-model-parallel-size: 2\n  --fp8-format: hybrid\n"
LAUNCH = "python pretrain_gpt.py --fp8-format hybrid --tensor-model-parallel-size 2\n"
TORCHTITAN = (
    '[model]\nname = "llama3"\nconverters = ["float8"]\n\n'
    "[quantize.linear.float8]\nenable_fsdp_float8_all_gather = true\n"
)
TE_PY = (
    "from transformer_engine.common.recipe import DelayedScaling\n\n"
    "recipe = DelayedScaling(amax_history_len=1, amax_compute_algo='most_recent')\n"
)


def cli(
    capsys: pytest.CaptureFixture[str], *words: str, stdin: bytes | None = None
) -> tuple[int, str, str]:
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        code = main(list(words))
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.stdin = sys.__stdin__
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FP8LINT_DEBUG", raising=False)
    return tmp_path


# ----------------------------------------------------------------- no abbreviations


@pytest.mark.parametrize(
    "words",
    [
        ["check", "--selec", "FP8101", "a.yaml"],
        ["check", "--stat", "a.yaml"],  # a flag the quick scan reads, abbreviated
        ["check", "--no-cach", "a.yaml"],
        ["check", "--output-form", "json", "a.yaml"],
        ["check", "--output-form=json", "a.yaml"],
        ["check", "--conf", "c.toml", "a.yaml"],
        ["rule", "--al"],
        ["show", "--output", "json", "a.yaml"],
    ],
)
def test_an_abbreviated_option_is_an_error(
    words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """ruff rejects `--selec`: so does fp8lint, in argparse and in the quick scan (which
    hands such a line to argparse)."""
    assert quick_check(words) is None
    with pytest.raises(SystemExit) as exc:
        parse_arguments(words)
    assert exc.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_the_whole_option_still_works() -> None:
    assert parse_arguments(["check", "--select", "FP8101", "a.yaml"]).select == ["FP8101"]
    quick = quick_check(["check", "--statistics", "--output-format=json", "a.yaml"])
    assert quick is not None and quick.statistics and quick.output_format == "json"


# ----------------------------------------------------------------- rule as JSON


def test_rule_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    from fp8lint.rules import rule_page

    code, out, _ = cli(capsys, "rule", "FP8101", "--output-format", "json")
    assert code == 0
    got = json.loads(out)
    assert got["code"] == "FP8101" and got["name"] == "zero-headroom"
    assert (got["severity"], got["fix"], got["default_enabled"]) == ("warning", "unsafe", True)
    assert got["summary"] and got["options"] == []
    assert got["explanation"] == rule_page("FP8101")
    _, out, _ = cli(capsys, "rule", "large-margin", "--output-format", "json")  # by name
    assert json.loads(out)["code"] == "FP8105"
    _, out, _ = cli(capsys, "rule", "FP8102", "--output-format", "json")
    (option,) = json.loads(out)["options"]
    assert (option["name"], option["type"], option["default"]) == (
        "min-amax-history-len",
        "int",
        16,
    )
    _, out, _ = cli(capsys, "rule", "FP8106", "--output-format", "json")
    assert json.loads(out)["default_enabled"] is False
    _, out, _ = cli(capsys, "rule", "FP8001", "--output-format", "json")  # an engine code
    assert json.loads(out)["fix"] is None
    code, out, _ = cli(capsys, "rule", "FP8101")
    assert code == 0 and out.startswith("# FP8101 zero-headroom")  # text: the page


def test_rule_all_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    from fp8lint.rules import page_codes

    code, out, _ = cli(capsys, "rule", "--all", "--output-format", "json")
    assert code == 0
    rows = json.loads(out)
    assert [r["code"] for r in rows] == page_codes()
    assert all(r["explanation"].startswith(f"# {r['code']} ") for r in rows)


# ----------------------------------------------------------------- --statistics


def test_statistics_as_json(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "a.yaml").write_text(RISKY)
    (here / "b.yaml").write_text(RISKY)
    code, out, _ = cli(capsys, "check", ".", "--statistics", "--output-format", "json")
    assert code == 1
    assert json.loads(out) == [
        {"code": "FP8101", "name": "zero-headroom", "count": 2, "fixable": False}
    ]
    _, out, _ = cli(capsys, "check", ".", "--statistics", "--output-format=json", "--unsafe-fixes")
    assert json.loads(out)[0]["fixable"] is True  # unsafe fixes shown as available
    _, out, _ = cli(capsys, "check", ".", "--statistics")
    assert out.splitlines()[0] == "2\tFP8101\tzero-headroom"
    assert out.splitlines()[1] == "Found 2 findings (2 warnings) in 2 files checked."


# ----------------------------------------------------------------- --add-noqa


def test_add_noqa_in_every_syntax(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "a.yaml").write_bytes(RISKY.replace("\n", "\r\n").encode())
    os.chmod(here / "a.yaml", 0o640)
    (here / "merge.yaml").write_text(
        "MODEL_ARGS:\n  --fp8-format: hybrid  # fp8lint: ignore[FP8106]  and a note\n"
    )
    (here / "torchtitan.toml").write_text(TORCHTITAN)
    (here / "recipe.py").write_text(TE_PY)
    (here / "run.sh").write_text("#!/bin/bash\n" + LAUNCH)
    (here / "ds.json").write_text(
        '{"fp8": {"enabled": true, "amax_history_len": 1, "margin": 0}}\n'
    )
    before = {p.name: p.read_bytes() for p in here.iterdir()}
    code, out, err = cli(capsys, "check", ".", "--add-noqa")
    assert code == 0 and out == ""
    assert (here / "a.yaml").read_bytes() == (
        b"MODEL_ARGS:\r\n  --tensor-model-parallel-size: 2\r\n"
        b"  --fp8-format: hybrid  # fp8lint: ignore[FP8101]\r\n"
    )
    assert stat.S_IMODE(os.stat(here / "a.yaml").st_mode) == 0o640
    assert (here / "merge.yaml").read_text().splitlines()[1] == (
        "  --fp8-format: hybrid  # fp8lint: ignore[FP8106, FP8101]  and a note"
    )
    toml = (here / "torchtitan.toml").read_text()
    assert "# fp8lint: ignore[FP8202]" in toml
    assert "# fp8lint: ignore[FP8101]" in (here / "recipe.py").read_text()
    assert (here / "run.sh").read_text() == (
        "#!/bin/bash\n" + LAUNCH.rstrip("\n") + "  # fp8lint: ignore[FP8101]\n"
    )
    assert (here / "ds.json").read_bytes() == before["ds.json"]
    assert "ds.json: JSON has no comments" in err
    for name, data in before.items():  # only the flagged lines changed, each by its end
        old = data.decode().splitlines()
        new = (here / name).read_bytes().decode().splitlines()
        assert len(old) == len(new)
        assert all(a == b or "fp8lint: ignore[" in b for a, b in zip(old, new, strict=True))
    added = int(err.splitlines()[-1].split()[1])
    assert err.splitlines()[-1] == f"Added {added} noqa directives." and added >= 5
    # the comments suppress the findings; a second run adds nothing
    code, out, _ = cli(capsys, "check", ".", "--exit-zero", "--output-format", "json")
    assert {d["filename"] for d in json.loads(out)} == {"ds.json"}
    after = {p.name: p.read_bytes() for p in here.iterdir()}
    code, _, err = cli(capsys, "check", ".", "--add-noqa")
    assert code == 0 and err.splitlines()[-1] == "Added 0 noqa directives."
    assert {p.name: p.read_bytes() for p in here.iterdir()} == after


def test_add_noqa_leaves_a_continued_line_alone(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A comment after a trailing backslash would end the command there: not written."""
    text = "#!/bin/bash\npython pretrain_gpt.py \\\n  --fp8-format hybrid \\\n  --tp 2\n"
    (here / "run.sh").write_text(text)
    code, _, err = cli(capsys, "check", "run.sh", "--add-noqa")
    assert code == 0 and (here / "run.sh").read_text() == text
    assert "run.sh: no comment can go on line(s) 3" in err
    assert err.splitlines()[-1] == "Added 0 noqa directives."


def test_add_noqa_with_an_existing_bare_comment(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid  # fp8lint: ignore\n")
    code, _, err = cli(capsys, "check", "a.yaml", "--add-noqa")
    assert code == 0 and err.splitlines()[-1] == "Added 1 noqa directive."
    assert (here / "a.yaml").read_text().splitlines()[1] == (
        "  --fp8-format: hybrid  # fp8lint: ignore[FP8101]"
    )


@pytest.mark.parametrize("other", ["--fix", "--diff", "--statistics"])
def test_add_noqa_excludes_fixing(
    other: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "a.yaml").write_text(RISKY)
    code, _, err = cli(capsys, "check", "a.yaml", "--add-noqa", other)
    assert code == 2 and "--add-noqa cannot be combined" in err
    assert (here / "a.yaml").read_text() == RISKY


# ----------------------------------------------------------------- inline --config


def test_inline_config(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "a.yaml").write_text(RISKY)
    code, out, _ = cli(capsys, "check", "a.yaml", "--config", 'severity.FP8101 = "error"')
    assert code == 1 and "FP8101 [error]" in out
    code, out, _ = cli(capsys, "check", "a.yaml", "--config", "ignore = ['FP8101']")
    assert code == 0 and "All checks passed" in out
    code, _, _ = cli(capsys, "check", "a.yaml", "--config", 'fail-on = "error"')
    assert code == 0
    # laid over the file's configuration, and over a --config FILE
    (here / "base.toml").write_text('fail-on = "error"\n')
    code, _, _ = cli(capsys, "check", "a.yaml", "--config", "base.toml")
    assert code == 0
    code, _, _ = cli(
        capsys, "check", "a.yaml", "--config", "base.toml", "--config", 'fail-on = "warning"'
    )
    assert code == 1
    (here / "pyproject.toml").write_text('[tool.fp8lint]\nignore = ["FP8101"]\n')
    _, out, _ = cli(capsys, "check", "a.yaml", "--config", "extend-select = ['FP8106']")
    assert "FP8106" in out and "FP8101" not in out  # the file's ignore stays


def test_inline_cache_false_writes_no_cache(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FP8LINT_NO_CACHE")
    (here / "a.yaml").write_text(RISKY)
    (here / "fp8lint.toml").write_text("extend-select = ['FP8106']\n")  # a file to remember
    code, _, _ = cli(capsys, "check", "a.yaml", "--config", "cache = false")
    assert code == 1 and not (here / ".fp8lint_cache").exists()
    code, _, _ = cli(capsys, "check", "a.yaml")
    assert code == 1 and (here / ".fp8lint_cache").is_dir()  # the control


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("selec = ['FP8101']", "--config: unknown key `selec` (did you mean `select`?)"),
        ('fail-on = "fatal"', "--config: `fail-on` must be one of error, warning, info"),
        ("select = FP8101", "neither a file nor a TOML `KEY = VALUE` setting"),
        ("a = 1\nb = 2", "give one `KEY = VALUE` setting per --config"),
        ("extend = 'x.toml'", "`extend` names a file"),
        ("options.FP8102.min-amax-history-len = 'x'", "--config: "),
    ],
)
def test_inline_config_errors(
    setting: str, message: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "a.yaml").write_text(RISKY)
    code, out, err = cli(capsys, "check", "a.yaml", "--config", setting)
    assert code == 2 and out == ""
    assert err.startswith("fp8lint: error: ") and message in err


def test_two_config_files_are_an_error(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (here / "a.toml").write_text("")
    (here / "b.toml").write_text("")
    code, _, err = cli(capsys, "check", ".", "--config", "a.toml", "--config", "b.toml")
    assert code == 2 and "--config names one configuration file" in err


def test_the_quick_scan_reads_config_as_argparse_does() -> None:
    from fp8lint.arguments import parse_full

    words = ["check", "--config", "c.toml", "--config=fail-on = 'info'", "a.yaml"]
    quick = quick_check(words)
    assert quick is not None and vars(quick) == vars(parse_full(words))
    assert quick.config == ["c.toml", "fail-on = 'info'"]


# ----------------------------------------------------------------- `-` without a name


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (RISKY, "-:3:17"),  # YAML
        (LAUNCH, "-:1:37"),  # a command line
        ("#!/bin/bash\n" + LAUNCH, "-:2:37"),
        (TE_PY, "-:3:"),  # Python
        (TORCHTITAN, "-:"),  # TOML
    ],
)
def test_stdin_alone_guesses_the_kind(
    text: str, where: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "check", "-", "--output-format", "concise", stdin=text.encode())
    assert code == 1, err
    assert out.startswith(where)


def test_stdin_alone_that_is_no_config(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "check", "-", stdin=b"hello world\n")
    assert code == 0
    assert "warning: -: not checked" in err and "--stdin-filename" in err


def test_the_name_decides_the_kind_when_given(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "check", "-", "--stdin-filename", "x.txt", stdin=RISKY.encode())
    assert code == 0 and "x.txt: not checked" in err


def test_guess_kind() -> None:
    from fp8lint.documents.guess import guess_kind

    assert guess_kind(b'{"fp8": {"enabled": true}}') == "json"
    assert guess_kind(b"[1, 2]") == "json"
    assert guess_kind(b"[model]\nconverters = ['float8']\n") == "toml"
    assert guess_kind(b"import te\n") == "python"
    assert guess_kind(b"a: foo(1)\n") == "yaml"  # an annotation to Python, a mapping to YAML
    assert guess_kind(b"- a\n- b\n") == "yaml"
    assert guess_kind(b"export X=1\ntorchrun --nproc 8 train.py\n") == "shell"
    assert guess_kind(b"#!/usr/bin/env zsh\n") == "shell"
    assert guess_kind(b"") is None
    assert guess_kind(b"hello") is None


# ----------------------------------------------------------------- scripts by their `#!` line


@pytest.mark.parametrize(
    "shebang", ["#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh", "#!/usr/bin/env zsh"]
)
def test_an_extensionless_script_is_checked_as_shell(
    shebang: str, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (here / "bin").mkdir()
    script = here / "bin" / "train"
    script.write_text(f"{shebang}\n{LAUNCH}")
    script.chmod(0o755)
    (here / "bin" / "notes").write_text(LAUNCH)  # no `#!` line, not executable: not ours
    code, out, err = cli(capsys, "check", "bin", "--output-format", "concise")
    assert code == 1, err
    assert out.splitlines()[0].startswith("bin/train:2:37: FP8101")
    assert "in 1 file checked" in out
    code, out, _ = cli(capsys, "check", "bin/train", "--output-format", "concise")
    assert code == 1 and out.startswith("bin/train:2:37: FP8101")
    code, out, _ = cli(capsys, "check", "--show-files", "bin")
    assert out.splitlines() == ["bin/train"]
