"""The README's commands are the ones that run, and its sample output is the real output.

Every ```` ```console ```` block in README.md and docs/*.md is a transcript: lines that begin
with `$ ` are commands, the lines after each one are what it prints (standard output and
standard error together; the exit status is not compared).  A last line `...` stands for the
rest of the output.  The commands of one block run in one bash process, in the repository
root, with `fp8lint` meaning this interpreter's `python -m fp8lint`, so a block may set a
variable for the next command.  `.ci/run` must run exactly the README's test command.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"^```console\n(.*?)^```", re.M | re.S)
MARK = "@@fp8lint-readme-command@@"


def transcripts() -> list[tuple[str, list[tuple[str, list[str]]]]]:
    """(`file:line`, [(command, expected lines)]) for every console block."""
    found = []
    for path in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            steps: list[tuple[str, list[str]]] = []
            for row in m.group(1).splitlines():
                if row.startswith("$ "):
                    steps.append((row[2:], []))
                else:
                    assert steps, f"{path.name}:{line}: output before the first `$ ` command"
                    steps[-1][1].append(row)
            found.append((f"{path.relative_to(ROOT)}:{line}", steps))
    return found


BLOCKS = transcripts()


def test_readme_has_runnable_blocks() -> None:
    """The README's first run is a console block, so the test below cannot pass vacuously."""
    readme_blocks = [where for where, _ in BLOCKS if where.startswith("README.md:")]
    assert len(readme_blocks) >= 2
    assert any("simulate" in cmd for _, steps in BLOCKS for cmd, _ in steps)


def run_block(steps: list[tuple[str, list[str]]], tmp_path: Path) -> list[list[str]]:
    """Each command's output lines, run in one bash process in the repository root."""
    shim = tmp_path / "bin" / "fp8lint"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m fp8lint "$@"\n')
    shim.chmod(0o755)
    script = "".join(f"echo {MARK}\n{{ {cmd}\n}} 2>&1\n" for cmd, _ in steps)
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CLICOLOR_FORCE")}
    pythonpath = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    env.update(
        PATH=f"{shim.parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=pythonpath,
        FP8LINT_NO_CACHE="1",
        NO_COLOR="1",
        COLUMNS="100",
    )
    out = subprocess.run(
        ["bash", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    ).stdout
    chunks = out.split(MARK + "\n")
    assert chunks[0] == "", out
    return [chunk.splitlines() for chunk in chunks[1:]]


def normalize(lines: list[str]) -> list[str]:
    return [line.rstrip() for line in lines]


@pytest.mark.parametrize("steps", [s for _, s in BLOCKS], ids=[w for w, _ in BLOCKS])
def test_console_block_output_is_current(
    steps: list[tuple[str, list[str]]], tmp_path: Path
) -> None:
    if any("fp8lint simulate" in cmd for cmd, _ in steps):
        for module in ("numpy", "pyarrow"):
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"the simulate extra is not installed ({module})")
    actual = run_block(steps, tmp_path)
    assert len(actual) == len(steps)
    for (cmd, expected), got in zip(steps, actual, strict=True):
        want = normalize(expected)
        got = normalize(got)
        if want and want[-1] == "...":
            want, got = want[:-1], got[: len(want) - 1]
        assert got == want, f"$ {cmd}\nactual output:\n" + "\n".join(got)


def readme_commands() -> list[str]:
    """The commands of the README's first code block, which must open the README."""
    text = README.read_text(encoding="utf-8")
    m = re.match(r"# fp8lint\n\n```bash\n(.*?)```", text, re.S)
    assert m, "README.md must start with the install-and-run commands"
    return m.group(1).splitlines()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert "fp8lint check examples/" in commands[0]
    assert commands[1].endswith("python3 -m pytest -q")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == commands[1]


def test_both_commands_install_into_a_venv() -> None:
    """PEP 668: a system Python refuses `pip install`, so both commands make a venv first."""
    for command in readme_commands():
        assert command.startswith("python3 -m venv .venv && . .venv/bin/activate && ")


def test_no_install_by_package_index_name() -> None:
    """fp8lint is not on a package index: no text tells users to install it by name."""
    # `pipx install 'fp8lint[simulate] @ git+URL'` names a URL, so it is allowed
    pattern = re.compile(r"install ['\"]?fp8lint(\[[a-z,]*\])?(?! @)['\"]?(?=[\s`)]|$)")
    paths = [README, ROOT / "CONTRIBUTING.md", *(ROOT / "docs").glob("*.md")]
    paths += (ROOT / "src").rglob("*.py")
    hits = [
        f"{p.relative_to(ROOT)}: {m.group(0)}"
        for p in paths
        for m in pattern.finditer(p.read_text(encoding="utf-8"))
    ]
    assert hits == []


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def test_relative_links_resolve() -> None:
    """README and docs/ moved sections between them: every relative link and anchor still lands."""
    broken = []
    for path in [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                broken.append(f"{path.name}: {target}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert broken == []
