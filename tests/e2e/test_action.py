"""The GitHub Action end to end: action.yml's composite steps run here, in order, with the
environment GitHub gives them, on a pull request that changes a shell script, a torchtitan
TOML, a Python recipe and a YAML config, against the in-memory GitHub (tests/fake_github.py).

The runner's expression language is evaluated for exactly the forms action.yml uses; a new
form fails the test until it is taught here.  `python3 -m venv` and `pip install` are
recorded, not run (this test environment already has fp8lint installed from this checkout):
the venv's `python` and `fp8lint` are stand-ins that run this interpreter.  `actions/cache`
restore and save are played against a store kept in the test, so that a run can restore
what an earlier one saved.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from fp8lint.engine.cache_files import Seal

from ..conftest import ROOT
from ..fake_github import FakeGitHub, PrFile

TOKEN = "ghs_actiontesttoken"
REPOSITORY = "acme/train"  # as tests/fake_github.py names it
RISKY_SH = "#!/bin/bash\ntorchrun pretrain_gpt.py --fp8-format hybrid\n"
RISKY_TOML = '[model]\nconverters = ["float8"]\n'
RISKY_PY = (
    "import transformer_engine.common.recipe as recipe\n"
    "r = recipe.DelayedScaling(margin=0, amax_history_len=1)\n"
)
RISKY_YAML = "MODEL_ARGS:\n  --fp8-format: hybrid\n"
LINTED = {
    "scripts/train.sh": RISKY_SH,
    "configs/llama.toml": RISKY_TOML,
    "recipes/te.py": RISKY_PY,
    "configs/model.yaml": RISKY_YAML,
}
CHANGED = {
    **LINTED,
    "docs/notes.md": "fp8 notes\n",
    # a vendored copy of an action: `check .` does not walk into hidden folders, nor may this
    ".github/actions/vendored/train.sh": RISKY_SH,
}
CACHE_ACTION = re.compile(r"actions/cache/(restore|save)@([0-9a-f]{40})")


def added_patch(text: str) -> str:
    lines = text.splitlines()
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


class Expressions:
    """`${{ ... }}` and `if:` for the forms action.yml uses."""

    def __init__(self, context: dict[str, Any], workspace: Path) -> None:
        self.context = context
        self.workspace = workspace

    def hash_files(self, patterns: str) -> str:
        """`hashFiles`: a SHA-256 over the matching files, '' when none matches."""
        digest = hashlib.sha256()
        matched = False
        for pattern in re.findall(r"'([^']*)'", patterns):
            for path in sorted(self.workspace.glob(pattern)):
                if path.is_file() and ".git" not in path.relative_to(self.workspace).parts:
                    digest.update(hashlib.sha256(path.read_bytes()).digest())
                    matched = True
        return digest.hexdigest() if matched else ""

    def value(self, expr: str) -> str:
        expr = expr.strip()
        if expr.startswith("'") and expr.endswith("'"):
            return expr[1:-1]
        m = re.fullmatch(r"startsWith\((.+), '([^']*)'\)", expr)
        if m:
            return "true" if self.value(m.group(1)).startswith(m.group(2)) else "false"
        m = re.fullmatch(r"hashFiles\(((?:'[^']*'(?:, )?)+)\)", expr)
        if m:
            return self.hash_files(m.group(1))
        node: Any = self.context
        for part in expr.split("."):
            if not isinstance(node, dict):
                raise AssertionError(f"unsupported expression {expr!r}")
            if part not in node:
                return ""  # as GitHub: a step that did not run has no outputs
            node = node[part]
        if not isinstance(node, str):
            raise AssertionError(f"unsupported expression {expr!r}")
        return node

    def condition(self, expr: str) -> bool:
        for clause in expr.split("&&"):
            clause = clause.strip()
            m = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", clause)
            if m:
                same = self.value(m.group(1)) == self.value(m.group(3))
                if same != (m.group(2) == "=="):
                    return False
            elif self.value(clause) != "true":
                return False
        return True

    def substitute(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m.group(1)), text)


def outputs_of(path: Path) -> dict[str, str]:
    """`$GITHUB_OUTPUT`: `name=value` lines and `name<<DELIMITER` blocks."""
    out: dict[str, str] = {}
    lines = iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.partition("<<")[0]:
            key, _, delimiter = line.partition("<<")
            block = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            out[key] = "\n".join(block)
            continue
        key, _, value = line.partition("=")
        out[key] = value
    return out


@dataclass
class CacheStore:
    """The repository's caches: saved under a key, restored by key or newest prefix."""

    folder: Path
    keys: list[str] = field(default_factory=list)

    def entry(self, key: str) -> Path:
        return self.folder / hashlib.sha256(key.encode()).hexdigest()[:16]

    def restore(self, path: Path, key: str, restore_keys: str) -> str | None:
        found = key if key in self.keys else None
        for prefix in restore_keys.splitlines():
            if found is None and prefix.strip():
                found = next((k for k in reversed(self.keys) if k.startswith(prefix)), None)
        if found is not None:
            shutil.copytree(self.entry(found), path, dirs_exist_ok=True)
        return found

    def save(self, path: Path, key: str) -> None:
        assert key not in self.keys, "a cache key can be saved once"
        assert path.is_dir(), path
        shutil.copytree(path, self.entry(key))
        self.keys.append(key)


