"""The benchmark: fp8lint against the floor, yamllint, Fixit and Python's own start-up.

    python3 bench/run.py [--files 20000] [--rounds 5] [--single-rounds 15]
                         [--sizes 10000,20000,40000] [--simulate-rows 1000000,100000000]
                         [--tree DIR [--tree-label NAME@COMMIT]]... [--tree-only]
                         [--slowest 10] [--file-rounds 3]

What a user gets, measured side by side in one run:

* The bench makes its own virtual environment (`--work`, default `$TMPDIR/fp8lint-bench`),
  installs fp8lint there with a regular, byte-compiled `pip install` of this checkout (with
  its `bench` and `simulate` extras: yamllint, Fixit, numpy, pyarrow), and runs every command
  with that environment's interpreter and console scripts, so `python -c pass` is the same
  clean interpreter fp8lint starts on.
* Trees come from bench/generate.py (the project's own files only), cached under `--work` by a
  key over the generator's inputs.
* Commands alternate on every round (the order rotates); each figure is the median of the
  rounds with its min-max, for wall time and for CPU time (user + system of the child and the
  workers it waited for, from os.wait4); peak memory is the largest process's maxrss.
* Targets are ratios of medians from the same alternating run.
* Real checkouts (`--tree DIR`, repeatable: a plain folder you fetched, e.g. an archive of
  Transformer Engine): `fp8lint check --no-cache`, the floor (bench/floor.py) and yamllint on
  the whole tree, alternating over `--rounds`, then the `--slowest` files fp8lint takes
  longest on, each with fp8lint's time and the floor's time for that file (libcst's
  `parse_module` for Python, libyaml compose for YAML) and their ratio, timed in one fresh
  process per tool by bench/per_file.py (median of `--file-rounds`), and the margin under
  fp8lint's per-file timeout.  A tree is named by its folder and `git rev-parse HEAD` when
  it is the top of a git work tree; otherwise `--tree-label NAME@COMMIT` right after its
  `--tree` names it.  `--tree-only` runs just this section (no generated trees, single
  files, simulate or profiles), so a real-tree run is short; its report holds only that
  section.  Without `--tree` the bench stays self-contained and generated.

Nothing here is part of the test suite.  The results go to bench/RESULTS.md (the text below
its `<!-- ANALYSIS -->` marker is kept) and bench/results.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import floor  # noqa: E402
import generate  # noqa: E402

FIXIT_RULE = "fixit.rules:NoRedundantFString"  # one cheap rule: the peer's own floor
TARGETS = {  # name -> (target ratio, what it compares)
    "startup": (2.5, "pre-commit call, file without FP8 settings / `python -c pass`"),
    "yaml_cold": (1.0, "one FP8 YAML file, cold / `yamllint` on it"),
    "yaml_share": (
        0.5,
        "one FP8 YAML file, cold, beyond the stack floor (`bench/stack_floor.py`) / `yamllint`",
    ),
    "yaml_warm": (0.5, "one FP8 YAML file, warm cache / `yamllint` on it"),
    "python": (0.5, f"one Python recipe file / Fixit running one rule (`{FIXIT_RULE}`)"),
    "tree_cold": (1.5, "tree, cold / the floor"),
    "tree_warm": (0.5, "tree, warm cache / the floor"),
    "tree_yamllint": (0.1, "tree / `yamllint` on it"),
}


@dataclass
class Runs:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    @property
    def peak_mb(self) -> float:
        return max(self.rss_kb) / 1024

    def cell(self, values: str = "wall") -> str:
        xs = self.wall if values == "wall" else self.cpu
        return f"{fmt(statistics.median(xs))} ({fmt(min(xs))}–{fmt(max(xs))})"


def measure(
    cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, int, float, int]:
    """(wall s, maxrss KB, user+sys s, exit code) of one child and what it waited for."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def alternate(commands: dict[str, list[str]], rounds: int, env: dict[str, str]) -> dict[str, Runs]:
    """Every command once per round, the order rotated each round."""
    runs = {name: Runs() for name in commands}
    names = list(commands)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            wall, rss, cpu, code = measure(commands[name], env=env)
            runs[name].wall.append(wall)
            runs[name].cpu.append(cpu)
            runs[name].rss_kb.append(rss)
            runs[name].codes.add(code)
    return runs


# --------------------------------------------------------------------------- set-up


