"""Adopting fp8lint on a repository: configuration, inline suppressions and a baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import run_cli

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"  # FP8101 at 2:17
E4M3 = (
    "MODEL_ARGS:\n  --fp8-format: e4m3\n  --fp8-amax-history-len: 1024\n"
    "  --fp8-amax-compute-algo: max\n"
)  # FP8206 (info) at 2:17
SHORT = (
    "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 32\n"
    "  --fp8-amax-compute-algo: max\n"
)  # FP8102 only when min-amax-history-len > 32; FP8106 (margin 0) when selected


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def findings(
    root: Path, *args: str, paths: tuple[str, ...] = (".",)
) -> list[tuple[str, int, str, str]]:
    r = run_cli("check", *paths, "--output-format", "json", "--exit-zero", *args, cwd=root)
    assert r.returncode == 0, r.stderr
    return [
        (d["filename"], d["location"]["row"], d["code"], d["severity"])
        for d in json.loads(r.stdout)
    ]


def test_pyproject_with_every_key(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "base.toml": 'extend-select = ["FP8405"]\n[severity]\nFP8405 = "warning"\n',
            "pyproject.toml": (
                "[project]\nname = 'x'\n"
                "[tool.fp8lint]\n"
                'extend = "base.toml"\n'
                'select = ["FP81", "FP82"]\n'
                'extend-select = ["FP8106"]\n'
                'ignore = ["FP8105"]\n'
                'exclude = ["vendor/"]\n'
                'extend-exclude = ["*.generated.yaml"]\n'
                'fail-on = "error"\n'
                'rule-url-base = "https://docs.example.org/fp8lint/rules/"\n'
                "[tool.fp8lint.per-file-ignores]\n"
                '"legacy/*.yaml" = ["FP8101"]\n'
                "[tool.fp8lint.severity]\n"
                'FP8101 = "error"\n'
                'e4m3-gradients = "info"\n'
                "[tool.fp8lint.options]\n"
                "min-amax-history-len = 64\n"
                "min-margin = 1\n"
            ),
            "configs/risky.yaml": RISKY,
            "configs/e4m3.yaml": E4M3,
            "configs/short.yaml": SHORT,
            "configs/template.yaml": (
                "model:\n  transformer_engine: true\n  fp8: false\n  fp8_hybrid: true\n"
                "  fp8_margin: 0\n  fp8_amax_history_len: 1\n  fp8_amax_compute_algo: most_recent\n"
            ),
            "configs/margin5.yaml": SHORT.replace("32", "1024") + "  --fp8-margin: 5\n",
            "legacy/old.yaml": RISKY,
            "vendor/third.yaml": RISKY,
            "out.generated.yaml": RISKY,
        },
    )
    assert findings(tmp_path) == [
        ("configs/e4m3.yaml", 2, "FP8106", "warning"),
        ("configs/e4m3.yaml", 2, "FP8206", "info"),
        ("configs/risky.yaml", 2, "FP8101", "error"),
        ("configs/risky.yaml", 2, "FP8106", "warning"),
        ("configs/short.yaml", 2, "FP8106", "warning"),
        ("configs/short.yaml", 3, "FP8102", "info"),
        ("configs/template.yaml", 3, "FP8405", "warning"),
        ("legacy/old.yaml", 2, "FP8106", "warning"),
    ]
    # fail-on = "error": the FP8101 error fails the run, warnings alone would not
    assert run_cli("check", ".", cwd=tmp_path).returncode == 1
    assert run_cli("check", "configs/e4m3.yaml", cwd=tmp_path).returncode == 0
    # the command line wins over the file
    assert run_cli("check", "configs/e4m3.yaml", "--fail-on", "info", cwd=tmp_path).returncode == 1
    assert findings(tmp_path, "--select", "FP8102") == [("configs/short.yaml", 3, "FP8102", "info")]
    # excluded files named explicitly are linted unless --force-exclude (pre-commit)
    assert findings(tmp_path, paths=("vendor/third.yaml",)) == [
        ("vendor/third.yaml", 2, "FP8101", "error"),
        ("vendor/third.yaml", 2, "FP8106", "warning"),
    ]
    assert findings(tmp_path, "--force-exclude", paths=("vendor/third.yaml",)) == []


def test_closest_config_applies(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.fp8lint]\nignore = ["FP8101"]\n',
            "a/risky.yaml": RISKY,
            "b/.fp8lint.toml": 'select = ["FP8101"]\n',
            "b/risky.yaml": RISKY,
            "c/pyproject.toml": "[project]\nname = 'no fp8lint table here'\n",
            "c/risky.yaml": RISKY,
        },
    )
    assert findings(tmp_path) == [("b/risky.yaml", 2, "FP8101", "warning")]
    other = tmp_path / "other.toml"
    other.write_text('select = ["FP8101"]\n')
    assert [f[0] for f in findings(tmp_path, "--config", str(other))] == [
        "a/risky.yaml",
        "b/risky.yaml",
        "c/risky.yaml",
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[tool.fp8lint]\nselekt = ["FP8101"]\n', "pyproject.toml: unknown key `selekt`"),
        ('[tool.fp8lint]\nselect = "FP8101"\n', "`select` must be a list of strings"),
        ('[tool.fp8lint]\nignore = ["FP9999"]\n', "`ignore` names an unknown rule `FP9999`"),
        (
            '[tool.fp8lint.options]\nmin-margin = "two"\n',
            "rule option `min-margin` must be int, got 'two'",
        ),
        ("[tool.fp8lint.options]\nmin-headroom = 2\n", "unknown rule option `min-headroom`"),
        ('[tool.fp8lint.severity]\nFP8101 = "fatal"\n', "`severity.FP8101` must be one of"),
        ('[tool.fp8lint]\nextend = "pyproject.toml"\n', "`extend` cycle"),
        ("[tool.fp8lint\n", "invalid TOML"),
    ],
)
def test_bad_configuration_is_exit_two_naming_file_and_key(
    tmp_path: Path, config: str, message: str
) -> None:
    write(tmp_path, {"pyproject.toml": config, "risky.yaml": RISKY})
    r = run_cli("check", ".", cwd=tmp_path)
    assert r.returncode == 2
    assert message in r.stderr and "pyproject.toml" in r.stderr
    assert "Traceback" not in r.stderr


def test_show_settings(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": (
                '[tool.fp8lint]\nignore = ["FP8201"]\n[tool.fp8lint.per-file-ignores]\n'
                '"tests/*" = ["FP8101"]\n[tool.fp8lint.options]\nmin-amax-history-len = 8\n'
            ),
            "tests/x.yaml": RISKY,
        },
    )
    r = run_cli("check", "tests/x.yaml", "--show-settings", "--ignore", "FP8104", cwd=tmp_path)
    assert r.returncode == 0
    data = json.loads(r.stdout)
    assert data["config-file"].endswith("pyproject.toml")
    assert data["effective"]["ignore"] == ["FP8201", "FP8101", "FP8104"]
    assert data["effective"]["options"] == {"FP8102": {"min-amax-history-len": 8}}


# ----------------------------------------------------------------------------- suppressions


def test_inline_suppressions(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "same_line.yaml": "MODEL_ARGS:\n  --fp8-format: hybrid  # fp8lint: ignore[FP8101]\n",
            "line_above.yaml": (
                "MODEL_ARGS:\n  # fp8lint: ignore[zero-headroom] reviewed in PR #12\n"
                "  --fp8-format: hybrid\n"
            ),
            "whole_file.yaml": "# fp8lint: ignore-file[FP8101]\n" + RISKY,
            "not_below_trailing.yaml": (
                "MODEL_ARGS:\n  --bf16: true  # fp8lint: ignore[FP8101]\n  --fp8-format: hybrid\n"
            ),
            "unused.yaml": E4M3.replace(
                "  --fp8-amax-history-len: 1024\n",
                "  --fp8-amax-history-len: 1024  # fp8lint: ignore[FP8102]\n",
            ),
            "partial.yaml": "MODEL_ARGS:\n  --fp8-format: e4m3  # fp8lint: ignore[FP8206,FP8101]\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            "bare.yaml": "MODEL_ARGS:\n  --fp8-format: hybrid  # fp8lint: ignore\n",
            "switched_off.yaml": SHORT.replace(
                "--fp8-format: hybrid", "--fp8-format: hybrid  # fp8lint: ignore[FP8106]"
            ),
            "recipe.py": (
                "from transformer_engine.common.recipe import DelayedScaling\n"
                "r = DelayedScaling(amax_history_len=1)  # fp8lint: ignore[FP8101]\n"
            ),
        },
    )
    assert findings(tmp_path) == [
        ("bare.yaml", 2, "FP8101", "warning"),
        ("bare.yaml", 2, "FP8002", "warning"),
        ("not_below_trailing.yaml", 2, "FP8002", "warning"),
        ("not_below_trailing.yaml", 3, "FP8101", "warning"),
        ("partial.yaml", 2, "FP8002", "warning"),
        ("unused.yaml", 2, "FP8206", "info"),
        ("unused.yaml", 3, "FP8002", "warning"),
    ]
    r = run_cli("check", ".", "--fix", cwd=tmp_path)
    assert "Traceback" not in r.stderr
    # the unused suppression goes; FP8206's format switch (info, and numerics) stays offered
    assert (tmp_path / "unused.yaml").read_text() == E4M3
    assert (tmp_path / "partial.yaml").read_text().splitlines()[1] == (
        "  --fp8-format: e4m3  # fp8lint: ignore[FP8206]"
    )
    assert (
        (tmp_path / "bare.yaml")
        .read_text()
        .startswith("MODEL_ARGS:\n  --fp8-format: hybrid  # fp8lint: ignore\n")
    )


def test_own_line_unused_suppression_is_removed_with_its_line(tmp_path: Path) -> None:
    text = (
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  # fp8lint: ignore[FP8104]\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )
    write(tmp_path, {"a.yaml": text})
    run_cli("check", ".", "--fix", cwd=tmp_path)
    assert (tmp_path / "a.yaml").read_text() == text.replace("  # fp8lint: ignore[FP8104]\n", "")


def test_json_has_no_comment_suppressions_but_per_file_ignores(tmp_path: Path) -> None:
    acc = '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "fp8_format": "E4M3"}}\n'
    write(tmp_path, {"acc.json": acc})
    assert [f[2] for f in findings(tmp_path)] == ["FP8206"]
    (tmp_path / ".fp8lint.toml").write_text('[per-file-ignores]\n"*.json" = ["FP8206"]\n')
    assert findings(tmp_path) == []


# ----------------------------------------------------------------------------- baseline


def test_baseline_survives_moved_lines_and_reports_stale_entries(tmp_path: Path) -> None:
    write(tmp_path, {"configs/a.yaml": RISKY, "configs/b.yaml": E4M3})
    r = run_cli("check", ".", "--write-baseline", "fp8lint-baseline.json", cwd=tmp_path)
    assert r.returncode == 0 and "Wrote 2 baseline entries" in r.stderr
    data = json.loads((tmp_path / "fp8lint-baseline.json").read_text())
    assert data["findings"] == [
        {"code": "FP8101", "path": "configs/a.yaml", "key": "--fp8-format: hybrid", "count": 1},
        {"code": "FP8206", "path": "configs/b.yaml", "key": "--fp8-format: e4m3", "count": 1},
    ]
    # lines move, a comment is added: still the same findings
    (tmp_path / "configs/a.yaml").write_text("# moved\n\n" + RISKY.replace("hybrid", "hybrid  # x"))
    r = run_cli("check", ".", "--baseline", "fp8lint-baseline.json", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
    # a new finding is reported; the fixed one makes its entry stale
    write(tmp_path, {"configs/c.yaml": RISKY, "configs/b.yaml": E4M3.replace("e4m3", "hybrid")})
    r = run_cli(
        "check",
        ".",
        "--baseline",
        "fp8lint-baseline.json",
        "--output-format",
        "json",
        cwd=tmp_path,
    )
    assert r.returncode == 1
    assert [(d["filename"], d["code"]) for d in json.loads(r.stdout)] == [
        ("configs/c.yaml", "FP8101")
    ]
    assert "1 baseline entry no longer match" in r.stderr
    assert "FP8206 configs/b.yaml: --fp8-format: e4m3" in r.stderr
    # the baseline works from another working directory too
    r = run_cli("check", "configs", "--baseline", "../fp8lint-baseline.json", cwd=tmp_path)
    assert "configs/a.yaml" not in r.stdout


def test_bad_baseline_is_exit_two(tmp_path: Path) -> None:
    write(tmp_path, {"a.yaml": RISKY, "b.json": "{not json"})
    r = run_cli("check", "a.yaml", "--baseline", "b.json", cwd=tmp_path)
    assert r.returncode == 2 and "b.json:1:2: not a baseline" in r.stderr