@dataclass
class Run:
    ran: list[str]
    logs: dict[str, str]
    context: dict[str, Any]
    status: int
    summary: str
    runner_temp: Path
    installs: list[str]
    restored: str | None = None


def make_python3(folder: Path, installs: Path) -> None:
    """`python3` as the runner finds it: this interpreter; `-m venv DIR` makes stand-ins."""
    folder.mkdir()
    venv_python = (
        "#!/bin/bash\n"
        'if [[ "$1 $2 $3" == "-m pip install" ]]; then\n'
        f'  printf "%s %s\\n" "$0" "$*" >> {installs}\n'
        "  exit 0\n"
        "fi\n"
        f'exec {sys.executable} "$@"\n'
    )
    venv_fp8lint = f'#!/bin/bash\nexec {sys.executable} -m fp8lint "$@"\n'
    (folder / "python3").write_text(
        "#!/bin/bash\n"
        'if [[ "$1 $2" == "-m pip" ]]; then\n'
        f'  printf "%s %s\\n" system "$*" >> {installs}\n'
        "  exit 0\n"
        "fi\n"
        'if [[ "$1 $2" == "-m venv" ]]; then\n'
        '  mkdir -p "$3/bin"\n'
        f"  cat > \"$3/bin/python\" <<'PY'\n{venv_python}PY\n"
        f"  cat > \"$3/bin/fp8lint\" <<'PY'\n{venv_fp8lint}PY\n"
        '  chmod +x "$3/bin/python" "$3/bin/fp8lint"\n'
        "  exit 0\n"
        "fi\n"
        f'exec {sys.executable} "$@"\n'
    )
    (folder / "python3").chmod(0o755)


def run_action(
    repo: Path,
    work: Path,
    event_name: str,
    event: dict[str, Any],
    *,
    ref: str = "refs/heads/main",
    run_id: str = "1",
    inputs: dict[str, str] | None = None,
    gh: FakeGitHub | None = None,
    store: CacheStore | None = None,
) -> Run:
    """action.yml's steps, in order, as the runner would run them for `event`."""
    work.mkdir()
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    installs = work / "installs.txt"
    installs.touch()
    make_python3(work / "bin", installs)
    runner_temp = work / "runner"
    runner_temp.mkdir()
    event_path = work / "event.json"
    event_path.write_text(json.dumps(event))
    summary = work / "step-summary.md"
    summary.touch()
    store = store or CacheStore(work / "store")
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs or {})
    context: dict[str, Any] = {
        "inputs": values,
        "github": {
            "event_name": event_name,
            "token": TOKEN,
            "action_path": str(ROOT),
            "run_id": run_id,
        },
        "runner": {"os": "Linux"},
        "steps": {},
    }
    expr = Expressions(context, repo)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FP8LINT_"))}
    base_env.update(
        PATH=f"{work / 'bin'}{os.pathsep}{os.environ['PATH']}",
        HOME=str(work / "home"),
        GITHUB_ACTION_PATH=str(ROOT),
        GITHUB_WORKSPACE=str(repo),
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_EVENT_NAME=event_name,
        GITHUB_REF=ref,
        GITHUB_REPOSITORY=REPOSITORY,
        GITHUB_STEP_SUMMARY=str(summary),
        RUNNER_TEMP=str(runner_temp),
    )
    base_env.pop("XDG_CACHE_HOME", None)
    if gh is not None:
        base_env["GITHUB_API_URL"] = gh.url
    run = Run([], {}, context, 0, "", runner_temp, [])
    for i, step in enumerate(action["runs"]["steps"]):
        if "if" in step and not expr.condition(step["if"]):
            continue
        if "uses" in step:
            m = CACHE_ACTION.fullmatch(step["uses"])
            if not m:
                raise AssertionError(f"step {step['name']!r} would run with the defaults")
            given = {k: expr.substitute(str(v)) for k, v in step["with"].items()}
            if m.group(1) == "restore":
                run.restored = store.restore(
                    Path(given["path"]), given["key"], given["restore-keys"]
                )
            else:
                store.save(Path(given["path"]), given["key"])
            run.ran.append(step["name"])
            continue
        output = runner_temp / f"output-{i}"
        output.write_text("")
        env = dict(base_env, GITHUB_OUTPUT=str(output))
        env.update({k: expr.substitute(str(v)) for k, v in step.get("env", {}).items()})
        script = runner_temp / f"step-{i}.sh"
        script.write_text(expr.substitute(step["run"]))
        r = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        run.ran.append(step["name"])
        run.logs[step["name"]] = r.stdout + r.stderr
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs_of(output)}
        if r.returncode != 0:
            run.status = r.returncode
            break
    run.summary = summary.read_text()
    run.installs = installs.read_text().splitlines()
    return run


