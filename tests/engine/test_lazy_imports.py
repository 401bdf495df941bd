"""Files without FP8 settings must not pay for pydantic or the rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Every probe runs one `fp8lint check` in a fresh interpreter and judges only the modules
# fp8lint itself loaded (CI's interpreter imports typing and shutil at start-up, through a site
# hook); its report is Python that reads `code` and `NEW`.
CHECK = """
import sys
BEFORE = set(sys.modules)  # what the interpreter and site hooks loaded
from fp8lint.cli import main
code = main(["check", *sys.argv[1:]])
NEW = set(sys.modules) - BEFORE  # what fp8lint loaded
"""


def fresh_check(
    report: str,
    *args: str,
    cwd: Path | None = None,
    cache: bool = False,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`fp8lint check ARGS` in a fresh process, then `report`; `cache`: with the cache on (the
    suite turns it off) and without FP8LINT_DEBUG; `env`: variables to set besides."""
    drop = ("FP8LINT_NO_CACHE", "FP8LINT_DEBUG") if cache else ()
    env = {**{k: v for k, v in os.environ.items() if k not in drop}, **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", CHECK + report, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=env,
    )


PROBE = """
heavy = sorted(m for m in ("pydantic", "omegaconf", "libcst", "fp8lint.rule", "fp8lint.model",
                           "fp8lint.frameworks.python_sites") if m in NEW)
print("HEAVY=" + ",".join(heavy))
"""


def probe(*paths: Path) -> str:
    return fresh_check(PROBE, *map(str, paths)).stdout.strip().splitlines()[-1]


def test_non_fp8_files_import_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("model:\n  hidden_size: 4096\n")
    (tmp_path / "b.py").write_text("import torch\nx = torch.nn.Linear(4, 4)\n")
    (tmp_path / "c.json").write_text('{"train_batch_size": 8}\n')
    assert probe(tmp_path) == "HEAVY="


STDLIB_PROBE = """
STDLIB = ("dataclasses", "inspect", "typing", "shutil", "json", "re", "argparse", "gettext",
          "fp8lint.engine.cache", "fp8lint.engine.cache_keys", "fp8lint.engine.cache_codec",
          "fp8lint.engine.cache_shards", "fp8lint.engine.cache_files")
print("STDLIB=" + ",".join(m for m in STDLIB if m in NEW))
"""


def test_non_fp8_files_do_not_import_dataclasses(tmp_path: Path) -> None:
    """`dataclasses` (and the `inspect` it imports) and making dataclasses cost a pre-commit
    call more than its check: the engine's records are `fp8lint.records` (issue 14).  Nor
    typing (the modules on this path import it for type checkers only), nor shutil
    (argparse's help formatter imports it), nor argparse, gettext and re (a pre-commit line
    takes the quick scan), nor, with `--no-cache`, the cache."""
    (tmp_path / "a.yaml").write_text("model:\n  hidden_size: 4096\n")
    r = fresh_check(STDLIB_PROBE, "--no-cache", str(tmp_path))
    assert r.stdout.strip().splitlines()[-1] == "STDLIB="