class Venv:
    """The bench's own environment: a regular install of this checkout and the peers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.python = str(path / "bin" / "python")

    def bin(self, name: str) -> str:
        return str(self.path / "bin" / name)

    def build(self, source: Path = ROOT, extras: str = "[bench,simulate]") -> None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        if not Path(self.python).exists():
            subprocess.run([sys.executable, "-m", "venv", str(self.path)], check=True)
            subprocess.run(
                [self.python, "-m", "pip", "install", "-q", "-U", "pip"], check=True, env=env
            )
        # setuptools copies into the checkout's build/lib and never prunes it, so modules
        # moved since an earlier build would ship beside their new homes: build afresh
        shutil.rmtree(source / "build", ignore_errors=True)
        # the dependencies and peers, then fp8lint itself afresh (a regular install, not
        # editable: what `pip install fp8lint[...]` from a checkout gives)
        subprocess.run(
            [self.python, "-m", "pip", "install", "-q", f"{source}{extras}"],
            check=True,
            env=env,
        )
        subprocess.run(
            [
                self.python,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--force-reinstall",
                str(source),
            ],
            check=True,
            env=env,
        )
        site = subprocess.run(
            [self.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        # pip byte-compiles what it installs; make sure of it whatever the caller's environment
        subprocess.run([self.python, "-m", "compileall", "-q", site], env=env, check=False)

    def version(self, module: str) -> str:
        r = subprocess.run(
            [self.python, "-c", f"import importlib.metadata as m; print(m.version('{module}'))"],
            capture_output=True,
            text=True,
        )
        return r.stdout.strip() or "-"

    def env(self) -> dict[str, str]:
        """The environment of every timed command: the venv first on PATH, nothing that
        changes start-up (PYTHONPATH, PYTHONSTARTUP, a cache dir) carried over."""
        drop = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "FP8LINT_CACHE_DIR", "VIRTUAL_ENV")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env["PATH"] = f"{self.path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env


def baseline(rev: str, work: Path) -> Venv:
    """A venv holding fp8lint as it was at git revision `rev` (a regular install of that
    revision's files), for before/after rows measured in the same run."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    source = work / f"src-{sha}"
    if not (source / "pyproject.toml").is_file():
        source.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", sha], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    venv = Venv(work / f"venv-{sha}")
    venv.build(source, "")
    return venv


def tree(n: int, seed: int, base: Path) -> tuple[Path, dict[str, int]]:
    """The generated tree for (n, seed), cached by the generator's input key."""
    path = base / f"tree-{n}-s{seed}-{generate.key(n, seed)}"
    meta = path / "TREE.json"
    if meta.is_file():
        return path, json.loads(meta.read_text())
    if path.exists():
        shutil.rmtree(path)
    t = time.perf_counter()
    stats = generate.generate(path, n, seed)
    print(
        f"  generated {n} files ({stats['bytes'] / 1e6:.1f} MB) in "
        f"{time.perf_counter() - t:.1f}s: {path}",
        file=sys.stderr,
    )
    return path, stats


def replicated(src: Path, copies: int, base: Path) -> Path:
    """`copies` hard-linked copies of the tree `src` side by side: a bigger tree with the same
    file mix, so the largest file (which sets a parse's transient memory) stays the same and
    only the number of files grows."""
    if copies == 1:
        return src
    path = base / f"{src.name}-x{copies}"
    marker = path / ".replica"
    if marker.is_file():
        return path
    if path.exists():
        shutil.rmtree(path)

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    for i in range(copies):
        shutil.copytree(src, path / f"copy{i}", copy_function=link)
    marker.write_text(src.name)
    return path


def check_floor_matches(venv: Venv) -> None:
    """The floor's prefilter, extensions and skipped folders are fp8lint's."""
    probe = (
        "import json; from fp8lint import documents, engine; from fp8lint.engine import files;"
        "print(json.dumps([[b.decode() for b in engine.PREFILTER_ANY_CASE], "
        "[b.decode() for b in engine.PREFILTER_EXACT], "
        "sorted(documents.KINDS), sorted(files.SKIP_DIRS)]))"
    )
    out = subprocess.run([venv.python, "-c", probe], capture_output=True, text=True, check=True)
    any_case, exact, kinds, skip = json.loads(out.stdout)
    assert tuple(b.decode() for b in floor.PREFILTER_ANY_CASE) == tuple(any_case), "stale words"
    assert tuple(b.decode() for b in floor.PREFILTER_EXACT) == tuple(exact), "stale words"
    assert sorted(floor.EXTENSIONS) == kinds, "floor.EXTENSIONS is stale"
    assert sorted(floor.SKIP_DIRS) == skip, "floor.SKIP_DIRS is stale"
    # and both prefilters say the same of each word, in its own case and in others (fp8lint's
    # `mentions_fp8` is written out beside its word lists: the two could drift apart)
    words = [*floor.PREFILTER_EXACT, *floor.PREFILTER_ANY_CASE]
    cases = (bytes, bytes.upper, bytes.lower)
    probes = [b"no such word here", *(f(w) for w in words for f in cases)]
    probe = (
        "import json, sys; from fp8lint.engine import mentions_fp8;"
        "print(json.dumps([mentions_fp8(bytes.fromhex(h)) for h in json.load(sys.stdin)]))"
    )
    out = subprocess.run(
        [venv.python, "-c", probe],
        input=json.dumps([b"say " + x + b" here" for x in probes], default=bytes.hex),
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = json.loads(out.stdout)
    ours = [floor.mentions_fp8(b"say " + x + b" here") for x in probes]
    stale = [x.decode() for x, a, b in zip(probes, theirs, ours, strict=True) if a != b]
    assert not stale, f"floor.mentions_fp8 disagrees with fp8lint's on {stale}"


def machine(venv: Venv) -> list[str]:
    def sh(cmd: str) -> str:
        try:
            return subprocess.run(
                cmd, shell=True, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except Exception:
            return "?"

    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    load = os.getloadavg()
    versions = ", ".join(
        f"{name} {venv.version(name)}"
        for name in ("fp8lint", "libcst", "pydantic", "omegaconf", "PyYAML", "yamllint", "fixit")
    )
    return [
        f"- CPU: {model or platform.processor()}; `nproc`: {sh('nproc')}; load average at the "
        f"start {load[0]:.2f}",
        f"- memory (`free -m`): {' '.join(sh('free -m').splitlines()[1].split()[1:3])} MB "
        "(total, used)",
        f"- {platform.platform()}; Python {platform.python_version()} (a fresh venv)",
        f"- {versions}",
    ]


def pick_files(root: Path) -> tuple[Path, Path, Path, list[Path]]:
    """The FP8 YAML file (the NeMo GPT template's copy that is largest), a YAML file without
    FP8 settings of similar size, the largest Python recipe file, and 20 files without FP8
    settings (what a commit touches)."""
    fp8, plain = [], []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name == "TREE.json":
            continue
        data = path.read_bytes()
        if floor.mentions_fp8(data):  # only these keep their bytes: this process stays small,
            fp8.append((path, len(data), data))  # and a child's peak memory starts from ours
        else:
            plain.append((path, len(data), b""))
    nemo = [p for p in fp8 if p[0].suffix == ".yaml" and b"exp_manager" in p[2]]
    fp8_yaml = max(nemo or [p for p in fp8 if p[0].suffix == ".yaml"], key=lambda p: p[1])
    target = fp8_yaml[1]
    plain_yaml = min((p for p in plain if p[0].suffix == ".yaml"), key=lambda p: abs(p[1] - target))
    recipes = [p for p in fp8 if p[0].suffix == ".py" and b"DelayedScaling" in p[2]]
    recipes = recipes or [p for p in fp8 if p[0].suffix == ".py"]  # a small tree
    py = max(recipes, key=lambda p: p[1])
    batch = [p for p, _, _ in plain if p.suffix in (".py", ".yaml", ".json", ".sh", ".toml")][:20]
    return fp8_yaml[0], plain_yaml[0], py[0], batch


# --------------------------------------------------------------------------- profiles


def import_profile(venv: Venv, path: Path) -> list[tuple[float, str]]:
    """The slowest imports (cumulative seconds) of a cold pre-commit call on `path`."""
    r = subprocess.run(
        [venv.python, "-X", "importtime", "-m", "fp8lint", "check", "--no-cache", str(path)],
        capture_output=True,
        text=True,
        env=venv.env(),
    )
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)) / 1e6, (len(m.group(3)) - 1) // 2 + 1, m.group(4)))
    total = sum(t for t, depth, _ in rows if depth == 1)
    top = sorted(rows, reverse=True)[:14]
    return [(total, "(all imports)"), *((t, "· " * (depth - 1) + name) for t, depth, name in top)]


STAGES = {  # cProfile function name -> what it stands for
    "_read_job": "read + prefilter + decode",
    "_walk": "walk the tree",
    "parse_python": "parse Python (libcst)",
    "parse_module": "libcst.parse_module",
    "parse_yaml": "parse YAML",
    "parse_json": "parse JSON",
    "parse_toml": "parse TOML",
    "parse_shell": "parse shell",
    "apply_rules": "rules",
    "render_output": "render",
}


def cprofile(venv: Venv, root: Path, out: Path) -> tuple[float, list[tuple[str, float]], list[str]]:
    """One cold run in one process (FP8LINT_WORKERS=1: cProfile sees only its own process)."""
    profiler = [venv.python, "-m", "cProfile", "-o", str(out)]
    subprocess.run(
        [*profiler, "-m", "fp8lint", "check", "--exit-zero", "-q", "--no-cache", str(root)],
        stdout=subprocess.DEVNULL,
        check=False,
        env=dict(venv.env(), FP8LINT_WORKERS="1"),
    )
    raw = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in raw.values())
    stages: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in raw.items():
        if func in STAGES and ("fp8lint" in filename or "libcst" in filename):
            label = STAGES[func]
            stages[label] = max(stages.get(label, 0.0), ct)
    top = []
    for (filename, line, func), (_cc, nc, tt, ct, _c) in sorted(
        raw.items(), key=lambda kv: -kv[1][2]
    )[:12]:
        short = filename.split("site-packages/")[-1]
        top.append(f"| {tt:.2f} | {ct:.2f} | {nc} | `{short}:{line}({func})` |")
    return total, sorted(stages.items(), key=lambda kv: -kv[1]), top


