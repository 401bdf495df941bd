"""fp8lint's configuration as a pydantic model: messages, rule options, `fp8lint schema`."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fp8lint.cli import main
from fp8lint.engine.config_model import KEYS, Invalid, rule_options_model, validate
from fp8lint.engine.schemas import json_schema, schemas
from fp8lint.engine.units import SIZE_PATTERN, parse_size
from fp8lint.rules import all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"

EVERY_KEY = (
    "[tool.fp8lint]\n"
    'extend = "base.toml"\n'
    'select = ["FP81", "FP82", "zero-headroom", "ALL"]\n'
    'extend-select = ["FP8106"]\n'
    'ignore = ["FP8105"]\n'
    'exclude = ["vendor/"]\n'
    'extend-exclude = ["*.generated.yaml"]\n'
    'fail-on = "error"\n'
    'rule-url-base = "https://docs.example.org/fp8lint/rules/"\n'
    'max-file-size = "512KiB"\n'
    "file-timeout = 2.5\n"
    "cache = true\n"
    'cache-dir = "build/cache"\n'
    'target-versions = { megatron-core = "0.18", transformer-engine = "main" }\n'
    "[tool.fp8lint.per-file-ignores]\n"
    '"legacy/*.yaml" = ["FP8101"]\n'
    "[tool.fp8lint.severity]\n"
    'FP8101 = "error"\n'
    'e4m3-gradients = "info"\n'
    "[tool.fp8lint.options]\n"
    "min-amax-history-len = 64\n"
    "min-margin = 1\n"
)


def check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    code = main(["check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def table(text: str) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads(text)["tool"]["fp8lint"]
    return data


# --------------------------------------------------------------------------- messages


def test_every_problem_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.fp8lint]\n"
        'selekt = ["FP8101"]\n'
        "cache = 1\n"
        'fail-on = "fatal"\n'
        'max-file-size = "lots"\n'
        "[tool.fp8lint.per-file-ignores]\n"
        '"legacy/*.yaml" = ["zero-headroum"]\n'
        "[tool.fp8lint.severity]\n"
        'zero-headroom = "fatal"\n'
        "[tool.fp8lint.options]\n"
        'min-margin = "two"\n'
    )
    (tmp_path / "a.yaml").write_text(RISKY)
    code, out, err = check(tmp_path, monkeypatch, capsys, ".")
    assert code == 2 and out == ""
    where = f"fp8lint: error: {tmp_path / 'pyproject.toml'}: "
    assert sorted(err.splitlines()) == sorted(
        where + line
        for line in (
            "unknown key `selekt` (did you mean `select`?)",
            "`cache` must be true or false",
            "`fail-on` must be one of error, warning, info",
            "`max-file-size`: not a size: 'lots' (write e.g. 16MiB, 512KiB, 2MB or bytes)",
            '`per-file-ignores."legacy/*.yaml"` names an unknown rule `zero-headroum` '
            "(did you mean `zero-headroom`?)",
            "`severity.zero-headroom` must be one of error, warning, info",
            "rule option `min-margin` must be int, got 'two'",
        )
    )


@pytest.mark.parametrize(
    ("written", "suggested"),
    [
        ("extend_select", "extend-select"),
        ("per_file_ignores", "per-file-ignores"),
        ("max_file_size", "max-file-size"),
        ("cachedir", "cache-dir"),
        ("fail_on", "fail-on"),
        ("extends", "extend"),
    ],
)
def test_an_unknown_key_suggests_the_closest(written: str, suggested: str) -> None:
    with pytest.raises(Invalid) as info:
        validate({written: "x"})
    assert info.value.problems == [f"unknown key `{written}` (did you mean `{suggested}`?)"]


def test_no_suggestion_when_nothing_is_close() -> None:
    with pytest.raises(Invalid) as info:
        validate({"colour": True})
    assert info.value.problems == ["unknown key `colour`"]


def test_nested_keys_are_dotted_as_toml_writes_them() -> None:
    with pytest.raises(Invalid) as info:
        validate({"per-file-ignores": {"a b/*.yaml": "FP8101", "plain": [3]}})
    assert info.value.problems == [
        '`per-file-ignores."a b/*.yaml"` must be a list of strings',
        "`per-file-ignores.plain` must be a list of strings",
    ]


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({"select": ["FP8101", ""]}, "`select` names an unknown rule ``"),
        ({"severity": {"FP9999": "info"}}, "`severity.FP9999` names an unknown rule `FP9999`"),
        ({"severity": "error"}, "`severity` must be a table of CODE = level"),
        ({"options": ["min-margin"]}, "`options` must be a table of option = value"),
        ({"options": {"min_margin": 3}}, "unknown rule option `min_margin` (did you mean"),
        ({"options": {"min-margin": True}}, "rule option `min-margin` must be int, got True"),
        ({"extend": 3}, "`extend` must be a path (a string)"),
        ({"cache-dir": "  "}, "`cache-dir` must be a non-empty path"),
        ({"file-timeout": "10"}, "`file-timeout`: not a number of seconds: '10'"),
        ({"max-file-size": 0}, "`max-file-size`: a size must be at least 1 byte, got 0"),
    ],
)
def test_problems(given: dict[str, Any], problem: str) -> None:
    with pytest.raises(Invalid) as info:
        validate(given)
    assert len(info.value.problems) == 1 and info.value.problems[0].startswith(problem)


def test_valid_values_are_normalized() -> None:
    data = validate(table(EVERY_KEY))
    assert data["written"] == sorted(set(KEYS))
    assert data["severity"] == {"FP8101": "error", "FP8206": "info"}
    assert data["options"] == {
        "FP8102": {"min-amax-history-len": 64},
        "FP8106": {"min-margin": 1},
    }
    assert data["max_file_size"] == 512 * 1024 and data["file_timeout"] == 2.5
    assert data["per_file_ignores"] == [["legacy/*.yaml", ["FP8101"]]]
    assert validate({})["written"] == []


def test_show_settings_after_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "base.toml").write_text('[severity]\nfp8206 = "warning"\n')
    (tmp_path / "pyproject.toml").write_text(EVERY_KEY)
    code, out, err = check(tmp_path, monkeypatch, capsys, "a.yaml", "--show-settings")
    assert code == 0, err
    data = json.loads(out)
    assert data["severity"] == {"FP8101": "error", "FP8206": "info"}  # the child wins
    assert data["max-file-size"] == 524288 and data["cache-dir"] == "build/cache"


# --------------------------------------------------------------------------- rule options


def test_the_options_model_is_what_the_rules_declare() -> None:
    model, owners = rule_options_model()
    declared = {o.name: (r.code, o) for r in all_rules() for o in r.options}
    assert declared, "no rule declares an option"
    fields = {f.alias: f for f in model.model_fields.values()}
    assert set(fields) == set(declared) == set(owners)
    for name, (code, option) in declared.items():
        assert fields[name].annotation is option.type
        assert fields[name].default == option.default
        assert owners[name].code == code


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("min-margin=x", "rule option `min-margin` expects int, got `x`"),
        ("min_margin=3", "unknown rule option `min_margin` (did you mean `min-margin`?)"),
        ("min-margin", "`--option min-margin`: write NAME=VALUE"),
    ],
)
def test_command_line_options_are_checked_by_the_same_model(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
    message: str,
) -> None:
    code, _out, err = check(tmp_path, monkeypatch, capsys, ".", "--option", option)
    assert code == 2 and err.startswith(f"fp8lint: error: {message}"), err


def test_command_line_options_are_converted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.yaml").write_text(RISKY)
    args = ("a.yaml", "--show-settings", "--option", "min-margin=3", "--option", "min-margin=5")
    code, out, _err = check(tmp_path, monkeypatch, capsys, *args)
    assert code == 0
    assert json.loads(out)["effective"]["options"] == {"FP8106": {"min-margin": 5}}


# --------------------------------------------------------------------------- fp8lint schema


def schema_command(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["schema", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_schema_lists_the_schemas(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = schema_command(capsys)
    assert code == 0 and not err
    names = [line.split()[0] for line in out.splitlines()]
    assert names == [s.name for s in schemas()] and "config" in names


def test_an_unknown_schema_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = schema_command(capsys, "conifg")
    assert code == 2 and not out
    assert err == (
        "fp8lint: error: unknown schema `conifg` (did you mean `config`?); known schemas: "
        + ", ".join(s.name for s in schemas())
        + "\n"
    )


def config_schema(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, out, err = schema_command(capsys, "config")
    assert code == 0 and not err
    again = schema_command(capsys, "config")[1]
    assert out == again  # deterministic
    data: dict[str, Any] = json.loads(out)
    assert out == json.dumps(data, indent=2, sort_keys=True) + "\n"  # keys sorted
    return data


def test_the_config_schema_has_every_key(capsys: pytest.CaptureFixture[str]) -> None:
    schema = config_schema(capsys)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert sorted(schema["properties"]) == KEYS
    assert schema["additionalProperties"] is False
    options = schema["properties"]["options"]
    assert options["additionalProperties"] is False
    assert options["properties"]["min-margin"]["default"] == 2
    # TOML has no null: no key may be null
    assert "null" not in json.dumps(schema["properties"])


def test_the_config_schema_accepts_a_real_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    validator = jsonschema.Draft202012Validator(config_schema(capsys))
    data = table(EVERY_KEY)
    assert list(validator.iter_errors(data)) == []
    validate(data)  # and so does fp8lint
    for size in ("4MiB", "512 KiB", "2MB", 1024):
        assert validator.is_valid({"max-file-size": size})


@pytest.mark.parametrize(
    "bad",
    [
        {"selekt": ["FP8101"]},
        {"fail-on": "fatal"},
        {"cache": 1},
        {"select": "FP8101"},
        {"max-file-size": "16 MiBs"},
        {"max-file-size": 0},
        {"file-timeout": -1},
        {"severity": {"FP8101": "fatal"}},
        {"per-file-ignores": {"*.yaml": "FP8101"}},
        {"options": {"min-headroom": 2}},
        {"options": {"min-margin": "two"}},
    ],
)
def test_the_config_schema_rejects_what_fp8lint_rejects(
    capsys: pytest.CaptureFixture[str], bad: dict[str, Any]
) -> None:
    validator = jsonschema.Draft202012Validator(config_schema(capsys))
    assert not validator.is_valid(bad)
    with pytest.raises(Invalid):
        validate(bad)


@pytest.mark.parametrize(
    "text",
    ["4096", "16MiB", "512 KiB", "2MB", "1.5GiB", "3kb", " 7 b ", "16 MiBs", "lots", "1e3", "MiB"],
)
def test_the_size_pattern_is_parse_size(text: str) -> None:
    try:
        parse_size(text)
        parsed = True
    except ValueError:
        parsed = False
    assert bool(re.search(SIZE_PATTERN, text)) == parsed


def test_every_registered_schema_exports(capsys: pytest.CaptureFixture[str]) -> None:
    for entry in schemas():
        schema = json_schema(entry)
        jsonschema.Draft202012Validator.check_schema(schema)
        code, out, _err = schema_command(capsys, entry.name.upper())
        assert code == 0 and json.loads(out) == schema


# --------------------------------------------------------------------------- reading


def test_a_configuration_that_is_not_utf8_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".fp8lint.toml").write_bytes(b'select = ["FP81"]  # caf\xe9\n')
    code, _out, err = check(tmp_path, monkeypatch, capsys, ".")
    assert code == 2
    assert err.startswith(f"fp8lint: error: {tmp_path / '.fp8lint.toml'}: invalid TOML: not UTF-8")


def test_an_oversized_configuration_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from fp8lint.engine import config

    monkeypatch.setattr(config, "MAX_CONFIG_BYTES", 1024 * 1024)
    (tmp_path / ".fp8lint.toml").write_text("# " + "x" * (1024 * 1024) + "\n")
    code, _out, err = check(tmp_path, monkeypatch, capsys, ".")
    assert code == 2 and err.endswith(".fp8lint.toml: over 1 MiB: not read\n"), err