def test_fp8_yaml_does_not_import_the_python_source(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    assert probe(tmp_path) == "HEAVY=fp8lint.model,fp8lint.rule,pydantic"


def test_fp8_python_imports_the_python_source_and_libcst(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from transformer_engine.common.recipe import DelayedScaling\nr = DelayedScaling()\n"
    )
    heavy = probe(tmp_path).split("=", 1)[1].split(",")
    assert "fp8lint.frameworks.python_sites" in heavy
    assert "libcst" in heavy


def test_python_that_names_no_site_does_not_import_libcst(tmp_path: Path) -> None:
    # passes the byte prefilter (it says fp8), but builds nothing a recognizer reads
    (tmp_path / "a.py").write_text("# try fp8 here later\nx = torch.float8_e4m3fn\n")
    heavy = probe(tmp_path).split("=", 1)[1].split(",")
    assert "libcst" not in heavy
    assert "fp8lint.frameworks.python_sites" in heavy  # it was looked at


RECIPES = {
    "te.py": (
        "import transformer_engine.pytorch as te\n"
        "from transformer_engine.common.recipe import DelayedScaling, Format\n"
        "r = DelayedScaling(fp8_format=Format.HYBRID, amax_compute_algo=lambda h: h.max())\n"
        "with te.fp8_autocast(enabled=True, fp8_recipe=r, fp8_group=get_group()):\n"
        "    pass\n"
    ),
    "ao.py": (
        "from torchao.float8 import Float8LinearConfig, convert_to_float8_training\n"
        "cfg = Float8LinearConfig.from_recipe_name('rowwise')\n"
        "convert_to_float8_training(m, config=cfg, module_filter_fn=lambda mod, fqn: True)\n"
    ),
    "mx.py": (
        "from torchao.prototype.mx_formats import MXLinearConfig, MXLinearRecipeName\n"
        "c = MXLinearConfig.from_recipe_name(MXLinearRecipeName.MXFP8_CUBLAS)\n"
    ),
}


def test_recipe_code_is_read_without_libcst_matchers(tmp_path: Path) -> None:
    """`libcst.matchers` is a large import: recipe code is read with plain node checks."""
    for name, text in RECIPES.items():
        (tmp_path / name).write_text(text)
    report = (
        'print("LOADED=" + ",".join(sorted(m for m in ("libcst", "libcst.matchers") if m in NEW)))'
    )
    out = fresh_check(report, "--exit-zero", str(tmp_path))
    assert out.stdout.strip().splitlines()[-1] == "LOADED=libcst", out.stdout + out.stderr


SIMULATE_PROBE = """
print("SIMULATE=" + ",".join(sorted(m for m in ("numpy", "pyarrow", "polars") if m in NEW)))
"""


def test_check_never_imports_the_simulate_extra(tmp_path: Path) -> None:
    """numpy and pyarrow (the `simulate` extra) cost start-up time and may be missing: check
    must not import them, even on files that load every framework and rule."""
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 0\n")
    (tmp_path / "b.py").write_text(
        "from transformer_engine.common.recipe import DelayedScaling\nr = DelayedScaling()\n"
    )
    r = fresh_check(SIMULATE_PROBE, str(tmp_path))
    assert r.stdout.strip().splitlines()[-1] == "SIMULATE="


# ---------------------------------------------------------------- a remembered configuration

MEMO_PROBE = """
import json
print(json.dumps({"code": code, "pydantic": "pydantic" in NEW,
                  "tomllib": bool({"tomllib", "tomli"} & NEW)}))
"""

CONFIG = (
    "[project]\nname = 'x'\n"
    "[tool.fp8lint]\n"
    'select = ["FP81", "FP82"]\n'
    'max-file-size = "1MiB"\n'
    "[tool.fp8lint.options]\n"
    "min-margin = 3\n"
)


def memo_probe(root: Path, *args: str) -> dict[str, object]:
    """One `fp8lint check` in a fresh process with the cache on: exit code, and whether it
    imported pydantic (the configuration was validated) or a TOML parser."""
    r = fresh_check(MEMO_PROBE, *args, cwd=root, cache=True)
    out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    out["stderr"] = r.stderr
    return out


def settings_of(root: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "FP8LINT_NO_CACHE"}
    r = subprocess.run(
        [sys.executable, "-m", "fp8lint", "check", "a.yaml", "--show-settings", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    data: dict[str, Any] = json.loads(r.stdout)
    return data


def memo_entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/configs/*.json"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    (tmp_path / "a.yaml").write_text("model:\n  hidden_size: 4096\n")
    return tmp_path


def test_a_valid_configuration_is_validated_once(project: Path) -> None:
    first = memo_probe(project, "a.yaml")
    assert first["code"] == 0 and first["pydantic"] is True, first
    assert len(memo_entries(project / ".fp8lint_cache")) == 1
    second = memo_probe(project, "a.yaml")
    # neither pydantic nor a TOML parser: the remembered, validated data is used as it is
    assert second == {"code": 0, "pydantic": False, "tomllib": False, "stderr": ""}, second
    # and it gives exactly the settings a fresh validation gives (but for the cache's place)
    warm, fresh = settings_of(project), settings_of(project, "--no-cache")
    assert warm["effective"].pop("cache-dir") is not None
    assert fresh["effective"].pop("cache-dir") is None
    assert warm == fresh


@pytest.mark.parametrize(
    ("text", "reads_toml"),
    [
        ("[project]\nname = 'x'\n", False),
        ("[project\nname = \n", False),  # not TOML, and not ours to judge
        ("[tool.fp8lint]\nselect = ['FP82']\n", True),
        ('[tool."fp8\\u006cint"]\nselect = ["FP82"]\n', True),  # escapes can spell the key
    ],
)
def test_a_pyproject_that_cannot_name_fp8lint_is_not_parsed(
    tmp_path: Path, text: str, reads_toml: bool
) -> None:
    """A pyproject.toml without `[tool.fp8lint]` is not a configuration: when its bytes cannot
    spell that key, no TOML parser is imported (a tenth of a warm pre-commit call)."""
    (tmp_path / "pyproject.toml").write_text(text)
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    out = memo_probe(tmp_path, "a.yaml")
    assert out["tomllib"] is reads_toml, out
    # a configuration that selects only FP82xx hides the FP8101 finding: it was read
    assert out["stderr"] == "" and out["code"] == (0 if "FP82" in text else 1), out


def test_a_pyproject_without_the_table_is_remembered_as_such(tmp_path: Path) -> None:
    """A pyproject.toml that names fp8lint (as a dependency, say) but has no `[tool.fp8lint]`
    is parsed once; later runs know its bytes from the memo and import no TOML parser."""
    (tmp_path / "pyproject.toml").write_text("[project]\ndependencies = ['fp8lint']\n")
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    first, second = memo_probe(tmp_path, "a.yaml"), memo_probe(tmp_path, "a.yaml")
    assert first["tomllib"] is True and second["tomllib"] is False, (first, second)
    assert first["code"] == second["code"] == 1 and second["stderr"] == ""
    # the same bytes with a table are another key: read and applied
    (tmp_path / "pyproject.toml").write_text(
        "[project]\ndependencies = ['fp8lint']\n[tool.fp8lint]\nselect = ['FP82']\n"
    )
    third = memo_probe(tmp_path, "a.yaml")
    assert third["tomllib"] is True and third["code"] == 0, third


def test_an_edited_configuration_is_validated_again(project: Path) -> None:
    memo_probe(project, "a.yaml")
    path = project / "pyproject.toml"
    before = path.stat()
    path.write_text(CONFIG.replace("min-margin = 3", "min-margin = 4"))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    again = memo_probe(project, "a.yaml")
    assert again["code"] == 0 and again["pydantic"] is True, again
    options = settings_of(project)["options"]
    assert options == {"FP8106": {"min-margin": 4}}
    path.write_text(CONFIG.replace("min-margin = 3", 'min-margin = "4"'))
    bad = memo_probe(project, "a.yaml")
    assert bad["code"] == 2 and "rule option `min-margin` must be int" in str(bad["stderr"])


def test_an_invalid_configuration_is_reported_every_time(project: Path) -> None:
    (project / "pyproject.toml").write_text(CONFIG.replace("select", "selekt"))
    for _ in range(2):
        r = memo_probe(project, "a.yaml")
        assert r["code"] == 2 and r["pydantic"] is True, r
        assert "pyproject.toml: unknown key `selekt` (did you mean `select`?)" in str(r["stderr"])
    assert memo_entries(project / ".fp8lint_cache") == []


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b'{"format": 1}',
        b"[]",
        "wrong-config",
        "wrong-key",
        "other-code",
    ],
)
def test_a_corrupt_memo_entry_is_a_miss(project: Path, damage: bytes | str) -> None:
    memo_probe(project, "a.yaml")
    (entry,) = memo_entries(project / ".fp8lint_cache")
    from fp8lint.engine.cache_files import seal_for

    seal = seal_for(str(project / ".fp8lint_cache"))
    assert seal is not None
    opened = seal.open(str(entry))
    assert opened is not None
    stored = json.loads(opened[0])
    code = stored["code"]
    if damage == "wrong-config":  # a well-formed entry whose data has the wrong shape
        stored["config"]["severity"] = {"FP8101": "fatal"}
    elif damage == "wrong-key":
        stored["key"] = "0" * 64
    elif damage == "other-code":  # written by another build of fp8lint
        stored["code"] = "x" + stored["code"]
    if isinstance(damage, str):  # sealed as this user's fp8lint would write it
        entry.write_bytes(seal.seal(json.dumps(stored).encode()))
    else:
        entry.write_bytes(damage)
    r = memo_probe(project, "a.yaml")
    assert r["code"] == 0 and r["pydantic"] is True and not r["stderr"], r
    assert settings_of(project, "--no-cache")["options"] == {"FP8106": {"min-margin": 3}}
    again = seal.open(str(entry))  # validated again and stored afresh
    assert again is not None
    rewritten = json.loads(again[0])
    assert rewritten["key"] == entry.stem and rewritten["code"] == code
    assert rewritten["config"]["options"] == {"FP8106": {"min-margin": 3}}
    assert memo_probe(project, "a.yaml")["pydantic"] is False  # rewritten, sound again


@pytest.mark.parametrize("how", ["--no-cache", "env", "cache = false", "--fix"])
def test_the_memo_is_off_with_the_cache(project: Path, how: str) -> None:
    args: tuple[str, ...] = ("a.yaml",)
    if how == "cache = false":
        (project / "pyproject.toml").write_text(
            CONFIG.replace("[tool.fp8lint]\n", "[tool.fp8lint]\ncache = false\n")
        )
    elif how != "env":
        args += (how,)
    for _ in range(2):
        if how == "env":
            env_probe = fresh_check(MEMO_PROBE, *args, cwd=project, env={"FP8LINT_NO_CACHE": "1"})
            assert json.loads(env_probe.stdout.splitlines()[-1])["pydantic"] is True
        else:
            assert memo_probe(project, *args)["pydantic"] is True
    assert not (project / ".fp8lint_cache").exists()


def test_the_memo_lives_in_the_configured_cache_dir(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        CONFIG.replace("[tool.fp8lint]\n", '[tool.fp8lint]\ncache-dir = "build/lint"\n')
    )
    assert memo_probe(project, "a.yaml")["pydantic"] is True
    assert len(memo_entries(project / "build/lint")) == 1
    second = memo_probe(project, "a.yaml")
    assert second["code"] == 0 and second["pydantic"] is False, second
    assert not (project / ".fp8lint_cache").exists()
    # the command line's directory wins, and is where the memo goes
    assert memo_probe(project, "a.yaml", "--cache-dir", "elsewhere")["pydantic"] is True
    assert len(memo_entries(project / "elsewhere")) == 1
    assert memo_probe(project, "a.yaml", "--cache-dir", "elsewhere")["pydantic"] is False


def test_extend_chains_are_remembered_file_by_file(project: Path) -> None:
    (project / "base.toml").write_text('extend-select = ["FP8106"]\n[options]\nmin-margin = 5\n')
    (project / "pyproject.toml").write_text('[tool.fp8lint]\nextend = "base.toml"\n')
    memo_probe(project, "a.yaml")
    assert len(memo_entries(project / ".fp8lint_cache")) == 2
    assert memo_probe(project, "a.yaml")["pydantic"] is False
    assert settings_of(project)["options"] == {"FP8106": {"min-margin": 5}}
    # a parent that stops validating is reported on every run, the child being remembered
    (project / "base.toml").write_text("[options]\nmin-margin = true\n")
    for _ in range(2):
        r = memo_probe(project, "a.yaml")
        assert r["code"] == 2 and "base.toml: rule option `min-margin`" in str(r["stderr"]), r
    # a cycle is found on every run, although each file is valid (and remembered)
    (project / "base.toml").write_text('extend = "pyproject.toml"\n')
    for _ in range(2):
        r = memo_probe(project, "a.yaml")
        assert r["code"] == 2 and "`extend` cycle" in str(r["stderr"]), r


def test_the_memo_knows_a_pyproject_from_an_fp8lint_toml(tmp_path: Path) -> None:
    """The same bytes are valid as pyproject.toml ([tool.fp8lint]) and not as .fp8lint.toml
    (an unknown key `tool`): the memo keeps them apart."""
    text = '[tool.fp8lint]\nselect = ["FP81"]\n'
    for name in ("a/pyproject.toml", "b/.fp8lint.toml"):
        (tmp_path / name).parent.mkdir()
        (tmp_path / name).write_text(text)
        (tmp_path / name).with_name("x.yaml").write_text("k: 1\n")
    shared = str(tmp_path / "shared-cache")
    assert memo_probe(tmp_path / "a", "x.yaml", "--cache-dir", shared)["code"] == 0
    assert memo_probe(tmp_path / "a", "x.yaml", "--cache-dir", shared)["pydantic"] is False
    r = memo_probe(tmp_path / "b", "x.yaml", "--cache-dir", shared)
    assert r["code"] == 2 and "unknown key `tool`" in str(r["stderr"]), r


def test_omegaconf_only_for_interpolations(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.yaml").write_text(
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
        "  hidden_size: 4096\n  ffn_hidden_size: 16384\n"
    )
    assert "omegaconf" not in probe(plain).split("=", 1)[1].split(",")
    interpolated = tmp_path / "interpolated"
    interpolated.mkdir()
    (interpolated / "a.yaml").write_text(
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
        "  hidden_size: 4096\n  ffn_hidden_size: ${multiply:4, ${.hidden_size}}\n"
    )
    assert "omegaconf" in probe(interpolated).split("=", 1)[1].split(",")
    # Megatron's MODEL_ARGS `${VAR}` is the launcher's shell variable, not OmegaConf's
    shell_vars = tmp_path / "shell_vars"
    shell_vars.mkdir()
    (shell_vars / "a.yaml").write_text(
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --data-path: ${DATA_PATH}/text\n"
    )
    assert "omegaconf" not in probe(shell_vars).split("=", 1)[1].split(",")


WARM_PROBE = """
loaded = ("pydantic", "yaml", "omegaconf", "libcst", "fp8lint.rule", "fp8lint.model",
          "fp8lint.frameworks", "fp8lint.documents.tree", "dataclasses", "typing")
print("WARM=" + ",".join(m for m in loaded if m in NEW))
"""


def test_a_warm_cache_hit_imports_no_parser_model_or_rule(tmp_path: Path) -> None:
    """A cache hit replays the stored findings: no YAML parser, no pydantic model, no
    framework or rule, no dataclasses (issue 14: a warm check is to cost half yamllint's)."""
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 0\n")
    args = ["--cache-dir", str(tmp_path / "cache"), "--exit-zero", str(tmp_path / "a.yaml")]
    outs = [fresh_check(WARM_PROBE, *args, cwd=tmp_path, cache=True).stdout for _ in range(2)]
    cold, warm = (o.strip().splitlines() for o in outs)
    assert "pydantic" in cold[-1]  # the first run did lint
    assert cold[:-1] == warm[:-1] and any("FP810" in line for line in warm)  # same findings
    assert warm[-1] == "WARM="


def test_pydantic_plugins_are_not_looked_up(tmp_path: Path) -> None:
    """The entry-point scan pydantic makes for plugins costs a pre-commit call a share that
    grows with the environment; a user's own setting stays."""
    (tmp_path / "a.yaml").write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    report = 'import os; print("PLUGINS=" + os.environ.get("PYDANTIC_DISABLE_PLUGINS", ""))'
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    out = subprocess.run(
        [sys.executable, "-c", CHECK + report, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.stdout.strip().splitlines()[-1] == "PLUGINS=__all__", out.stderr
    kept = fresh_check(report, str(tmp_path), env={"PYDANTIC_DISABLE_PLUGINS": "logfire"})
    assert kept.stdout.strip().splitlines()[-1] == "PLUGINS=logfire"