# --------------------------------------------------------------------------- simulate


def simulate_rows(venv: Venv, rows: list[int], work: Path) -> list[str]:
    """Time `fp8lint simulate` (report and sweep) on generated traces of each size."""
    gen = HERE / "simulate_trace.py"
    if not gen.is_file():
        return ["bench/simulate_trace.py is missing: no simulate rows."]
    lines = [
        "| rows | trace | wall s | CPU s | peak MB | exit |",
        "|---:|---|---:|---:|---:|---|",
    ]
    for n in rows:
        trace = work / f"trace-{n}.csv"
        if not trace.is_file():
            subprocess.run(
                [venv.python, str(gen), str(trace), "--rows", str(n)], check=True, env=venv.env()
            )
        size = trace.stat().st_size / 1e6
        wall, rss, cpu, code = measure(
            [venv.bin("fp8lint"), "simulate", str(trace), "--output-format", "json"],
            env=venv.env(),
        )
        lines.append(
            f"| {n:,} | {size:,.0f} MB CSV | {fmt(wall)} | {fmt(cpu)} | {rss / 1024:.0f} | {code} |"
        )
        print(f"  simulate {n:,} rows: {wall:.1f} s, {rss / 1024:.0f} MB", file=sys.stderr)
    return lines


# --------------------------------------------------------------------------- real trees

FLOOR_PARSES = frozenset({".py", ".yaml", ".yml", ".cfg", ".json", ".toml"})  # floor.parse
FILE_TIMEOUT_MARGIN = 10.0  # the slowest file stays this many times under the file timeout


