"""A deterministic synthetic monorepo for the benchmark.

    python bench/generate.py OUT [--files 20000] [--seed 0]

The tree looks like an ML training monorepo: Python packages, YAML and JSON configs, shell
launch scripts, TOML, Markdown docs, in folders of a few dozen files, at realistic sizes
(log-normal; most files a few KB, a few much larger).  About 2% of the files carry FP8
settings, copied with their numbers varied from the project's own files only: `bench/templates/`
(a full NeMo 1.x GPT config with interpolations, Megatron MODEL_ARGS, Accelerate, DeepSpeed +
MS-AMP, TE and NeMo 2 recipes, torchtitan TOML) and `examples/`; shell launchers are made here.
About 0.5% more mention FP8 only in a comment, so they pass the byte prefilter and are parsed
for nothing.  The rest never mentions FP8.  The same --files and --seed give the same bytes on
every machine, and `key()` changes whenever any input of the generator does (this file, a
template, an example), so a cached tree is never stale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = Path(__file__).resolve().parent / "templates"
EXAMPLES = ROOT / "examples"
SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".py": "py", ".toml": "toml"}

# kind -> (share of all files, median size in bytes, sigma of log size)
MIX = {
    "py": (0.44, 4500, 0.9),
    "yaml": (0.18, 1500, 0.8),
    "json": (0.10, 1200, 1.1),
    "md": (0.12, 3000, 0.9),
    "sh": (0.08, 1500, 0.7),
    "toml": (0.05, 900, 0.6),
    "txt": (0.03, 800, 0.8),  # not read by fp8lint (requirements, notes)
}
FP8_SHARE = 0.02
MENTION_SHARE = 0.005
FP8_MIX = {"yaml": 0.5, "py": 0.25, "json": 0.08, "sh": 0.10, "toml": 0.07}

WORDS = (
    "model data train eval loss batch token layer attention head embed norm optim sched "
    "config loader dataset sample shard rank world group parallel tensor pipeline expert "
    "router gate mlp linear proj hidden size seq length vocab cache step epoch log metric "
    "checkpoint save load path dir file url name kind mode flag value result output input "
    "weight bias grad scale clip warmup decay rate beta alpha gamma delta eps init seed "
    "device cuda cpu node host port rpc queue worker task job run launch stage phase"
).split()
FORBIDDEN = re.compile(r"(?i)fp8|float8|msamp|delayedscaling|nvfp4|\"mx\"")


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def word(self) -> str:
        return self.r.choice(WORDS)

    def ident(self) -> str:
        return "_".join(self.word() for _ in range(self.r.randint(1, 3)))

    def size(self, kind: str) -> int:
        _share, median, sigma = MIX[kind]
        return max(120, min(int(self.r.lognormvariate(0, sigma) * median), 400_000))

    # -- plain content, grown to a target size ----------------------------------------------
    def python(self, target: int) -> str:
        r = self.r
        out = [
            '"""' + " ".join(self.word() for _ in range(8)) + '."""',
            "",
            "from __future__ import annotations",
            "",
            "import os",
            "import math",
            f"from {self.word()}.{self.word()} import {self.ident()}",
            "",
        ]
        while sum(map(len, out)) < target:
            if r.random() < 0.2:
                cls = self.ident().title().replace("_", "")
                out += [
                    f"class {cls}:",
                    f'    """{self.word()} {self.word()}."""',
                    "",
                    "    def __init__(self, "
                    + ", ".join(self.ident() for _ in range(3))
                    + ") -> None:",
                ]
                out += [f"        self.{self.ident()} = {r.randint(0, 4096)}" for _ in range(4)]
                out.append("")
            name = self.ident()
            args = ", ".join(f"{self.ident()}: int = {r.randint(0, 64)}" for _ in range(3))
            out += [
                f"def {name}({args}) -> int:",
                f'    """{self.word()} the {self.word()}."""',
                f"    {self.ident()} = [{', '.join(str(r.randint(0, 99)) for _ in range(6))}]",
            ]
            for _ in range(r.randint(2, 8)):
                out.append(f"    if {self.ident()} > {r.randint(0, 100)}:")
                out.append(f"        {self.ident()} = math.sqrt({self.ident()} + {r.random():.4f})")
            out += [f"    return len(os.environ.get('{self.ident().upper()}', ''))", "", ""]
        return "\n".join(out) + "\n"

    def yaml(self, target: int) -> str:
        r = self.r
        out = [f"# {self.word()} {self.word()} configuration"]
        while sum(map(len, out)) < target:
            out.append(f"{self.ident()}:")
            for _ in range(r.randint(3, 10)):
                k = self.ident()
                v = r.choice(
                    [
                        str(r.randint(0, 8192)),
                        f"{r.random():.5f}",
                        "true",
                        "false",
                        "null",
                        self.ident(),
                        f"${{{self.word()}.{self.ident()}}}",
                    ]
                )
                out.append(f"  {k}: {v}")
                if r.random() < 0.15:
                    out.append(f"  {self.ident()}:")
                    out += [f"    - {self.ident()}" for _ in range(r.randint(1, 4))]
        return "\n".join(out) + "\n"

    def json(self, target: int) -> str:
        r = self.r
        obj: dict[str, object] = {}
        size = 2
        while size < target:
            section = {
                self.ident(): r.choice(
                    [
                        r.randint(0, 10**6),
                        r.random(),
                        self.ident(),
                        True,
                        None,
                        [r.randint(0, 9) for _ in range(5)],
                    ]
                )
                for _ in range(r.randint(2, 8))
            }
            obj[self.ident() + str(len(obj))] = section
            size += len(json.dumps(section)) + 20
        return json.dumps(obj, indent=r.choice([2, 4])) + "\n"

    def markdown(self, target: int) -> str:
        out = [f"# {self.word().title()} {self.word()}", ""]
        while sum(map(len, out)) < target:
            out += [" ".join(self.word() for _ in range(self.r.randint(10, 30))) + ".", ""]
            if self.r.random() < 0.2:
                out += [
                    "```bash",
                    f"python -m {self.word()}.{self.ident()} --{self.word()}",
                    "```",
                    "",
                ]
        return "\n".join(out)

    def shell(self, target: int) -> str:
        r = self.r
        out = ["#!/bin/bash", "set -euo pipefail", ""]
        while sum(map(len, out)) < target:
            var = self.ident().upper()
            out.append(f"{var}={r.randint(1, 64)}")
            if r.random() < 0.3:
                out += [
                    f"torchrun --nproc_per_node {r.choice([2, 4, 8])} {self.word()}.py \\",
                    f"    --{self.word()}-{self.word()} ${var} \\",
                    f"    --{self.word()} {r.randint(1, 9)}",
                ]
            else:
                out.append(f'echo "{self.word()} {self.word()} ${var}"')
        return "\n".join(out) + "\n"

    def toml(self, target: int) -> str:
        r = self.r
        out = []
        while sum(map(len, out)) < target:
            out.append(f"[{self.ident()}]")
            for _ in range(r.randint(2, 6)):
                value = r.choice([str(r.randint(0, 999)), "true", '"x"'])
                out.append(f"{self.ident()} = {value}")
            out.append("")
        return "\n".join(out)

    def text(self, target: int) -> str:
        return (
            "\n".join(
                f"{self.word()}=={self.r.randint(0, 9)}.{self.r.randint(0, 9)}"
                for _ in range(max(1, target // 12))
            )
            + "\n"
        )

    def plain(self, kind: str, target: int) -> str:
        make = {
            "py": self.python,
            "yaml": self.yaml,
            "json": self.json,
            "md": self.markdown,
            "sh": self.shell,
            "toml": self.toml,
            "txt": self.text,
        }[kind]
        # random names can spell a prefilter word ("NormSample" holds "msamp"): break them up,
        # so that only the files meant to mention FP8 do
        return FORBIDDEN.sub(lambda m: m.group()[0] + "_" + m.group()[1:], make(target))

    # -- FP8 content ----------------------------------------------------------------------
    def vary(self, text: str) -> str:
        """Change some numbers so that copies are not identical (structure kept)."""

        def repl(m: re.Match[str]) -> str:
            n = int(m.group())
            return str(n if self.r.random() < 0.7 else self.r.choice([0, 1, 2, 4, 8, 16, 1024]))

        return re.sub(r"(?<![\w.])\d{1,4}(?![\w.])", repl, text)

    def fp8(self, kind: str, templates: dict[str, list[str]]) -> str:
        r = self.r
        if kind == "py":
            body = r.choice(templates["py"])
            pad = self.plain("py", self.size("py"))  # recipes live inside real modules
            cut = pad.find("\ndef ", len(pad) // 2)
            return pad[:cut] + "\n\n" + self.vary(body) + pad[cut:] if cut > 0 else pad + body
        if kind == "sh":
            tp = r.choice([1, 2, 4, 8])
            return self.shell(400) + (
                f"\nTP={tp}\nMEGATRON_ARGS=(\n  --tensor-model-parallel-size $TP\n"
                f"  --fp8-format {r.choice(['hybrid', 'e4m3'])}\n"
                f"  --fp8-amax-history-len {r.choice([1, 16, 1024])}\n"
                f"  --fp8-amax-compute-algo {r.choice(['max', 'most_recent'])}\n)\n"
                'torchrun --nproc_per_node 8 pretrain_gpt.py "${MEGATRON_ARGS[@]}"\n'
            )
        return self.vary(r.choice(templates[kind]))

    def mention(self, kind: str) -> str:
        """A file that says FP8 in a comment only: passes the prefilter, has no settings."""
        text = self.plain(kind, self.size(kind))
        note = {
            "py": "# TODO: try fp8 here later\n",
            "yaml": "# fp8: see the docs\n",
            "sh": "# fp8 runs use another script\n",
            "toml": "# float8 is off here\n",
            "json": None,
        }[kind]
        if note is None:  # JSON has no comments: a string value
            obj = json.loads(text)
            obj["note"] = "fp8 disabled"
            return json.dumps(obj, indent=2) + "\n"
        return note + text


def inputs() -> list[Path]:
    """Every file the generator reads, itself included, in a fixed order."""
    found = [Path(__file__).resolve()]
    for base in (TEMPLATES, EXAMPLES):
        found += sorted(p for p in base.rglob("*") if p.is_file() and p.suffix in SUFFIXES)
    return found


def key(n: int, seed: int) -> str:
    """A digest of the generator's inputs and arguments: the name of a cached tree."""
    digest = hashlib.sha256(f"{n}/{seed}".encode())
    for path in inputs():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def templates() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"yaml": [], "json": [], "py": [], "toml": []}
    for path in inputs()[1:]:
        out[SUFFIXES[path.suffix]].append(path.read_text(encoding="utf-8"))
    return out


