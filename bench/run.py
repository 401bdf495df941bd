"""The benchmark: fp8lint against the floor, yamllint and Python's own start-up.

    python3 -m pip install -e '.[bench]'      # yamllint
    python3 bench/run.py [--files 20000] [--repeat 3] [--sizes 10000,20000,40000]

Generates (once, cached under $TMPDIR) deterministic synthetic monorepos with
bench/generate.py, then times, in one run and alternating between commands on every
repetition: `fp8lint check --exit-zero -q TREE` (cold: a fresh process, no cache), the floor
(bench/floor.py: read, prefilter, compose the FP8 YAML, load the FP8 JSON), `yamllint TREE`,
and the start-up references `python3 -c pass` and `python3 -c 'import yaml'`.  Then a
pre-commit-style call on one file (an FP8 YAML file and a file without FP8 settings) against
`python3 -c pass` and `yamllint FILE`, and fp8lint and the floor at every size in --sizes for
linearity.  fp8lint's modules are byte-compiled first, as an installed copy is.  Peak memory
is each child's own maxrss (os.wait4).  The medians, ratios against
the targets of issue 6, a profile of what dominates (python -X importtime and cProfile) and the
machine description go to bench/RESULTS.md.  Nothing here is part of the test suite.
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import floor  # noqa: E402
import generate  # noqa: E402

PY = sys.executable


@dataclass
class Runs:
    wall: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    codes: set[int] = field(default_factory=set)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def peak_mb(self) -> float:
        return max(self.rss_kb) / 1024


def measure(cmd: list[str], cwd: Path | None = None) -> tuple[float, int, float, int]:
    """(wall seconds, maxrss KB, user+sys seconds, exit code) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, proc.returncode


def alternate(
    commands: dict[str, list[str]], repeat: int, cwd: Path | None = None
) -> dict[str, Runs]:
    """Every command once per round, the order rotated each round."""
    runs = {name: Runs() for name in commands}
    names = list(commands)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            wall, rss, cpu, code = measure(commands[name], cwd)
            runs[name].wall.append(wall)
            runs[name].rss_kb.append(rss)
            runs[name].cpu.append(cpu)
            runs[name].codes.add(code)
    return runs


def tree(n: int, seed: int, base: Path) -> tuple[Path, dict[str, int]]:
    path = base / f"tree-{n}-s{seed}-v{generate.VERSION}"
    meta = path / "TREE.json"
    if meta.is_file():
        stats = json.loads(meta.read_text())
        if stats.get("version") == generate.VERSION:
            return path, stats
    if path.exists():
        shutil.rmtree(path)
    t = time.perf_counter()
    stats = generate.generate(path, n, seed)
    print(
        f"  generated {n} files ({stats['bytes'] / 1e6:.1f} MB) in "
        f"{time.perf_counter() - t:.1f}s: {path}",
        file=sys.stderr,
    )
    stats["version"] = generate.VERSION
    return path, stats


def check_floor_matches() -> None:
    from fp8lint import documents, engine
    from fp8lint.engine import files

    assert (floor.PREFILTER_ANY_CASE, floor.PREFILTER_EXACT) == (
        engine.PREFILTER_ANY_CASE,
        engine.PREFILTER_EXACT,
    ), "floor's prefilter words are stale"
    assert floor.EXTENSIONS == frozenset(documents.KINDS), "floor.EXTENSIONS is stale"
    assert floor.SKIP_DIRS == files.SKIP_DIRS, "floor.SKIP_DIRS is stale"


def byte_compile() -> None:
    """Compile fp8lint's modules to bytecode, as `pip install` does for an installed copy.

    An editable checkout run with PYTHONDONTWRITEBYTECODE set (as on this workplace's
    machines) would otherwise recompile every fp8lint module in every timed process, while
    yamllint and pydantic, installed by pip, load theirs from bytecode."""
    import fp8lint

    subprocess.run(
        [PY, "-m", "compileall", "-q", str(Path(fp8lint.__file__).parent)],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )


def machine() -> list[str]:
    def sh(cmd: str) -> str:
        try:
            return subprocess.run(
                cmd, shell=True, capture_output=True, text=True, timeout=10
            ).stdout.strip()
        except Exception:
            return "?"

    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    import yaml

    from fp8lint import __version__

    return [
        f"- CPU: {model or platform.processor()}; `nproc`: {sh('nproc')}",
        f"- memory (`free -m`): {' '.join(sh('free -m').splitlines()[1].split()[1:3])} MB "
        "(total, used)",
        f"- {platform.platform()}; Python {platform.python_version()}",
        f"- fp8lint {__version__}; PyYAML {yaml.__version__} "
        f"(libyaml: {'yes' if hasattr(yaml, 'CSafeLoader') else 'no'}); "
        f"yamllint {sh(PY + ' -m yamllint --version').split()[-1] if have_yamllint() else '-'}",
    ]


def have_yamllint() -> bool:
    try:
        import yamllint  # noqa: F401
    except ImportError:
        return False
    return True


def pick_files(root: Path) -> tuple[Path, Path, list[Path]]:
    """An FP8 YAML file (the largest NeMo-style one), a YAML file without FP8 settings of
    similar size, and a batch of 20 files without FP8 settings (what a commit touches)."""
    fp8, plain = [], []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.name == "TREE.json":
            continue
        data = path.read_bytes()
        (fp8 if floor.mentions_fp8(data) else plain).append((path, len(data)))
    fp8_yaml = max((p for p in fp8 if p[0].suffix == ".yaml"), key=lambda p: p[1])
    target = fp8_yaml[1]
    plain_yaml = min((p for p in plain if p[0].suffix == ".yaml"), key=lambda p: abs(p[1] - target))
    batch = [p for p, _ in plain if p.suffix in (".py", ".yaml", ".json", ".sh", ".toml")][:20]
    return fp8_yaml[0], plain_yaml[0], batch


def fp8lint_cmd(*args: str) -> list[str]:
    return [PY, "-m", "fp8lint", "check", *args]


def has_option(option: str) -> bool:
    out = subprocess.run(fp8lint_cmd("--help"), capture_output=True, text=True).stdout
    return option in out


# --------------------------------------------------------------------------- profiles


def import_profile(path: Path, cache_off: list[str]) -> list[tuple[float, str]]:
    """The slowest imports (cumulative microseconds) of a cold pre-commit call on `path`."""
    r = subprocess.run(
        [
            PY,
            "-X",
            "importtime",
            "-m",
            "fp8lint",
            "check",
            "--force-exclude",
            *cache_off,
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)) / 1e6, (len(m.group(3)) - 1) // 2 + 1, m.group(4)))
    total = sum(t for t, depth, _ in rows if depth == 1)
    top = sorted(rows, reverse=True)[:14]  # any depth: a parent's time includes its children
    return [(total, "(all imports)"), *((t, "· " * (depth - 1) + name) for t, depth, name in top)]


STAGES = {  # cProfile function name -> what it stands for
    "_read_job": "read + prefilter + decode",
    "_walk": "walk the tree",
    "parse_python": "parse Python (libcst)",
    "parse_yaml": "parse YAML",
    "parse_json": "parse JSON",
    "parse_toml": "parse TOML",
    "parse_shell": "parse shell",
    "apply_rules": "rules",
    "apply": "suppressions",
    "render_output": "render",
}