class TreeOption(argparse.Action):
    """`--tree DIR` adds a checkout; `--tree-label NAME@COMMIT` names the `--tree` before it."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        trees: list[list[object]] = list(getattr(namespace, self.dest, None) or [])
        if option_string == "--tree":
            trees.append([Path(str(values)), None])
        elif not trees:
            parser.error("--tree-label names the --tree given before it")
        else:
            name, _, commit = str(values).partition("@")
            if not name or not commit:
                parser.error(f"--tree-label wants NAME@COMMIT, not {values!r}")
            trees[-1][1] = (name, commit)
        setattr(namespace, self.dest, trees)


def tree_identity(path: Path, label: tuple[str, str] | None) -> tuple[str, str]:
    """(name, commit) of a checkout: its `--tree-label`, else its folder's name and
    `git rev-parse HEAD` when it is the top of a git work tree."""
    if label is not None:
        return label
    r = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel", "HEAD"],
        capture_output=True,
        text=True,
    )
    lines = r.stdout.split()
    if r.returncode == 0 and len(lines) == 2 and Path(lines[0]).resolve() == path.resolve():
        return path.resolve().name, lines[1]
    raise SystemExit(
        f"{path} is not the top of a git work tree: name its commit with "
        "--tree-label NAME@COMMIT after its --tree"
    )


def slowest_files(venv: Venv, path: Path, slowest: int, rounds: int, work: Path) -> dict[str, Any]:
    """fp8lint's and the floor's time on each of the `slowest` files fp8lint takes longest on
    (bench/per_file.py: one fresh process per tool, every file timed in-process)."""
    helper = str(HERE / "per_file.py")
    ours, theirs, listed = (work / f"per-file-{n}.json" for n in ("fp8lint", "floor", "list"))
    common = ["--slowest", str(slowest), "--rounds", str(rounds)]
    subprocess.run(
        [venv.python, helper, "fp8lint", str(path), "--out", str(ours), *common],
        check=True,
        env=venv.env(),
    )
    linted = json.loads(ours.read_text())
    worst = sorted(linted["files"], key=lambda r: -r[3])[:slowest]
    listed.write_text(json.dumps([r[0] for r in worst]))
    subprocess.run(
        [
            venv.python,
            helper,
            "floor",
            str(path),
            "--files",
            str(listed),
            "--out",
            str(theirs),
            *common,
        ],
        check=True,
        env=venv.env(),
    )
    floors = {r[0]: r[3] for r in json.loads(theirs.read_text())["files"]}
    rows = []
    for name, kind, size, seconds in worst:
        base = floors.get(name) if Path(name).suffix.lower() in FLOOR_PARSES else None
        rows.append(
            {
                "path": os.path.relpath(name, path),
                "kind": kind,
                "bytes": size,
                "fp8lint": seconds,
                "floor": base,
                "ratio": seconds / base if base else None,
            }
        )
    return {
        "timeout": linted["timeout"],
        "discovered": linted["discovered"],
        "linted": len(linted["files"]),
        "linted_bytes": sum(r[2] for r in linted["files"]),
        "fp8lint_total": sum(r[3] for r in linted["files"]),
        "slowest": rows,
    }


PHASES = ("parse", "walk", "scopes", "positions", "rest")
PHASED_FILES = 3  # the slowest Python files of each tree split into phases


def python_phases(
    venvs: dict[str, Venv], files: list[str], rounds: int, work: Path
) -> dict[str, dict[str, dict[str, float]]]:
    """bench/py_phases.py on `files` with each venv's interpreter: {label: {path: phases}}."""
    found = {}
    for label, v in venvs.items():
        out = work / f"phases-{label.replace('@', '')}.json"
        subprocess.run(
            [
                v.python,
                str(HERE / "py_phases.py"),
                *files,
                "--out",
                str(out),
                "--rounds",
                str(rounds),
            ],
            check=True,
            env=v.env(),
        )
        found[label] = json.loads(out.read_text())
    return found