def plan(n: int, seed: int) -> list[tuple[str, str]]:
    """(relative path, role) for every file: role is plain, fp8 or mention."""
    r = random.Random(seed * 7919 + 1)
    kinds = list(MIX)
    weights = [MIX[k][0] for k in kinds]
    n_fp8 = round(n * FP8_SHARE)
    n_mention = round(n * MENTION_SHARE)
    roles = ["fp8"] * n_fp8 + ["mention"] * n_mention + ["plain"] * (n - n_fp8 - n_mention)
    r.shuffle(roles)
    files = []
    per_dir = 40
    for i, role in enumerate(roles):
        if role == "fp8":
            kind = r.choices(list(FP8_MIX), [FP8_MIX[k] for k in FP8_MIX])[0]
        elif role == "mention":
            kind = r.choice(["py", "yaml", "sh", "toml", "json"])
        else:
            kind = r.choices(kinds, weights)[0]
        d = i // per_dir
        folder = f"{WORDS[d % len(WORDS)]}{d // len(WORDS)}/{WORDS[(d * 7) % len(WORDS)]}"
        files.append((f"{folder}/{WORDS[i % len(WORDS)]}_{i}.{kind}", role))
    return files


def generate(out: Path, n: int, seed: int = 0) -> dict[str, int]:
    """Write the tree; returns counts (files, bytes, fp8 files, mention files)."""
    tpl = templates()
    stats = {"files": 0, "bytes": 0, "fp8": 0, "mention": 0}
    for i, (rel, role) in enumerate(plan(n, seed)):
        g = Gen(seed * 1_000_003 + i)
        kind = rel.rsplit(".", 1)[1]
        if role == "fp8":
            text = g.fp8(kind, tpl)
        elif role == "mention":
            text = g.mention(kind)
        else:
            text = g.plain(kind, g.size(kind))
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        path.write_bytes(data)
        stats["files"] += 1
        stats["bytes"] += len(data)
        stats[role] = stats.get(role, 0) + 1
    stats.pop("plain", None)
    (out / "TREE.json").write_text(json.dumps({"key": key(n, seed), "seed": seed, **stats}))
    return stats


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    stats = generate(args.out, args.files, args.seed)
    print(json.dumps(stats), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