def cprofile(
    root: Path, out: Path, cache_off: list[str]
) -> tuple[float, list[tuple[str, float]], list[str]]:
    """One cold run in one process (FP8LINT_WORKERS=1: cProfile sees only its own process)."""
    subprocess.run(
        [
            PY,
            "-m",
            "cProfile",
            "-o",
            str(out),
            "-m",
            "fp8lint",
            "check",
            "--exit-zero",
            "-q",
            *cache_off,
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        check=False,
        env=dict(os.environ, FP8LINT_WORKERS="1"),
    )
    stats = pstats.Stats(str(out))
    raw = stats.stats  # type: ignore[attr-defined]
    total = max(v[3] for v in raw.values())
    stages: dict[str, float] = {}
    for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in raw.items():
        if func in STAGES and "fp8lint" in filename:
            label = STAGES[func]
            stages[label] = max(stages.get(label, 0.0), ct)
    imports = sum(
        v[3]
        for k, v in raw.items()
        if k[2] == "<module>" and "fp8lint" in k[0] and k[0].endswith("cli.py")
    )
    stages["import fp8lint.cli"] = imports
    top = []
    for (filename, line, func), (_cc, nc, tt, ct, _c) in sorted(
        raw.items(), key=lambda kv: -kv[1][2]
    )[:12]:
        short = filename.split("site-packages/")[-1].split("src/")[-1]
        top.append(f"| {tt:.2f} | {ct:.2f} | {nc} | `{short}:{line}({func})` |")
    return total, sorted(stages.items(), key=lambda kv: -kv[1]), top


# --------------------------------------------------------------------------- report


def fmt(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def verdict(value: float, target: float) -> str:
    if value <= target:
        return "met"
    return f"missed by {value / target:.1f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--sizes", default=None, help="tree sizes for the linearity check (default: N/2, N, 2N)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trees", type=Path, default=Path(tempfile.gettempdir()) / "fp8lint-bench")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args(argv)
    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else [args.files // 2, args.files, args.files * 2]
    )
    started = time.perf_counter()
    check_floor_matches()
    byte_compile()
    if not have_yamllint():
        print("yamllint is missing: python3 -m pip install -e '.[bench]'", file=sys.stderr)
        return 2
    args.trees.mkdir(parents=True, exist_ok=True)
    print("trees:", file=sys.stderr)
    trees = {n: tree(n, args.seed, args.trees) for n in sorted({*sizes, args.files})}
    root, stats = trees[args.files]
    cache_off = ["--no-cache"] if has_option("--no-cache") else []
    mb = stats["bytes"] / 1e6
    # a warm cache of its own (primed below), so that no run above touches it
    warm_dir = Path(tempfile.mkdtemp(prefix="fp8lint-bench-cache-"))
    warm = ["--cache-dir", str(warm_dir)] if has_option("--cache-dir") else []
    extra: dict[str, list[str]] = {
        # the same work in one process: what fp8lint costs in CPU, against the (serial) floor
        "fp8lint, one process": [
            "env",
            "FP8LINT_WORKERS=1",
            *fp8lint_cmd("--exit-zero", "-q", *cache_off, str(root)),
        ],
    }
    if warm:
        measure(fp8lint_cmd("--exit-zero", "-q", *warm, str(root)))
        extra["fp8lint, warm cache"] = fp8lint_cmd("--exit-zero", "-q", *warm, str(root))

    print(f"main comparison on {args.files} files, {args.repeat} rounds ...", file=sys.stderr)
    main_runs = alternate(
        {
            "fp8lint": fp8lint_cmd("--exit-zero", "-q", *cache_off, str(root)),
            "floor": [PY, str(HERE / "floor.py"), str(root)],
            **extra,
            "yamllint": [PY, "-m", "yamllint", "-f", "parsable", str(root)],
            "python -c pass": [PY, "-c", "pass"],
            "python -c 'import yaml'": [PY, "-c", "import yaml"],
        },
        args.repeat,
    )

    print("single-file (pre-commit) calls ...", file=sys.stderr)
    fp8_file, plain_file, batch = pick_files(root)
    single = alternate(
        {
            "fp8lint FP8 YAML": fp8lint_cmd("--force-exclude", *cache_off, str(fp8_file)),
            **(
                {
                    "fp8lint FP8 YAML, warm cache": fp8lint_cmd(
                        "--force-exclude", *warm, str(fp8_file)
                    )
                }
                if warm
                else {}
            ),
            "yamllint FP8 YAML": [PY, "-m", "yamllint", "-f", "parsable", str(fp8_file)],
            "fp8lint non-FP8 YAML": fp8lint_cmd("--force-exclude", *cache_off, str(plain_file)),
            "yamllint non-FP8 YAML": [PY, "-m", "yamllint", "-f", "parsable", str(plain_file)],
            "fp8lint 20 non-FP8 files": fp8lint_cmd(
                "--force-exclude", *cache_off, *map(str, batch)
            ),
            "python -c pass": [PY, "-c", "pass"],
        },
        max(5, args.repeat * 3),
    )

    print("linearity ...", file=sys.stderr)
    linear: dict[int, dict[str, Runs]] = {}
    for n in sizes:
        path, _ = trees[n]
        linear[n] = (
            {"fp8lint": main_runs["fp8lint"], "floor": main_runs["floor"]}
            if n == args.files
            else alternate(
                {
                    "fp8lint": fp8lint_cmd("--exit-zero", "-q", *cache_off, str(path)),
                    "floor": [PY, str(HERE / "floor.py"), str(path)],
                },
                args.repeat,
            )
        )

    profile = None
    imports: list[tuple[float, str]] = []
    if not args.no_profile:
        print("profiles ...", file=sys.stderr)
        imports = import_profile(fp8_file, cache_off)
        profiled = min(sizes)  # the smallest tree: the same mix, less time under the profiler
        profile = cprofile(
            trees[profiled][0], Path(tempfile.gettempdir()) / "fp8lint-bench.prof", cache_off
        )

    # ---------------------------------------------------------------- the report
    m = {k: v.median for k, v in main_runs.items()}
    s = {k: v.median for k, v in single.items()}
    r_floor = m["fp8lint"] / m["floor"]
    r_yamllint = m["fp8lint"] / m["yamllint"]
    r_pass = s["fp8lint non-FP8 YAML"] / s["python -c pass"]
    r_single = s["fp8lint FP8 YAML"] / s["yamllint FP8 YAML"]
    per_mb = {n: linear[n]["fp8lint"].median / (trees[n][1]["bytes"] / 1e6) for n in sizes}
    floor_mb = {n: linear[n]["floor"].median / (trees[n][1]["bytes"] / 1e6) for n in sizes}
    spread = max(per_mb.values()) / min(per_mb.values())
    # linear means a fixed start-up plus a constant cost per byte: compare the cost of each
    # added MB between consecutive sizes (the start-up cancels out)
    by_size = sorted((trees[n][1]["bytes"] / 1e6, linear[n]["fp8lint"].median) for n in sizes)
    slopes = [(t2 - t1) / (b2 - b1) for (b1, t1), (b2, t2) in itertools.pairwise(by_size)]
    slope_spread = max(slopes) / min(slopes) if slopes and min(slopes) > 0 else float("inf")
    command = "python3 bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    lines = [
        "# fp8lint benchmark",
        "",
        f"Produced by `{command.strip()}` in {time.perf_counter() - started:.0f} s "
        f"({time.strftime('%Y-%m-%d')}). Medians of {args.repeat} alternating rounds (single-"
        f"file calls: {max(5, args.repeat * 3)}); every run is a fresh process"
        f"{' with --no-cache' if cache_off else ' (fp8lint has no cache yet)'} unless a row "
        "says otherwise; peak memory is the child's own maxrss. fp8lint's modules are "
        "byte-compiled first, as `pip install` leaves an installed copy (yamllint and "
        "pydantic are loaded from their bytecode too).",
        "",
        "## Machine",
        "",
        *machine(),
        "",
        "## Tree",
        "",
        f"`bench/generate.py --files {args.files} --seed {args.seed}`: {stats['files']} files, "
        f"{mb:.1f} MB; {stats['fp8']} with FP8 settings, {stats['mention']} that mention FP8 "
        "only in a comment (they pass the prefilter). Mix: "
        + ", ".join(f"{k} {int(v[0] * 100)}%" for k, v in generate.MIX.items())
        + ".",
        "",
        "## Whole tree",
        "",
        "| command | median s | files/s | MB/s | peak MB | exit codes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, runs in main_runs.items():
        per_file = name.startswith("fp8lint") or name == "floor"
        rate = (
            (f"{stats['files'] / runs.median:,.0f}", f"{mb / runs.median:.1f}")
            if per_file
            else ("", "")
        )
        if name == "yamllint":
            n_yaml = sum(1 for _ in root.rglob("*.yaml"))
            rate = (f"{n_yaml / runs.median:,.0f} (YAML only)", "")
        lines.append(
            f"| `{name}` | {fmt(runs.median)} | {rate[0]} | {rate[1]} | "
            f"{runs.peak_mb:.0f} | {sorted(runs.codes)} |"
        )
    lines += [
        "",
        "## Single-file calls (pre-commit style: `fp8lint check --force-exclude FILE`)",
        "",
        f"FP8 file: `{fp8_file.relative_to(root)}` ({fp8_file.stat().st_size} bytes); "
        f"non-FP8 file: `{plain_file.relative_to(root)}` ({plain_file.stat().st_size} bytes).",
        "",
        "| command | median s | peak MB |",
        "|---|---:|---:|",
        *(f"| `{k}` | {fmt(v.median)} | {v.peak_mb:.0f} |" for k, v in single.items()),
        "",
        "## Linearity (fp8lint and the floor at several sizes)",
        "",
        "| files | MB | fp8lint s | fp8lint s/MB | floor s | floor s/MB | fp8lint / floor |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        b = trees[n][1]["bytes"] / 1e6
        fl, fo = linear[n]["fp8lint"].median, linear[n]["floor"].median
        lines.append(
            f"| {n} | {b:.1f} | {fmt(fl)} | {per_mb[n]:.3f} | {fmt(fo)} | "
            f"{floor_mb[n]:.3f} | {fl / fo:.1f} |"
        )
    lines += [
        "",
        "## Targets (issue 6)",
        "",
        "| target | measured | verdict |",
        "|---|---:|---|",
        f"| pre-commit call, no FP8 settings ≤ 2.5× `python3 -c pass` | {r_pass:.2f}× | "
        f"{verdict(r_pass, 2.5)} |",
        f"| one FP8 YAML file ≤ 1.0× `yamllint` on the same file | {r_single:.2f}× | "
        f"{verdict(r_single, 1.0)} |",
        f"| {args.files}-file tree ≤ 1.5× the floor | {r_floor:.2f}× | {verdict(r_floor, 1.5)} |",
        f"| {args.files}-file tree ≤ 0.1× `yamllint` | {r_yamllint:.3f}× | "
        f"{verdict(r_yamllint, 0.1)} |",
        f"| time linear in bytes ({', '.join(map(str, sizes))} files) | added-MB cost "
        f"{' / '.join(f'{x:.4f}' for x in slopes)} s/MB (spread {slope_spread:.2f}; whole-run "
        f"s/MB spread {spread:.2f}) | {'met' if slope_spread <= 1.25 else 'missed'} (the cost "
        "of each added MB varies by ≤ 1.25×; start-up is not per byte) |",
    ]
    if imports:
        lines += [
            "",
            "## Where a pre-commit call on the FP8 YAML file goes: `python -X "
            "importtime` (cumulative; dots mark nesting)",
            "",
            "| s | module |",
            "|---:|---|",
            *(f"| {t:.3f} | `{name}` |" for t, name in imports),
        ]
    if profile is not None:
        total, stages, top = profile
        lines += [
            "",
            f"## Where a {min(sizes)}-file run goes: cProfile (total {total:.1f} s "
            "under the profiler)",
            "",
            "| stage | cumulative s | share |",
            "|---|---:|---:|",
        ]
        lines += [f"| {label} | {t:.2f} | {100 * t / total:.0f}% |" for label, t in stages]
        lines += [
            "",
            "Top functions by own time:",
            "",
            "| own s | cumulative s | calls | function |",
            "|---:|---:|---:|---|",
            *top,
        ]
    lines += ["", "<!-- ANALYSIS -->", ""]
    shutil.rmtree(warm_dir, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    old = args.out.read_text() if args.out.is_file() else ""
    if "<!-- ANALYSIS -->" in old:  # keep a hand-written analysis below the marker
        text = text.replace("<!-- ANALYSIS -->\n", old[old.index("<!-- ANALYSIS -->") :], 1)
    args.out.write_text(text)
    (HERE / "results.json").write_text(
        json.dumps(
            {
                "files": args.files,
                "bytes": stats["bytes"],
                "repeat": args.repeat,
                "main": {
                    k: {"median": v.median, "wall": v.wall, "peak_mb": v.peak_mb}
                    for k, v in main_runs.items()
                },
                "single": {
                    k: {"median": v.median, "wall": v.wall, "peak_mb": v.peak_mb}
                    for k, v in single.items()
                },
                "linear": {n: {k: v.median for k, v in r.items()} for n, r in linear.items()},
                "ratios": {
                    "fp8lint/floor": r_floor,
                    "fp8lint/yamllint": r_yamllint,
                    "precommit/python": r_pass,
                    "fp8yaml/yamllint": r_single,
                    "s_per_mb_spread": spread,
                    "added_mb_cost_spread": slope_spread,
                },
            },
            indent=2,
        )
        + "\n"
    )
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
