"""The GitHub Action end to end: action.yml's composite steps run here, in order, with the
environment GitHub gives them, on a pull request that changes a shell script, a torchtitan
TOML, a Python recipe and a YAML config, against the in-memory GitHub (tests/fake_github.py).

The runner's expression language is evaluated for exactly the forms action.yml uses; a new
form fails the test until it is taught here.  `pip install` is recorded, not run (this test
environment already has fp8lint installed from this checkout).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..conftest import ROOT
from ..fake_github import FakeGitHub, PrFile

TOKEN = "ghs_actiontesttoken"
RISKY_SH = "#!/bin/bash\ntorchrun pretrain_gpt.py --fp8-format hybrid\n"
RISKY_TOML = '[model]\nconverters = ["float8"]\n'
RISKY_PY = (
    "import transformer_engine.common.recipe as recipe\n"
    "r = recipe.DelayedScaling(margin=0, amax_history_len=1)\n"
)
RISKY_YAML = "MODEL_ARGS:\n  --fp8-format: hybrid\n"
CHANGED = {
    "scripts/train.sh": RISKY_SH,
    "configs/llama.toml": RISKY_TOML,
    "recipes/te.py": RISKY_PY,
    "configs/model.yaml": RISKY_YAML,
    "docs/notes.md": "fp8 notes\n",
}


def added_patch(text: str) -> str:
    lines = text.splitlines()
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


class Expressions:
    """`${{ ... }}` and `if:` for the forms action.yml uses."""

    def __init__(self, context: dict[str, Any]) -> None:
        self.context = context

    def value(self, expr: str) -> str:
        expr = expr.strip()
        if expr.startswith("'") and expr.endswith("'"):
            return expr[1:-1]
        m = re.fullmatch(r"startsWith\((.+), '([^']*)'\)", expr)
        if m:
            return "true" if self.value(m.group(1)).startswith(m.group(2)) else "false"
        node: Any = self.context
        for part in expr.split("."):
            if not isinstance(node, dict):
                raise AssertionError(f"unsupported expression {expr!r}")
            node = node.get(part, "")
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
    out = {}
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        out[key] = value
    return out


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    (repo / "README.md").write_text("hello\n")
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


def test_the_action_lints_every_changed_kind_and_reviews(
    pull_request: tuple[Path, str, str], tmp_path: Path
) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not available")
    repo, base, head = pull_request
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert "version" not in action["inputs"]  # no install of a package by name

    gh = FakeGitHub(token=TOKEN, head_sha=head).start()
    gh.files = [PrFile(name, added_patch(text), "added") for name, text in CHANGED.items()]
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "number": gh.number,
                "pull_request": {
                    "number": gh.number,
                    "head": {"sha": head},
                    "base": {"sha": base},
                },
            }
        )
    )
    # `python3` as the runner finds it: this interpreter, with `pip install` recorded
    shim = tmp_path / "bin"
    shim.mkdir()
    installs = tmp_path / "installs.txt"
    (shim / "python3").write_text(
        "#!/bin/bash\n"
        'if [[ "$1 $2 $3" == "-m pip install" ]]; then\n'
        f'  printf "%s\\n" "$*" >> {installs}\n'
        "  exit 0\n"
        "fi\n"
        f'exec {sys.executable} "$@"\n'
    )
    (shim / "python3").chmod(0o755)
    runner_temp = tmp_path / "runner"
    runner_temp.mkdir()
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    context: dict[str, Any] = {
        "inputs": inputs,
        "github": {"event_name": "pull_request", "token": TOKEN, "action_path": str(ROOT)},
        "steps": {},
    }
    expr = Expressions(context)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "FP8LINT_"))}
    base_env.update(
        PATH=f"{shim}{os.pathsep}{os.environ['PATH']}",
        GITHUB_ACTION_PATH=str(ROOT),
        GITHUB_WORKSPACE=str(repo),
        GITHUB_EVENT_PATH=str(event),
        GITHUB_EVENT_NAME="pull_request",
        GITHUB_REPOSITORY=f"{gh.owner}/{gh.repo}",
        GITHUB_API_URL=gh.url,
        RUNNER_TEMP=str(runner_temp),
        FP8LINT_NO_CACHE="1",
    )
    ran: list[str] = []
    logs: dict[str, str] = {}
    status = 0
    try:
        for i, step in enumerate(action["runs"]["steps"]):
            if "if" in step and not expr.condition(step["if"]):
                continue
            if "uses" in step:
                raise AssertionError(f"step {step['name']!r} would run with the defaults")
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
            ran.append(step["name"])
            logs[step["name"]] = r.stdout + r.stderr
            if "id" in step:
                context["steps"][step["id"]] = {"outputs": outputs_of(output)}
            if r.returncode != 0:
                status = r.returncode
                break
    finally:
        gh.stop()

    assert ran == [
        "Install fp8lint",
        "Select files",
        "Lint (annotations)",
        "Review the pull request",
        "Result",
    ], logs
    assert installs.read_text().split() == ["-m", "pip", "install", "--quiet", str(ROOT)]
    selected = Path(context["steps"]["files"]["outputs"]["list"]).read_text().splitlines()
    assert selected == sorted(n for n in CHANGED if not n.endswith(".md"))
    annotations = logs["Lint (annotations)"]
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
    assert "notes.md" not in annotations
    assert status == 1  # the Result step fails the job: warnings at --fail-on warning
    commented = {c["path"] for c in gh.review_comments}
    assert commented == {n for n in CHANGED if not n.endswith(".md")}
    assert any("<!-- fp8lint:summary -->" in c["body"] for c in gh.issue_comments)