def phase_lines(tree: Path, phases: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """A table per file: seconds per phase for each checkout."""
    lines = [
        "",
        "Where the time goes on its slowest Python files (`bench/py_phases.py`, timers inside "
        "the thread that runs libcst, median of the rounds; the same files for each checkout):",
        "",
        "| file | checkout | total s | " + " | ".join(PHASES) + " |",
        "|---|---|---:|" + "---:|" * len(PHASES),
    ]
    labels = list(phases)
    paths = list(phases[labels[0]]) if labels else []
    for path in paths:
        for label in labels:
            row = phases[label].get(path)
            if row is None:
                continue
            cells = " | ".join(fmt(row.get(p, 0.0)) for p in PHASES)
            lines.append(
                f"| `{os.path.relpath(path, tree)}` | {label} | {fmt(row['total'])} | {cells} |"
            )
    return lines


def real_trees(
    venv: Venv,
    specs: list[list[object]],
    rounds: int,
    slowest: int,
    file_rounds: int,
    work: Path,
    before: tuple[str, Venv] | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The "Real repositories" section: fp8lint, the floor and yamllint on each checkout
    (alternating, `rounds` rounds), then the slowest files one by one, and the slowest
    Python files split into phases (with the baseline's checkout too, when there is one)."""
    env = venv.env()
    found: list[dict[str, Any]] = []
    for spec in specs:
        path, label = Path(str(spec[0])), spec[1]
        if not path.is_dir():
            raise SystemExit(f"--tree {path}: not a folder")
        name, commit = tree_identity(path, label)  # type: ignore[arg-type]
        print(f"tree {name}@{commit[:12]}, {rounds} rounds ...", file=sys.stderr)
        runs = alternate(
            {
                "fp8lint": [venv.bin("fp8lint"), "check", "-q", "--no-cache", str(path)],
                "floor": [venv.python, str(HERE / "floor.py"), str(path)],
                "yamllint": [venv.bin("yamllint"), "-f", "parsable", str(path)],
            },
            rounds,
            env,
        )
        print(f"  per file ({slowest} slowest, {file_rounds} rounds) ...", file=sys.stderr)
        scratch = work / f"per-file-{name}"
        scratch.mkdir(parents=True, exist_ok=True)
        files = slowest_files(venv, path, slowest, file_rounds, scratch)
        worst = [str(path / r["path"]) for r in files["slowest"] if r["kind"] == "python"][
            :PHASED_FILES
        ]
        venvs = {"this checkout": venv, **({f"@{before[0]}": before[1]} if before else {})}
        print(f"  phases ({len(worst)} files, {len(venvs)} checkouts) ...", file=sys.stderr)
        phases = python_phases(venvs, worst, file_rounds, scratch) if worst else {}
        found.append(
            {
                "name": name,
                "commit": commit,
                "path": str(path),
                "runs": runs,
                **files,
                "phases": phases,
            }
        )

    lines = [
        "## Real repositories",
        "",
        "Checkouts given with `--tree` (fetched by the person running the bench; the default "
        "bench stays generated). On each: `fp8lint check -q --no-cache`, the floor "
        "(`bench/floor.py`) and `yamllint -f parsable` on the whole tree, alternating over "
        f"{rounds} round{'s' if rounds != 1 else ''} (medians, min–max in brackets; exit code "
        "1 is findings). Then the "
        f"{slowest} files fp8lint takes longest on, each timed in one process per tool "
        "(`bench/per_file.py` with the bench venv's interpreter, "
        f"median of {file_rounds}): fp8lint's `lint_checked` on the decoded text (libcst on "
        "fp8lint's deep thread, as in a check) against the floor's parse of the same file "
        "(`libcst.parse_module` for Python, libyaml compose for YAML). The margin is the "
        "file timeout over the slowest file's time (target: at least "
        f"{FILE_TIMEOUT_MARGIN:g}×).",
        "",
        "| tree | commit | files read / linted | fp8lint / floor wall | CPU | slowest file s "
        "| its fp8lint / floor | timeout margin |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for t in found:
        runs = t["runs"]
        rows = t["slowest"]
        top = rows[0] if rows else None
        margin = t["timeout"] / top["fp8lint"] if top and top["fp8lint"] else float("inf")
        t["margin"] = margin
        lines.append(
            f"| {t['name']} | `{str(t['commit'])[:12]}` | {t['discovered']} / {t['linted']} | "
            f"{runs['fp8lint'].median / runs['floor'].median:.2f}× | "
            f"{runs['fp8lint'].cpu_median / runs['floor'].cpu_median:.2f}× | "
            f"{fmt(top['fp8lint']) if top else '–'} | "
            f"{times(top['ratio'] if top else None)} | "
            f"{margin:.0f}× ({'met' if margin >= FILE_TIMEOUT_MARGIN else 'missed'}) |"
        )
    for t in found:
        runs = t["runs"]
        fl = runs["floor"]
        lines += [
            "",
            f"### {t['name']} at `{t['commit']}`",
            "",
            f"{t['discovered']} files fp8lint reads, {t['linted']} past its prefilter "
            f"({t['linted_bytes'] / 1e6:.1f} MB); in one process they take "
            f"{t['fp8lint_total']:.1f} s of fp8lint's per-file work.",
            "",
            "| command | wall s | CPU s | peak MB | exit codes | wall / floor | CPU / floor |",
            "|---|---:|---:|---:|---|---:|---:|",
            *(
                f"| `{k}` | {v.cell()} | {v.cell('cpu')} | {v.peak_mb:.0f} | {sorted(v.codes)} | "
                f"{v.median / fl.median:.2f}× | {v.cpu_median / fl.cpu_median:.2f}× |"
                for k, v in runs.items()
            ),
            "",
            f"Slowest files (file timeout {t['timeout']:g} s; slowest at "
            f"{1 / t['margin']:.1%} of it):",
            "",
            "| file | kind | KB | fp8lint s | floor s | fp8lint / floor |",
            "|---|---|---:|---:|---:|---:|",
            *(
                f"| `{r['path']}` | {r['kind']} | {r['bytes'] / 1024:.0f} | {fmt(r['fp8lint'])} | "
                f"{fmt(r['floor']) if r['floor'] is not None else '– (not parsed)'} | "
                f"{times(r['ratio'])} |"
                for r in t["slowest"]
            ),
            *(phase_lines(Path(str(t["path"])), t["phases"]) if t["phases"] else []),
        ]
    data = [
        {
            **{k: v for k, v in t.items() if k != "runs"},
            "runs": {
                k: {"wall": v.wall, "cpu": v.cpu, "peak_mb": v.peak_mb, "codes": sorted(v.codes)}
                for k, v in t["runs"].items()
            },
        }
        for t in found
    ]
    return lines, data


# --------------------------------------------------------------------------- report


def fmt(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def times(ratio: object) -> str:
    """A ratio as `1.23×`, or `–` where there is none."""
    return f"{ratio:.2f}×" if isinstance(ratio, float) and ratio else "–"


def verdict(value: float, target: float) -> str:
    """`met`, or how far over the target the ratio is (a close miss says so)."""
    if value <= target:
        return "met"
    return f"missed by {100 * (value / target - 1):.0f}%"


def write_report(out: Path, lines: list[str], data: dict[str, object]) -> None:
    """RESULTS.md (a hand-written analysis below its `<!-- ANALYSIS -->` marker is kept) and
    results.json beside this script."""
    lines = [*lines, "", "<!-- ANALYSIS -->", ""]
    text = "\n".join(lines) + "\n"
    old = out.read_text() if out.is_file() else ""
    if "<!-- ANALYSIS -->" in old:  # keep a hand-written analysis below the marker
        text = text.replace("<!-- ANALYSIS -->\n", old[old.index("<!-- ANALYSIS -->") :], 1)
    out.write_text(text)
    (HERE / "results.json").write_text(json.dumps(data, indent=2) + "\n")
    print(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--single-rounds", type=int, default=15)
    parser.add_argument("--sizes", default=None, help="tree sizes for linearity (N/2, N, 2N)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--simulate-rows", default="1000000,100000000")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "fp8lint-bench")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="REV",
        help="also time fp8lint as it was at this git revision (its own venv), alternating",
    )
    parser.add_argument(
        "--tree",
        dest="trees",
        action=TreeOption,
        default=[],
        metavar="DIR",
        help="also time fp8lint, the floor and yamllint on this checkout (repeatable)",
    )
    parser.add_argument(
        "--tree-label",
        dest="trees",
        action=TreeOption,
        metavar="NAME@COMMIT",
        help="name and commit of the --tree before it (needed where it is no git work tree)",
    )
    parser.add_argument(
        "--tree-only",
        action="store_true",
        help="only the --tree section: no generated trees, single files, simulate or profiles",
    )
    parser.add_argument("--slowest", type=int, default=10, help="slowest files shown per --tree")
    parser.add_argument(
        "--file-rounds", type=int, default=3, help="rounds of each slowest file (per tool)"
    )
    args = parser.parse_args(argv)
    if args.tree_only and not args.trees:
        parser.error("--tree-only needs at least one --tree")
    if args.tree_only and args.baseline:
        parser.error("--baseline times the generated tree: it does not go with --tree-only")
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else [args.files // 2, args.files, args.files * 2]
    )
    started = time.perf_counter()
    args.work.mkdir(parents=True, exist_ok=True)
    print("venv ...", file=sys.stderr)
    venv = Venv(args.work / "venv")
    venv.build()
    check_floor_matches(venv)
    env = venv.env()
    command = "python3 bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.tree_only:
        real_lines, real_data = real_trees(
            venv, args.trees, args.rounds, args.slowest, args.file_rounds, args.work
        )
        lines = [
            "# fp8lint benchmark",
            "",
            f"Produced by `{command.strip()}` in {time.perf_counter() - started:.0f} s "
            f"({time.strftime('%Y-%m-%d')}), in one run; `--tree-only`: the generated trees, "
            "single files, `simulate` and the profiles were not run. Every command is a fresh "
            "process of a fresh virtual environment that holds a regular (byte-compiled) "
            "install of fp8lint and its peers.",
            "",
            "## Machine",
            "",
            *machine(venv),
            "",
            *real_lines,
        ]
        write_report(args.out, lines, {"rounds": args.rounds, "trees": real_data})
        return 0
    before: Venv | None = None
    if args.baseline:
        print(f"baseline venv ({args.baseline}) ...", file=sys.stderr)
        before = baseline(args.baseline, args.work)
    print("trees ...", file=sys.stderr)
    trees = {n: tree(n, args.seed, args.work) for n in sorted({*sizes, args.files})}
    root, stats = trees[args.files]
    mb = stats["bytes"] / 1e6
    fp8lint = venv.bin("fp8lint")
    py = venv.python

    def check(*more: str) -> list[str]:
        return [fp8lint, "check", *more]

    warm_dir = Path(tempfile.mkdtemp(prefix="fp8lint-bench-cache-"))
    warm = ["--cache-dir", str(warm_dir)]
    measure(check("--exit-zero", "-q", *warm, str(root)), env=env)  # prime the warm cache

    print(f"tree of {args.files} files, {args.rounds} rounds ...", file=sys.stderr)
    main_runs = alternate(
        {
            "fp8lint": check("--exit-zero", "-q", "--no-cache", str(root)),
            "floor": [py, str(HERE / "floor.py"), str(root)],
            "fp8lint, warm cache": check("--exit-zero", "-q", *warm, str(root)),
            "fp8lint, one process": [
                "env",
                "FP8LINT_WORKERS=1",
                *check("--exit-zero", "-q", "--no-cache", str(root)),
            ],
            "yamllint": [venv.bin("yamllint"), "-f", "parsable", str(root)],
            **(
                {
                    f"fp8lint @{args.baseline}": [
                        before.bin("fp8lint"),
                        "check",
                        "--exit-zero",
                        "-q",
                        "--no-cache",
                        str(root),
                    ]
                }
                if before is not None
                else {}
            ),
        },
        args.rounds,
        env,
    )

    print("single-file calls ...", file=sys.stderr)
    fp8_file, plain_file, py_file, batch = pick_files(root)
    measure(check(*warm, str(fp8_file)), env=env)
    single = alternate(
        {
            "python -c pass": [py, "-c", "pass"],
            "fp8lint non-FP8 YAML": check("--no-cache", str(plain_file)),
            "fp8lint 20 non-FP8 files": check("--no-cache", *map(str, batch)),
            "fp8lint FP8 YAML": check("--no-cache", str(fp8_file)),
            "fp8lint FP8 YAML, warm cache": check(*warm, str(fp8_file)),
            "yamllint FP8 YAML": [venv.bin("yamllint"), "-f", "parsable", str(fp8_file)],
            "stack floor": [py, str(HERE / "stack_floor.py"), str(fp8_file)],
            "stack floor, an adapter of int": [
                py,
                str(HERE / "stack_floor.py"),
                "--adapter",
                str(fp8_file),
            ],
            "fp8lint Python recipe": check("--no-cache", str(py_file)),
            "fixit Python recipe": [venv.bin("fixit"), "--rules", FIXIT_RULE, "lint", str(py_file)],
            **(
                {
                    f"fp8lint @{args.baseline} Python recipe": [
                        before.bin("fp8lint"),
                        "check",
                        "--no-cache",
                        str(py_file),
                    ],
                    f"fp8lint @{args.baseline} FP8 YAML": [
                        before.bin("fp8lint"),
                        "check",
                        "--no-cache",
                        str(fp8_file),
                    ],
                }
                if before is not None
                else {}
            ),
        },
        args.single_rounds,
        env,
    )

    print("linearity ...", file=sys.stderr)
    # every size in one alternation (the tree rows above alternate with yamllint's long runs,
    # which would make their size a different condition from the others)
    sized = alternate(
        {
            **{
                f"fp8lint {n}": check("--exit-zero", "-q", "--no-cache", str(trees[n][0]))
                for n in sizes
            },
            **{f"floor {n}": [py, str(HERE / "floor.py"), str(trees[n][0])] for n in sizes},
        },
        args.rounds,
        env,
    )
    linear: dict[int, dict[str, Runs]] = {
        n: {"fp8lint": sized[f"fp8lint {n}"], "floor": sized[f"floor {n}"]} for n in sizes
    }

    print("memory with the file mix fixed ...", file=sys.stderr)
    smallest = trees[min(sizes)][0]
    copies = (1, 2, 4)
    reps = {k: replicated(smallest, k, args.work) for k in copies}
    memory = alternate(
        {
            **{
                f"fp8lint x{k}": check("--exit-zero", "-q", "--no-cache", str(reps[k]))
                for k in copies
            },
            **{f"floor x{k}": [py, str(HERE / "floor.py"), str(reps[k])] for k in copies},
        },
        args.rounds,
        env,
    )

    sim_lines: list[str] = []
    sim_rows = [int(float(x)) for x in args.simulate_rows.split(",") if x.strip()]
    if sim_rows:
        print("simulate ...", file=sys.stderr)
        sim_lines = simulate_rows(venv, sim_rows, args.work)

    profile = None
    imports: list[tuple[float, str]] = []
    if not args.no_profile:
        print("profiles ...", file=sys.stderr)
        imports = import_profile(venv, fp8_file)
        profile = cprofile(venv, trees[min(sizes)][0], args.work / "fp8lint-bench.prof")
    shutil.rmtree(warm_dir, ignore_errors=True)
    real_lines, real_data = (
        real_trees(
            venv,
            args.trees,
            args.rounds,
            args.slowest,
            args.file_rounds,
            args.work,
            (args.baseline, before) if before is not None else None,
        )
        if args.trees
        else ([], [])
    )

    # ---------------------------------------------------------------- the report
    m = {k: v.median for k, v in main_runs.items()}
    s = {k: v.median for k, v in single.items()}
    ratios = {
        "startup": s["fp8lint non-FP8 YAML"] / s["python -c pass"],
        "yaml_cold": s["fp8lint FP8 YAML"] / s["yamllint FP8 YAML"],
        "yaml_share": (s["fp8lint FP8 YAML"] - s["stack floor"]) / s["yamllint FP8 YAML"],
        "yaml_warm": s["fp8lint FP8 YAML, warm cache"] / s["yamllint FP8 YAML"],
        "python": s["fp8lint Python recipe"] / s["fixit Python recipe"],
        "tree_cold": m["fp8lint"] / m["floor"],
        "tree_warm": m["fp8lint, warm cache"] / m["floor"],
        "tree_yamllint": m["fp8lint"] / m["yamllint"],
    }

    # linear: every added MB costs the same; judged on CPU time (the work itself: wall time
    # on two workers also moves with how evenly the files split), wall shown beside it.
    # Judged on the copies of one tree (the same file mix at every size); the separately
    # drawn trees are shown too, but their mix differs from size to size
    def added_mb(points: list[tuple[float, float]]) -> list[float]:
        points = sorted(points)
        return [(t2 - t1) / (b2 - b1) for (b1, t1), (b2, t2) in itertools.pairwise(points)]

    def spread(xs: list[float]) -> float:
        return max(xs) / min(xs) if xs and min(xs) > 0 else float("inf")

    base_mb = trees[min(sizes)][1]["bytes"] / 1e6
    slopes = added_mb([(k * base_mb, memory[f"fp8lint x{k}"].cpu_median) for k in copies])
    wall_slopes = added_mb([(k * base_mb, memory[f"fp8lint x{k}"].median) for k in copies])
    slope_spread = spread(slopes)
    drawn = added_mb([(trees[n][1]["bytes"] / 1e6, linear[n]["fp8lint"].cpu_median) for n in sizes])
    rep_peaks = [(k, memory[f"fp8lint x{k}"].peak_mb) for k in copies]
    rep_growth = rep_peaks[-1][1] / rep_peaks[0][1]
    lines = [
        "# fp8lint benchmark",
        "",
        f"Produced by `{command.strip()}` in {time.perf_counter() - started:.0f} s "
        f"({time.strftime('%Y-%m-%d')}), in one run. Every command is a fresh process of a "
        "fresh virtual environment that holds a regular (byte-compiled) install of fp8lint and "
        "its peers; commands alternate on every round. Figures are medians with min–max in "
        f"brackets over {args.rounds} rounds (tree) and {args.single_rounds} rounds (single "
        "files); CPU is user + system time of the process and the workers it waited for. "
        "`--no-cache` unless a row says warm cache.",
        "",
        "## Machine",
        "",
        *machine(venv),
        "",
        "## Tree",
        "",
        f"`bench/generate.py --files {args.files} --seed {args.seed}` (key "
        f"`{generate.key(args.files, args.seed)}`): {stats['files']} files, {mb:.1f} MB; "
        f"{stats['fp8']} with FP8 settings, {stats['mention']} that mention FP8 only in a "
        "comment. Mix: " + ", ".join(f"{k} {int(v[0] * 100)}%" for k, v in generate.MIX.items()),
        "",
        "The floor (`bench/floor.py`) walks, reads and prefilters as fp8lint does, then runs the "
        "stack's parsers on the files that pass: libyaml compose for YAML, `json.loads`, "
        "`tomllib.loads`, and `libcst.parse_module` for Python. It is the least any "
        "implementation on this stack must do.",
        "",
        "| command | wall s | CPU s | peak MB | exit codes |",
        "|---|---:|---:|---:|---|",
        *(
            f"| `{k}` | {v.cell()} | {v.cell('cpu')} | {v.peak_mb:.0f} | {sorted(v.codes)} |"
            for k, v in main_runs.items()
        ),
        "",
        "## Single files (pre-commit style: `fp8lint check FILE`)",
        "",
        f"FP8 YAML: `{fp8_file.relative_to(root)}` ({fp8_file.stat().st_size} bytes, a NeMo "
        f"GPT config); non-FP8 YAML: `{plain_file.relative_to(root)}` "
        f"({plain_file.stat().st_size} bytes); Python recipe: `{py_file.relative_to(root)}` "
        f"({py_file.stat().st_size} bytes).",
        "",
        "| command | wall s | CPU s | peak MB | exit codes |",
        "|---|---:|---:|---:|---|",
        *(
            f"| `{k}` | {v.cell()} | {v.cell('cpu')} | {v.peak_mb:.0f} | {sorted(v.codes)} |"
            for k, v in single.items()
        ),
        "",
        "## Linearity and memory (fp8lint and the floor at several sizes)",
        "",
        f"All sizes alternate in one group of {args.rounds} rounds (so the middle size is "
        "measured again here, beside the others).",
        "",
        "| files | MB | fp8lint wall s | fp8lint CPU s | fp8lint peak MB | floor wall s | "
        "floor peak MB | fp8lint / floor |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        b = trees[n][1]["bytes"] / 1e6
        fl, fo = linear[n]["fp8lint"], linear[n]["floor"]
        lines.append(
            f"| {n} | {b:.1f} | {fl.cell()} | {fl.cell('cpu')} | {fl.peak_mb:.0f} | "
            f"{fo.cell()} | {fo.peak_mb:.0f} | {fl.median / fo.median:.2f} |"
        )
    lines += [
        "",
        "Peak memory across these trees also follows the largest file whose Python is parsed "
        "(the trees are drawn separately, so a bigger one holds bigger files); the next table "
        "holds the file mix fixed, and the cost per added MB is judged there.",
        "",
        f"## Cost and memory with the file mix fixed: the {min(sizes)}-file tree, copied",
        "",
        f"The same tree 1, 2 and {copies[-1]} times side by side (hard links), so only the "
        f"number of files grows; {args.rounds} rounds.",
        "",
        "| copies | files | fp8lint wall s | fp8lint CPU s | fp8lint peak MB | floor wall s | "
        "floor peak MB |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {k} | {k * trees[min(sizes)][1]['files']} | {memory[f'fp8lint x{k}'].cell()} | "
            f"{memory[f'fp8lint x{k}'].cell('cpu')} | "
            f"{memory[f'fp8lint x{k}'].peak_mb:.0f} | {memory[f'floor x{k}'].cell()} | "
            f"{memory[f'floor x{k}'].peak_mb:.0f} |"
            for k in copies
        ),
    ]
    lines += [
        "",
        "## Targets",
        "",
        "| target | ratio of medians | verdict |",
        "|---|---:|---|",
    ]
    for key, (target, what) in TARGETS.items():
        label = what.replace("tree", f"{args.files}-file tree")
        ratio = ratios[key]
        lines.append(f"| {label} ≤ {target}× | {ratio:.3f}× | {verdict(ratio, target)} |")
    lines += [
        f"| cost linear in bytes ({min(sizes)}-file tree, 1 → 2 → {copies[-1]} copies): the "
        f"cost of each added MB (CPU) varies by ≤ 1.25× | "
        f"{' / '.join(f'{x:.4f}' for x in slopes)} CPU s/MB (spread {slope_spread:.2f}; wall "
        f"{' / '.join(f'{x:.4f}' for x in wall_slopes)}; the separately drawn trees "
        f"{' / '.join(f'{x:.4f}' for x in drawn)}, spread {spread(drawn):.2f}) | "
        f"{'met' if slope_spread <= 1.25 else 'missed'} |",
        f"| peak memory does not grow with the number of files ({min(sizes)}-file tree, "
        f"1 → {copies[-1]} copies: ≤ 1.25×) | {rep_peaks[0][1]:.0f} → {rep_peaks[-1][1]:.0f} MB "
        f"({rep_growth:.2f}×) | {'met' if rep_growth <= 1.25 else 'missed'} |",
    ]
    stack, adapter = s["stack floor"], s["stack floor, an adapter of int"]
    lines += [
        "",
        "For scale: the stack floor for one file (`bench/stack_floor.py`: import PyYAML, "
        "OmegaConf and pydantic, compose the file with libyaml, resolve one interpolation, "
        f"define one pydantic model and validate with it) takes {stack:.3f} s, "
        f"{stack / s['yamllint FP8 YAML']:.3f}× yamllint on the FP8 YAML file; beyond it, the "
        f"cold call spends {s['fp8lint FP8 YAML'] - stack:.3f} s "
        f"({(s['fp8lint FP8 YAML'] - stack) / s['yamllint FP8 YAML']:.3f}× yamllint). "
        "The floor's older definition validated with a `TypeAdapter(int)`, which never loads "
        "pydantic's model machinery; that floor (`stack_floor.py --adapter`) takes "
        f"{adapter:.3f} s here, and beyond it the cold call spends "
        f"{(s['fp8lint FP8 YAML'] - adapter) / s['yamllint FP8 YAML']:.3f}× yamllint.",
    ]
    if before is not None:
        b = args.baseline
        pairs = [
            ("tree, cold", main_runs["fp8lint"], main_runs[f"fp8lint @{b}"]),
            (
                "one Python recipe file",
                single["fp8lint Python recipe"],
                single[f"fp8lint @{b} Python recipe"],
            ),
            ("one FP8 YAML file", single["fp8lint FP8 YAML"], single[f"fp8lint @{b} FP8 YAML"]),
        ]
        lines += [
            "",
            f"## Before and after: this checkout against `{b}` (its own venv, same run)",
            "",
            f"| workload | `{b}` wall s | now wall s | `{b}` CPU s | now CPU s | now / before |",
            "|---|---:|---:|---:|---:|---:|",
            *(
                f"| {label} | {old.cell()} | {new.cell()} | {old.cell('cpu')} | "
                f"{new.cell('cpu')} | {new.median / old.median:.2f}× |"
                for label, new, old in pairs
            ),
        ]
    if sim_lines:
        lines += [
            "",
            "## `fp8lint simulate` (report and sweep) on generated amax traces",
            "",
            "Traces from `bench/simulate_trace.py` (written once under `--work`); targets: "
            "10^6 rows ≤ 2 s and ≤ 300 MB, 10^8 rows ≤ 3 min and ≤ 1 GB.",
            "",
            *sim_lines,
        ]
    if imports:
        lines += [
            "",
            "## Where a cold call on the FP8 YAML file goes: `python -X importtime` "
            "(cumulative; dots mark nesting)",
            "",
            "| s | module |",
            "|---:|---|",
            *(f"| {t:.3f} | `{name}` |" for t, name in imports),
        ]
    if profile is not None:
        total, stages, top = profile
        lines += [
            "",
            f"## Where a {min(sizes)}-file run goes: cProfile, one process (total {total:.1f} s "
            "under the profiler)",
            "",
            "| stage | cumulative s | share |",
            "|---|---:|---:|",
            *(f"| {label} | {t:.2f} | {100 * t / total:.0f}% |" for label, t in stages),
            "",
            "Top functions by own time:",
            "",
            "| own s | cumulative s | calls | function |",
            "|---:|---:|---:|---|",
            *top,
        ]
    if real_lines:
        lines += ["", *real_lines]
    data = {
        "files": args.files,
        "bytes": stats["bytes"],
        "rounds": args.rounds,
        "main": {
            k: {"wall": v.wall, "cpu": v.cpu, "peak_mb": v.peak_mb} for k, v in main_runs.items()
        },
        "single": {
            k: {"wall": v.wall, "cpu": v.cpu, "peak_mb": v.peak_mb} for k, v in single.items()
        },
        "linear": {n: {k: v.wall for k, v in r.items()} for n, r in linear.items()},
        "ratios": ratios,
        "added_mb_cost_spread": slope_spread,
        "peak_growth_copies": rep_growth,
        "memory": {
            k: {"wall": v.wall, "cpu": v.cpu, "peak_mb": v.peak_mb} for k, v in memory.items()
        },
    }
    if real_data:
        data["trees"] = real_data
    write_report(args.out, lines, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