def pr_event(number: int, base: str, head: str, head_repo: str = REPOSITORY) -> dict[str, Any]:
    return {
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": head, "repo": {"full_name": head_repo}},
            "base": {"sha": base},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


PUSH = {"repository": {"full_name": REPOSITORY, "default_branch": "main"}}


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, str, str]:
    if shutil.which("bash") is None:
        pytest.skip("bash is not available")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    (repo / "README.md").write_text("hello\n")
    (repo / "fp8lint.toml").write_text("# fp8lint settings\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    for name, text in CHANGED.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "head")
    head = git(repo, "rev-parse", "HEAD").strip()
    return repo, base, head


def annotated(run: Run) -> set[str]:
    return set(re.findall(r"::warning file=([^,]+),", run.logs.get("Lint (annotations)", "")))


def test_the_action_lints_every_changed_kind_and_reviews(
    pull_request: tuple[Path, str, str], tmp_path: Path
) -> None:
    repo, base, head = pull_request
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert "version" not in action["inputs"]  # no install of a package by name

    gh = FakeGitHub(token=TOKEN, head_sha=head).start()
    gh.files = [PrFile(name, added_patch(text), "added") for name, text in CHANGED.items()]
    try:
        run = run_action(
            repo, tmp_path / "run", "pull_request", pr_event(gh.number, base, head), gh=gh
        )
    finally:
        gh.stop()

    assert run.ran == [
        "Install fp8lint",
        "Plan the cache",
        "Restore the cache",  # a pull request from a branch of this repository
        "Select files",
        "Lint (annotations)",
        "Review the pull request",
        "Result",
    ], (run.status, run.logs)
    # into a venv of its own, with that venv's pip; the runner's Python is not touched
    venv = run.runner_temp / "fp8lint-venv"
    assert run.installs == [f"{venv}/bin/python -m pip install --quiet --no-compile {ROOT}"]
    assert "PIP_BREAK_SYSTEM_PACKAGES" not in (ROOT / "action.yml").read_text()
    selected = Path(run.context["steps"]["files"]["outputs"]["list"]).read_text().splitlines()
    assert selected == sorted(LINTED)
    # the README, the notes and the vendored copy: one line, not one per file
    select_log = run.logs["Select files"]
    assert "not checked" not in select_log, select_log
    assert select_log.strip() == (
        "2 changed files are not configs fp8lint reads (or in a hidden or excluded folder)"
    ), select_log
    annotations = run.logs["Lint (annotations)"]
    for name, code in (
        ("scripts/train.sh", "FP8101"),
        ("configs/llama.toml", "FP8202"),
        ("recipes/te.py", "FP8101"),
        ("configs/model.yaml", "FP8101"),
    ):
        assert re.search(rf"::warning file={re.escape(name)},line=\d+.*\({code}\)", annotations), (
            name,
            annotations,
        )
    assert annotated(run) == set(LINTED)
    assert run.status == 1  # the Result step fails the job: warnings at --fail-on warning
    assert {c["path"] for c in gh.review_comments} == set(LINTED)
    assert any("<!-- fp8lint:summary -->" in c["body"] for c in gh.issue_comments)
    assert run.summary.startswith("**fp8lint**: 4 files checked, "), run.summary
    assert "| FP8202 | " in run.summary
    # the cache (its configuration memo too) lives under $RUNNER_TEMP, not in the checkout
    assert not (repo / ".fp8lint_cache").exists()
    assert (run.runner_temp / "fp8lint-cache" / "home" / "fp8lint" / "key").is_file()


def forge_no_findings(entries: Path, key_file: Path) -> int:
    """Rewrite every cached result to "nothing found", sealed with `key_file`'s secret (what
    someone who can write a cache this run restores could do)."""
    seal = Seal(key_file.read_bytes())
    forged = 0
    for shard in entries.rglob("*.json"):
        if shard.parent.name == "configs":
            continue
        opened = seal.open(str(shard))
        assert opened is not None, shard
        data = json.loads(opened[0])
        for entry in data["entries"].values():
            entry[6] = None
            forged += 1
        shard.write_bytes(seal.seal(json.dumps(data).encode()))
    return forged


def test_the_cache_is_kept_between_runs_and_restored_only_where_it_is_trusted(
    pull_request: tuple[Path, str, str], tmp_path: Path
) -> None:
    repo, base, head = pull_request
    store = CacheStore(tmp_path / "caches")
    quiet = {"review": "false"}

    # a push to the default branch restores (nothing yet) and saves
    first = run_action(repo, tmp_path / "push", "push", PUSH, run_id="1", store=store, inputs=quiet)
    assert "Save the cache" in first.ran and first.restored is None
    assert annotated(first) == set(LINTED)
    outputs = first.context["steps"]["install"]["outputs"]
    (key,) = store.keys
    config = Expressions({}, repo).hash_files("'**/fp8lint.toml'")
    assert config and key == f"fp8lint-Linux-{outputs['version']}-{outputs['digest']}-{config}-1"
    assert outputs["version"] == "0.1.0" or re.fullmatch(r"\d+\.\d+\.\d+\S*", outputs["version"])
    saved = store.entry(key)
    key_file = saved / "home" / "fp8lint" / "key"
    assert key_file.is_file()  # the entries' key travels with them
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert forge_no_findings(saved / "entries", key_file) >= len(LINTED)

    # a pull request from a branch of this repository restores it: the results are served
    # from the cache (here the forged ones: the cache is believed, hence the rules below)
    own = run_action(
        repo,
        tmp_path / "own-pr",
        "pull_request",
        pr_event(7, base, head),
        run_id="2",
        store=store,
        inputs=quiet,
    )
    assert own.restored == key and "Save the cache" not in own.ran
    assert annotated(own) == set()
    assert own.summary.startswith("**fp8lint**: 4 files checked, no findings"), own.summary

    # a pull request from a fork restores nothing (it could have saved a cache under this
    # very key in its own scope) and saves nothing
    fork = run_action(
        repo,
        tmp_path / "fork-pr",
        "pull_request",
        pr_event(8, base, head, "mallory/train"),
        run_id="3",
        store=store,
        inputs=quiet,
    )
    assert "Restore the cache" not in fork.ran and "Save the cache" not in fork.ran
    assert annotated(fork) == set(LINTED)
    assert fork.status == 1

    # entries restored without the key they were sealed with are a miss, not an error
    key_file.unlink()
    again = run_action(
        repo, tmp_path / "push-2", "push", PUSH, run_id="4", store=store, inputs=quiet
    )
    assert again.restored == key
    assert annotated(again) == set(LINTED)
    assert len(store.keys) == 2  # saved again, under this run's key

    # a push to another branch restores but does not save
    branch = run_action(
        repo,
        tmp_path / "branch",
        "push",
        PUSH,
        ref="refs/heads/topic",
        run_id="5",
        store=store,
        inputs=quiet,
    )
    assert "Restore the cache" in branch.ran and "Save the cache" not in branch.ran
    assert len(store.keys) == 2


def test_the_step_summary_is_written_on_success_too(tmp_path: Path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not available")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "train.yaml").write_text("trainer:\n  max_steps: 10\n")
    (repo / ".github" / "actions" / "copy").mkdir(parents=True)
    (repo / ".github" / "actions" / "copy" / "train.sh").write_text(RISKY_SH)
    run = run_action(repo, tmp_path / "run", "push", PUSH, inputs={"review": "false"})
    assert run.status == 0, run.logs
    assert "Result" not in run.ran
    selected = Path(run.context["steps"]["files"]["outputs"]["list"]).read_text().splitlines()
    assert selected == ["train.yaml"]
    assert run.summary.strip() == "**fp8lint**: 1 file checked, no findings"


def test_a_pull_request_without_configs_says_so_in_the_summary(
    pull_request: tuple[Path, str, str], tmp_path: Path
) -> None:
    repo, base, head = pull_request
    run = run_action(
        repo,
        tmp_path / "run",
        "pull_request",
        pr_event(9, base, head),
        inputs={"paths": "docs .github", "review": "false"},
    )
    # .github named in `paths` is walked (as `check .github` does): only its copy is linted
    selected = Path(run.context["steps"]["files"]["outputs"]["list"]).read_text().splitlines()
    assert selected == [".github/actions/vendored/train.sh"]
    assert run.logs["Select files"].strip().startswith("1 changed file is not a config")

    docs = run_action(
        repo,
        tmp_path / "docs",
        "pull_request",
        pr_event(9, base, head),
        inputs={"paths": "docs", "review": "false"},
    )
    assert docs.status == 0 and "Lint (annotations)" not in docs.ran
    assert docs.summary.strip() == "**fp8lint**: no files to check"
