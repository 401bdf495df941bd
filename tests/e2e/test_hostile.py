"""Hostile input: truncated, binary, mis-encoded, deeply nested, aliased, tagged, huge files,
odd paths and links.  Whatever the input, a run ends in findings or a clear FP8001 diagnostic
with a file and a line, the exit code is 0, 1 or 2 as documented, nothing prints a traceback,
nothing in a file is executed, and `--fix` changes only files it has a safe fix for.

The file cases share two command-line runs (`check` and `check --fix`) over one folder, so the
whole module stays fast; in-process cases go through `fp8lint.engine.lint_text`.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fp8lint.cli import main
from fp8lint.diagnostics import Diagnostic, TextEdit
from fp8lint.documents import kind_for
from fp8lint.documents.tree import line_starts
from fp8lint.engine import fix_text, lint_text, run
from fp8lint.settings import RunSettings

from ..conftest import ROOT, run_cli

EXAMPLES = ROOT / "examples"
RISKY_MEGATRON = "MODEL_ARGS:\n  --tensor-model-parallel-size: 2\n  --fp8-format: hybrid\n"
RISKY_NEMO = (
    "trainer:\n  devices: 8\nmodel:\n  transformer_engine: true\n  fp8: true\n"
    "  fp8_hybrid: true\n  fp8_margin: 0\n"
)
RISKY_JSON = '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "margin": -1}}\n'
RISKY_PY = (
    "from transformer_engine.common.recipe import DelayedScaling\n"
    "recipe = DelayedScaling(margin=-1, amax_compute_algo='most_recent')\n"
)
KINDS = {"yaml": RISKY_NEMO, "json": RISKY_JSON, "python": RISKY_PY}


# --------------------------------------------------------------------------- shared checks


def _bounds(text: str) -> list[int]:
    """Length of each line (without its break), with one extra line for the end of a file
    that ends in a line break: positions may point just past the last character."""
    starts = line_starts(text)
    ends = [*starts[1:], len(text)]
    lengths = []
    for start, end in zip(starts, ends, strict=True):
        line = text[start:end]
        lengths.append(len(line.rstrip("\r\n")))
    return lengths


def _inside(lengths: list[int], line: int, column: int) -> bool:
    return 1 <= line <= len(lengths) and 1 <= column <= lengths[line - 1] + 2


def check_spans(text: str, diags: Sequence[Diagnostic]) -> None:
    """Every diagnostic, related location and fix edit lies inside `text` (1-based lines and
    columns; a column may point one past the end of its line, where a line break or the end
    of the file is); edits' character offsets agree with their lines and columns."""
    lengths = _bounds(text)
    for d in diags:
        assert "internal error" not in d.message, d
        assert _inside(lengths, d.line, d.column), (d.line, d.column, d.message, lengths[-3:])
        assert _inside(lengths, d.end_line, d.end_column), (d.end_line, d.end_column, d)
        assert (d.line, d.column) <= (d.end_line, d.end_column), d
        for r in d.related:
            if r.path == d.path:
                assert _inside(lengths, r.line, r.column), (r, d)
        for e in d.fix.edits if d.fix else ():
            check_edit(text, e)


def check_edit(text: str, e: TextEdit) -> None:
    assert 0 <= e.start <= e.end <= len(text), e
    starts = line_starts(text)
    for index, line, column in ((e.start, e.line, e.column), (e.end, e.end_line, e.end_column)):
        assert 1 <= line <= len(starts), e
        assert starts[line - 1] + column - 1 == index, (e, starts[line - 1])


def lint_ok(path: str, text: str, kind: str | None = None) -> list[Diagnostic]:
    """`lint_text` on hostile text: no exception, spans inside the text."""
    kind = kind or kind_for(path)
    assert kind is not None
    diags, _ = lint_text(path, text, kind, RunSettings())
    check_spans(text, diags)
    return diags


def fix_ok(path: str, text: str, kind: str | None = None, unsafe: bool = True) -> str:
    """`fix_text` on hostile text: no exception; a failure leaves the text as it was; a
    change settles (fixing again changes nothing) and still parses."""
    kind = kind or kind_for(path)
    assert kind is not None
    result = fix_text(path, text, kind, RunSettings(), unsafe)
    if result.failure is not None or not result.changed:
        assert result.text == text, result.failure
        return text
    assert not any(d.code == "FP8001" for d in lint_ok(path, result.text, kind))
    again = fix_text(path, result.text, kind, RunSettings(), unsafe)
    assert again.failure is None and again.text == result.text, again.failure
    return result.text


def codes(diags: Sequence[Diagnostic]) -> set[str]:
    return {d.code for d in diags}


def examples() -> list[Path]:
    return sorted(p for p in EXAMPLES.rglob("*") if p.is_file() and kind_for(p.name))


def call_main(*argv: str) -> tuple[int, str, str]:
    """`fp8lint` in this process (fast): exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def cli_ok(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    r = run_cli(*args, cwd=cwd, process=True)  # hostile input: the real command line
    assert "Traceback" not in r.stderr, r.stderr
    assert "internal error" not in r.stderr + r.stdout, r.stderr
    assert r.returncode in (0, 1, 2), (r.returncode, r.stderr)
    return r


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(root: Path) -> dict[str, str]:
    """Content hash of every regular file under `root` (links are not followed)."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath, name)
            if p.is_symlink() or not p.is_file():
                continue
            try:
                out[os.fsdecode(p.relative_to(root))] = digest(p)
            except PermissionError:
                continue
    return out


# --------------------------------------------------------------------------- truncation


def test_examples_truncated_at_every_byte_lint_and_fix() -> None:
    """Every prefix of every bundled example: findings or FP8001, never an exception; and
    `fix_text` on the prefix either fixes it cleanly or leaves it alone."""
    files = examples()
    assert len(files) >= 6
    for path in files:
        data = path.read_bytes()
        kind = kind_for(path.name)
        for i in range(len(data) + 1):
            try:
                text = data[:i].decode("utf-8")
            except UnicodeDecodeError:
                continue  # mid-character: the CLI test below reads these bytes
            lint_ok(path.name, text, kind)
            fix_ok(path.name, text, kind)


def test_corpus_truncated_at_line_ends(corpus: Path) -> None:
    """Real third-party configs cut at a sample of line ends and mid-line points."""
    files = sorted(p for p in corpus.rglob("*") if kind_for(p.name) in ("yaml", "json"))
    for path in files[::4]:
        text = path.read_text(encoding="utf-8")
        cuts = sorted({*line_starts(text)[::3], *range(0, len(text), 997)})
        for i in cuts:
            lint_ok(path.name, text[:i])


def test_truncations_through_the_cli(tmp_path: Path) -> None:
    """A folder of byte-truncated copies of each example, linted and fixed by the real
    command line: exit 1, no traceback, every FP8001 with a file and line, and `--fix` leaves
    every file that does not parse byte-for-byte as it was."""
    for path in examples():
        data = path.read_bytes()
        step = max(1, len(data) // 40)
        for i in range(0, len(data) + 1, step):
            (tmp_path / f"{path.stem}_{i:04d}{path.suffix}").write_bytes(data[:i])
    before = snapshot(tmp_path)
    r = cli_ok("check", ".", "--output-format", "json", cwd=tmp_path)
    assert r.returncode == 1
    found = json.loads(r.stdout)
    broken = {d["filename"] for d in found if d["code"] == "FP8001"}
    fixable = {
        d["filename"]
        for d in found
        if d["fix"] and d["fix"]["applicability"] != "display-only" and d["fix"]["edits"]
    }
    assert broken, "some truncation must fail to parse"
    for d in found:
        assert d["location"]["row"] >= 1 and d["location"]["column"] >= 1, d
        assert (tmp_path / d["filename"]).is_file(), d
    r = cli_ok("check", ".", "--fix", "--unsafe-fixes", "-q", cwd=tmp_path)
    after = snapshot(tmp_path)
    changed = {name for name in before if before[name] != after.get(name)}
    assert not changed & broken, sorted(changed & broken)
    assert changed <= fixable, sorted(changed - fixable)
    assert set(after) == set(before)  # no temporary files left behind
    for name in changed:  # every fixed file still parses
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert "FP8001" not in codes(lint_ok(name, text))


# --------------------------------------------------------------------------- the zoo


@dataclass(frozen=True)
class Case:
    """One file on disk.  `expect`: "clean" (no diagnostic), "findings" (rule findings, no
    FP8001), "FP8001:<text in the message>" (with `line`, when given, and nothing else), or
    "only:<code>" (that code and nothing else).
    `fixable`: --fix may change it."""

    name: str
    data: bytes
    expect: str
    line: int | None = None
    fixable: bool = False


def _rand(n: int, seed: int, nul: bool) -> bytes:
    rng = random.Random(seed)
    data = bytearray(rng.randbytes(n))
    if not nul:
        data = bytearray(b if b else 0x80 for b in data)
    data[n // 2 : n // 2 + 3] = b"fp8"
    return bytes(data)


def _bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


DEEP = 10_000
MARKER = "PWNED"  # a file that a tag or a Python statement would create if executed


def zoo_cases() -> list[Case]:
    utf16_nemo = RISKY_NEMO.replace("\n", "\r\n")
    cases = [
        # empty and comment-only
        Case("empty.yaml", b"", "clean"),
        Case("empty.json", b"", "clean"),
        Case("empty.py", b"", "clean"),
        Case("bom_only.yaml", codecs.BOM_UTF8, "clean"),
        Case("comments.yaml", b"# fp8: true\n# model:\n#   fp8_margin: 0\n", "clean"),
        Case("comments.py", b"# fp8 = True\n# DelayedScaling(margin=-1)\n", "clean"),
        Case("comments.json", b"// fp8\n", "FP8001:JSON syntax error", 1),
        Case("blank.yaml", b"\n\n   \n\n# fp8\n", "clean"),
        Case("blank_tab.yaml", b"\n\t\n# fp8\n", "FP8001:YAML", 2),  # PyYAML rejects it too
        # encodings
        Case("bad_utf8.yaml", b"model:\n  fp8: true\n  name: caf\xe9\n", "FP8001:UTF-8", 3),
        Case("bad_utf8.json", b'{"fp8": "\xc3\x28"}', "FP8001:UTF-8", 1),
        Case("bad_utf8.py", b"# fp8\nx = '\xff'\n", "FP8001:UTF-8", 2),
        Case(
            "utf16le.yaml",
            codecs.BOM_UTF16_LE + utf16_nemo.encode("utf-16-le"),
            "findings",
            fixable=True,
        ),
        Case(
            "utf16be.json",
            codecs.BOM_UTF16_BE + RISKY_JSON.encode("utf-16-be"),
            "findings",
            fixable=True,
        ),
        Case(
            "utf16_odd.yaml",
            codecs.BOM_UTF16_LE + "fp8: 1\n".encode("utf-16-le") + b"\x00",
            "FP8001:UTF-16",
        ),
        Case(
            "utf32.py", codecs.BOM_UTF32_LE + RISKY_PY.encode("utf-32-le"), "findings", fixable=True
        ),
        Case("utf16_nobom.yaml", RISKY_NEMO.encode("utf-16-le"), "clean"),  # no BOM: not text
        Case("utf8bom.yaml", codecs.BOM_UTF8 + RISKY_NEMO.encode(), "findings", fixable=True),
        Case("utf8bom.json", codecs.BOM_UTF8 + RISKY_JSON.encode(), "findings", fixable=True),
        Case("utf8bom.py", codecs.BOM_UTF8 + RISKY_PY.encode(), "findings", fixable=True),
        Case("crlf.yaml", RISKY_NEMO.replace("\n", "\r\n").encode(), "findings", fixable=True),
        Case("crlf.json", RISKY_JSON.replace("\n", "\r\n").encode(), "findings", fixable=True),
        Case("crlf.py", RISKY_PY.replace("\n", "\r\n").encode(), "findings", fixable=True),
        Case("cr.yaml", RISKY_NEMO.replace("\n", "\r").encode(), "findings", fixable=True),
        Case("cr.py", RISKY_PY.replace("\n", "\r").encode(), "findings", fixable=True),
        Case(
            "mixed_eol.yaml",
            b"model:\r\n  transformer_engine: true\r  fp8: true\n"
            b"  fp8_hybrid: true\r\n  fp8_margin: 0\n",
            "findings",
            fixable=True,
        ),
        Case("tab_indent.yaml", b"model:\n\tfp8: true\n", "FP8001:YAML", 2),
        Case("tab_value.yaml", RISKY_NEMO.replace(": ", ":\t").encode(), "findings", fixable=True),
        Case("nul.yaml", b"fp8: true\n\x00\n", "FP8001:binary"),
        # nesting
        Case("deep_flow.yaml", b"fp8: " + b"[" * DEEP + b"]" * DEEP, "FP8001:nesting", 1),
        Case("deep_map.yaml", b"fp8: " + b"{a: " * DEEP + b"1" + b"}" * DEEP, "FP8001:nesting"),
        Case("deep_block.yaml", b"fp8:\n  " + b"- " * DEEP + b"x\n", "FP8001:nesting", 2),
        Case("deep_unclosed.yaml", b"fp8: " + b"[" * DEEP, "FP8001"),
        Case("deep.json", b'{"fp8": ' + b"[" * DEEP + b"]" * DEEP + b"}", "FP8001:nesting"),
        Case(
            "deep_map.json",
            b'{"fp8": ' + b'{"a": ' * DEEP + b"1" + b"}" * DEEP + b"}",
            "FP8001:nesting",
        ),
        Case("deep_unclosed.json", b'{"fp8": ' + b"[" * DEEP, "FP8001"),
        # (a recipe name, so that the Python source parses the file at all)
        Case(
            "deep_paren.py", b"DelayedScaling\nfp8 = " + b"(" * DEEP + b"1" + b")" * DEEP, "FP8001"
        ),
        Case("deep_list.py", b"DelayedScaling\nfp8 = " + b"[" * DEEP + b"]" * DEEP, "FP8001"),
        Case(
            "deep_call.py",
            (
                RISKY_PY + "r = DelayedScaling(margin=" + "f(" * DEEP + "0" + ")" * DEEP + ")\n"
            ).encode(),
            "FP8001",
        ),
        Case("deep_binop.py", b"fp8 = 1" + b" + 1" * DEEP + b"\n", "any"),
        Case(
            "deep_if.py",
            (
                b"DelayedScaling\nfp8 = 1\n"
                + b"".join(b" " * i + b"if x:\n" for i in range(120))
                + b" " * 120
                + b"pass\n"
            ),
            "FP8001",
        ),
        # aliases, tags, duplicates
        Case("bomb.yaml", (RISKY_MEGATRON + _bomb()).encode(), "findings", fixable=True),
        Case(
            "bomb_value.yaml",
            (_bomb() + "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: *i\n").encode(),
            "findings",
            fixable=True,
        ),
        # an `fp8` key of no known family: only the FP8406 record, read without looping
        Case("recursive.yaml", b"fp8: &a [*a]\n", "only:FP8406"),
        Case("recursive_map.yaml", b"model: &m\n  fp8: true\n  self: *m\n  <<: *m\n", "any"),
        Case("recursive_merge.yaml", b"a: &a\n  <<: *a\n  fp8: true\n", "any"),
        Case(
            "recursive_model.yaml",  # the mapping an alias reads: advice, never edited
            b"MODEL_ARGS: &m\n  --fp8-format: hybrid\n  --x: *m\n",
            "findings",
        ),
        # issue 20: what an alias reads, and a here-document's body, are never edited
        Case(
            "aliased_mapping.yaml",
            b"base: &b\n  fp8: true\n  fp8_hybrid: true\n  fp8_margin: 0\n"
            b"model: *b\nablation_no_fp8: *b\n",
            "findings",
        ),
        Case(
            "aliased_flags.yaml",
            b"common: &m {--fp8-format: hybrid, --fp8-amax-compute-algo: max, "
            b"--fp8-amax-history-len: 1}\nMODEL_ARGS: *m\nABLATION_ARGS: *m\n",
            "findings",
        ),
        Case(
            "heredoc.sh",
            b"cat > job.sh <<EOF\npython pretrain_gpt.py --fp8-format hybrid "
            b"--fp8-amax-history-len 1\nEOF\nsbatch job.sh\n",
            "findings",
        ),
        Case("undefined_alias.yaml", b"fp8: *nowhere\n", "FP8001:alias", 1),
        Case(
            "dup_keys.yaml",
            b"MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: -1\n"
            b"  --fp8-margin: 0\n  --fp8-amax-history-len: 1024\n"
            b"  --fp8-amax-compute-algo: max\n",
            "clean",
        ),  # the last one wins
        Case(
            "dup_keys.json",
            b'{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", '
            b'"margin": -1, "margin": 0, "amax_history_len": 1024, "amax_compute_algo": '
            b'"max"}}',
            "clean",
        ),
        Case(
            "dup_keys_last_bad.json",
            b'{"mixed_precision": "fp8", "fp8_config": '
            b'{"backend": "TE", "margin": 0, "margin": -1}}',
            "findings",
            fixable=True,
        ),
        Case(
            "python_tags.yaml",
            textwrap.dedent(f"""\
            model:
              transformer_engine: true
              fp8: !!python/object/apply:os.system ["touch {MARKER}"]
              fp8_hybrid: !!python/object/apply:builtins.open ["{MARKER}", "w"]
              fp8_margin: !!python/object/new:pathlib.Path ["{MARKER}"]
              fp8_interval: !!python/name:os.system
              name: !include other.yaml
            """).encode(),
            "any",
        ),
        Case(
            "python_exec.py",
            textwrap.dedent(f"""\
            import os
            open("{MARKER}", "w").write("fp8")
            os.system("touch {MARKER}")
            exec("import os; os.system('touch {MARKER}')")
            from transformer_engine.common.recipe import DelayedScaling
            recipe = DelayedScaling(margin=__import__("os").system("touch {MARKER}"))
            """).encode(),
            "any",
        ),
        # numbers that do not fit
        Case(
            "huge_int.yaml",
            b"MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: "
            + b"9" * 5000
            + b"\n",
            "findings",
            fixable=True,
        ),
        Case(
            "huge_hex.yaml",
            b"MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: "
            + b"0x"
            + b"f" * 5000
            + b"\n",
            "findings",
            fixable=True,
        ),
        Case(
            "huge_int.json",
            b'{"mixed_precision": "fp8", "fp8_config": {"margin": ' + b"9" * 5000 + b"}}",
            "FP8001:JSON",
            1,
        ),
        Case(
            "nan.json",
            b'{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", '
            b'"margin": NaN, "amax_history_len": Infinity, "interval": -Infinity}}',
            "findings",
        ),
        Case(
            "lone_surrogate.json",
            b'{"mixed_precision": "fp8", "fp8_config": '
            b'{"backend": "\\udfff", "fp8_format": "\\ud83d"}}',
            "findings",
        ),
        # binary content under config names
        Case("random_nul.yaml", _rand(4096, 1, nul=True), "FP8001:binary"),
        Case("random_nul.json", _rand(4096, 2, nul=True), "FP8001:binary"),
        Case("random_nul.py", _rand(4096, 3, nul=True), "FP8001:binary"),
        Case("random_high.yaml", _rand(4096, 4, nul=False), "FP8001"),
        Case("random_high.py", _rand(4096, 5, nul=False), "FP8001"),
        Case("png.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR fp8" + bytes(200), "FP8001:binary"),
        Case("elf.py", b"\x7fELF\x02\x01\x01" + bytes(9) + b"fp8" + bytes(100), "FP8001:binary"),
        Case("gzip.yaml", b"\x1f\x8b\x08\x00fp8" + _rand(512, 6, nul=False), "FP8001"),
        Case("no_fp8_binary.yaml", bytes(range(256)) * 4, "clean"),  # prefilter: not read
        # names
        Case("sp ace/dir été/mödel config.yaml", RISKY_MEGATRON.encode(), "findings", fixable=True),
        Case("dir.yaml/inner.yaml", RISKY_MEGATRON.encode(), "findings", fixable=True),
        Case("-dash.yaml", RISKY_MEGATRON.encode(), "findings", fixable=True),
    ]
    if sys.platform.startswith("linux"):  # a name that is not UTF-8
        cases.append(Case("\udcff\udcfe.yaml", RISKY_MEGATRON.encode(), "findings", fixable=True))
    return cases


LINKS = {  # name -> target (relative), and what to expect
    "loop.yaml": ("loop.yaml", "FP8001:symbolic links"),
    "ping.yaml": ("pong.yaml", "FP8001:symbolic links"),
    "pong.yaml": ("ping.yaml", "FP8001:symbolic links"),
    "dangling.yaml": ("missing/nowhere.yaml", "FP8001:no such file"),
    "link_to_risky.yaml": ("crlf.yaml", "same"),  # one file: linted under its own name
    "selfdir": (".", "walk"),  # a directory link back up: not followed
}
if os.path.exists("/dev/zero"):  # endless bytes under a config name, out of the repository
    LINKS["zeros.yaml"] = ("/dev/zero", "outside")


@dataclass
class Zoo:
    root: Path
    check: subprocess.CompletedProcess[str]
    found: dict[str, list[dict[str, Any]]]
    before: dict[str, str]
    after: dict[str, str]
    fixed_run: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zoo]:
    root = tmp_path_factory.mktemp("zoo")
    for case in zoo_cases():
        path = root / case.name  # str paths carry undecodable bytes as surrogates
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(case.data)
    for name, (target, _) in LINKS.items():
        os.symlink(target, root / name)
    before = snapshot(root)
    check = run_cli("check", ".", "--output-format", "json", cwd=root, process=True)
    found: dict[str, list[dict[str, Any]]] = {}
    if check.stdout.strip().startswith("["):
        for d in json.loads(check.stdout):
            found.setdefault(d["filename"], []).append(d)
    fixed_run = run_cli("check", ".", "--fix", "--unsafe-fixes", "-q", cwd=root, process=True)
    after = snapshot(root)
    yield Zoo(root, check, found, before, after, fixed_run)
    assert not (root / MARKER).exists(), "a tag or a Python statement was executed"


def test_zoo_runs_cleanly(zoo: Zoo) -> None:
    for r in (zoo.check, zoo.fixed_run):
        assert "Traceback" not in r.stderr, r.stderr
        assert "internal error" not in r.stderr + r.stdout, r.stderr + r.stdout[-2000:]
        assert r.returncode == 1, (r.returncode, r.stderr)  # findings (FP8001 is an error)
    assert not (zoo.root / MARKER).exists()
    for name, diags in zoo.found.items():
        for d in diags:
            assert "internal error" not in d["message"], (name, d["message"])


@pytest.mark.parametrize("case", zoo_cases(), ids=lambda c: c.name.encode("ascii", "replace"))
def test_zoo_case(zoo: Zoo, case: Case) -> None:
    diags = zoo.found.get(case.name, [])
    got = {d["code"] for d in diags}
    if case.expect == "clean":
        assert not diags, diags
    elif case.expect == "findings":
        assert got and "FP8001" not in got, diags
    elif case.expect.startswith("FP8001"):
        assert got == {"FP8001"}, diags
        want = case.expect.partition(":")[2]
        assert all(want in d["message"] for d in diags), (want, diags)
        if case.line is not None:
            assert [d["location"]["row"] for d in diags] == [case.line], diags
    elif case.expect.startswith("only:"):
        assert got == {case.expect.partition(":")[2]}, diags
    else:
        assert case.expect == "any"
    for d in diags:
        assert d["location"]["row"] >= 1 and d["location"]["column"] >= 1
    changed = zoo.before.get(case.name) != zoo.after.get(case.name)
    assert case.name in zoo.after, "the file disappeared"
    if changed:
        assert case.fixable, f"--fix changed {case.name}"
    if case.fixable:
        assert changed, f"--fix did not fix {case.name}"


def test_fixed_files_keep_their_encoding_and_line_endings(zoo: Zoo) -> None:
    root = zoo.root
    data = (root / "utf16le.yaml").read_bytes()
    assert data.startswith(codecs.BOM_UTF16_LE)
    text = data[2:].decode("utf-16-le")
    assert "fp8_amax_history_len" in text and "\n" not in text.replace("\r\n", "")
    assert (root / "utf16be.json").read_bytes().startswith(codecs.BOM_UTF16_BE)
    assert (root / "utf32.py").read_bytes().startswith(codecs.BOM_UTF32_LE)
    for name in ("utf8bom.yaml", "utf8bom.json", "utf8bom.py"):
        assert (root / name).read_bytes().startswith(codecs.BOM_UTF8), name
        assert not (root / name).read_bytes()[3:].startswith(codecs.BOM_UTF8), name
    cr = (root / "cr.yaml").read_bytes()
    assert b"\n" not in cr and cr.count(b"\r") > RISKY_NEMO.count("\n")
    crlf = (root / "crlf.py").read_bytes()
    assert b"\n" not in crlf.replace(b"\r\n", b"")
    # the fixed files parse and report nothing fixable any more
    r = cli_ok("check", "utf16le.yaml", "cr.yaml", "crlf.py", "--output-format", "json", cwd=root)
    left = json.loads(r.stdout)
    assert not [d for d in left if d["code"] == "FP8001"], left
    assert not [d for d in left if d["fix"] and d["fix"]["applicability"] == "safe"], left


def test_links(zoo: Zoo) -> None:
    for name, (_target, expect) in LINKS.items():
        diags = zoo.found.get(name, [])
        if expect == "walk":
            assert not any(f.startswith(name + "/") for f in zoo.found), "followed a dir link"
        elif expect == "same":
            assert not diags and zoo.found.get(_target), (name, diags)
        elif expect == "outside":
            assert not diags
            assert f"warning: {name}: a symbolic link to a file outside" in zoo.check.stderr
        else:
            want = expect.partition(":")[2]
            assert [d["code"] for d in diags] == ["FP8001"], (name, diags)
            assert want in diags[0]["message"], diags
        assert (zoo.root / name).is_symlink(), f"{name} is no longer a link"


def test_explicit_link_loop_and_missing_files(tmp_path: Path) -> None:
    os.symlink("loop.yaml", tmp_path / "loop.yaml")
    code, out, err = call_main(
        "check", str(tmp_path / "loop.yaml"), "missing.yaml", "--output-format", "json"
    )
    assert code == 1 and not err, err
    found = json.loads(out)
    assert [d["code"] for d in found] == ["FP8001", "FP8001"], found
    assert {Path(d["filename"]).name for d in found} == {"loop.yaml", "missing.yaml"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_named_pipe_with_a_config_name_does_not_block(tmp_path: Path) -> None:
    """A FIFO called `x.yaml` must not stall the run waiting for a writer."""
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "risky.yaml").write_text(RISKY_MEGATRON)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "fp8lint", "check", ".", "-q"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,  # a blocked read never ends; a loaded machine may take seconds
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            "engine.read_file blocks on a FIFO: open with O_NONBLOCK, refuse non-regular files"
        )
    assert "Traceback" not in r.stderr
    assert "risky.yaml" in r.stdout


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can read any file"
)
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.yaml"
    path.write_text(RISKY_MEGATRON)
    path.chmod(0)
    try:
        code, out, err = call_main("check", str(tmp_path), "--output-format", "json")
        assert code == 1 and not err
        [d] = json.loads(out)
        assert d["code"] == "FP8001" and "permission denied" in d["message"]
        code, _out, err = call_main("check", str(tmp_path), "--fix", "--unsafe-fixes")
        assert "internal error" not in err
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_text() == RISKY_MEGATRON


def test_read_only_file_is_not_fixed(tmp_path: Path) -> None:
    path = tmp_path / "ro.yaml"
    path.write_text(RISKY_MEGATRON)
    path.chmod(stat.S_IRUSR)
    try:
        code, _out, err = call_main("check", str(tmp_path), "--fix", "--unsafe-fixes", "-q")
        assert "internal error" not in err
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    if os.geteuid() != 0:  # root may write anyway
        assert code == 1 and "cannot write" in err, err
        assert path.read_text() == RISKY_MEGATRON
    else:
        assert code in (0, 1)


# --------------------------------------------------------------------------- in-process cases


@pytest.mark.parametrize("kind", ["yaml", "json", "python"])
def test_ten_thousand_deep(kind: str) -> None:
    texts = {
        "yaml": [
            "fp8: " + "[" * DEEP + "]" * DEEP,
            "fp8:\n" + "- " * DEEP + "x\n",
            "fp8: " + "{a: " * DEEP + "1" + "}" * DEEP,
        ],
        "json": [
            '{"fp8": ' + "[" * DEEP + "]" * DEEP + "}",
            '{"fp8": ' + '{"a": ' * DEEP + "1" + "}" * DEEP + "}",
        ],
        "python": [
            "fp8 = " + "(" * DEEP + "1" + ")" * DEEP,
            "fp8 = " + "[" * DEEP + "]" * DEEP,
            RISKY_PY + "r = DelayedScaling(margin=" + "f(" * DEEP + "0" + ")" * DEEP + ")\n",
            "fp8 = " + "-" * DEEP + "1",
            "fp8 = " + "lambda: " * DEEP + "1",
            "fp8 = a" + ".b" * DEEP,
            "fp8 = 1" + " + 1" * DEEP,
        ],
    }[kind]
    for text in texts:
        diags = lint_ok("deep." + {"python": "py"}.get(kind, kind), text, kind)
        fix_ok("deep", text, kind)
        assert all(d.code == "FP8001" for d in diags), diags


def test_alias_bomb_is_not_expanded() -> None:
    text = RISKY_MEGATRON + _bomb()
    assert "FP8101" in codes(lint_ok("bomb.yaml", text))
    fixed = fix_ok("bomb.yaml", text)
    assert fixed.endswith(_bomb())  # the bomb is untouched, byte for byte
    # a bomb as the FP8 value itself: read as "not a single value", never expanded
    text = _bomb() + "MODEL_ARGS:\n  --fp8-format: *i\n  --fp8-margin: *i\n"
    lint_ok("bomb_value.yaml", text)
    fix_ok("bomb_value.yaml", text)


@pytest.mark.parametrize(
    "text",
    [
        "fp8: &a [*a]\n",
        "fp8: &a {x: *a}\n",
        "a: &a\n  <<: *a\n  fp8: true\n",
        "model: &m\n  fp8: true\n  transformer_engine: true\n  fp8_hybrid: *m\n  <<: *m\n",
        "model: &m\n  fp8: true\n  transformer_engine: true\n  fp8_margin: ${model}\n"
        "  fp8_hybrid: ${model.fp8_margin}\n  x: *m\n",
        "model:\n  fp8: true\n  transformer_engine: true\n  fp8_hybrid: true\n"
        "  a: ${model.b}\n  b: ${model.a}\n  fp8_margin: ${model.a}\n",
        "model:\n  fp8: true\n  transformer_engine: true\n  fp8_hybrid: true\n"
        "  fp8_margin: ${model.fp8_margin}\n",
        "MODEL_ARGS: &m\n  --fp8-format: hybrid\n  --fp8-margin: *m\n  <<: *m\n",
        "mixed_precision: fp8\nfp8_config: &c\n  backend: TE\n  margin: *c\n  <<: *c\n",
    ],
)
def test_recursive_aliases_and_interpolations(text: str) -> None:
    diags = lint_ok("recursive.yaml", text)
    assert "FP8001" not in codes(diags), diags
    fix_ok("recursive.yaml", text)


_NEMO_ON = "model:\n  fp8: true\n  transformer_engine: true\n  fp8_hybrid: true\n"


@pytest.mark.parametrize(
    "text",
    [
        # string doubling: 10 x 2^30 characters if expanded
        "b0: xxxxxxxxxx\n"
        + "".join(f"b{i}: ${{b{i - 1}}}${{b{i - 1}}}\n" for i in range(1, 31))
        + _NEMO_ON
        + "  fp8_amax_compute_algo: ${b30}\n",
        # a chain of 3,000 references, and products of 4,000-digit numbers
        "c0: 1\n"
        + "".join(f"c{i}: ${{c{i - 1}}}\n" for i in range(1, 3000))
        + _NEMO_ON
        + "  fp8_margin: ${c2999}\n",
        "p0: "
        + "9" * 4000
        + "\n"
        + "".join(f"p{i}: ${{multiply:${{p{i - 1}}},${{p{i - 1}}}}}\n" for i in range(1, 40))
        + _NEMO_ON
        + "  fp8_margin: ${p39}\n",
        # keys with dots, brackets, odd characters; non-string keys; another document
        '"a.b": 1\n"a[0]": 2\n"${x}": 3\n? [k]\n: 4\n1: 5\n~: 6\n'
        + _NEMO_ON
        + "  fp8_margin: ${a.b}\n  fp8_interval: ${1}\n  fp8_amax_history_len: ${a[0]}\n",
        "x: 1\n---\n" + _NEMO_ON + "  fp8_margin: ${x}\n",
        # merge keys and anchors, interpolations through them
        "base: &b\n  h: 1024\n  m: ${.h}\n" + _NEMO_ON + "  <<: *b\n"
        "  fp8_amax_history_len: ${model.m}\n  fp8_margin: ${base.m}\n",
        # grammar the parser rejects, and nesting
        _NEMO_ON + "  fp8_margin: ${a:${b:${c:${d:${e}}}}}\n  fp8_interval: ${\n",
        _NEMO_ON + "  fp8_margin: '" + "${" * 3000 + "'\n",
    ],
)
def test_hostile_interpolations_are_unknown_or_resolved_never_a_crash(text: str) -> None:
    diags = lint_ok("interp.yaml", text)
    assert "FP8001" not in codes(diags), diags
    fix_ok("interp.yaml", text)


@pytest.mark.parametrize(
    ("name", "text", "expect"),
    [
        # YAML and JSON loaders keep the last duplicate; so does fp8lint
        (
            "d.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: -1\n  --fp8-margin: 0\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            set(),
        ),
        (
            "d.yaml",
            "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 0\n  --fp8-margin: -1\n"
            "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n",
            {"FP8104"},
        ),
        (
            "d.json",
            '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "margin": -1, '
            '"margin": 0}}',
            set(),
        ),
        (
            "d.json",
            '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "margin": 0, '
            '"margin": -1}}',
            {"FP8104"},
        ),
    ],
)
def test_duplicate_keys_last_one_wins(name: str, text: str, expect: set[str]) -> None:
    diags = lint_ok(name, text)
    assert codes(diags) & {"FP8104"} == expect, diags
    fixed = fix_ok(name, text)
    if expect:  # the fix edits the duplicate that counts, not the dead one
        assert "FP8104" not in codes(lint_ok(name, fixed))


def test_python_tags_are_text_and_nothing_runs(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    for case in zoo_cases():
        if case.name in ("python_tags.yaml", "python_exec.py"):
            text = case.data.decode()
            lint_ok(case.name, text)
            fix_ok(case.name, text)
    # every tagged value is unknown: no finding reads it as true/false/a number
    text = textwrap.dedent("""\
        model:
          transformer_engine: true
          fp8: true
          fp8_hybrid: true
          fp8_margin: !!python/object/apply:builtins.int ["-5"]
        """)
    assert "FP8104" not in codes(lint_ok("t.yaml", text))
    assert not list(tmp_path.iterdir()), "something was written"


@pytest.mark.parametrize(
    "text",
    [
        'model:\n  fp8: true\n  transformer_engine: true\n  fp8_margin: "\u00b2"\n',
        "model:\n  fp8: true\n  transformer_engine: true\n  l: [1]\n"
        "  fp8_margin: ${model.l.\u00b2}\n",
        "model:\n  fp8: true\n  transformer_engine: true\n  l: [1]\n  fp8_margin: ${model.l."
        + "9" * 5000
        + "}\n",
        'MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: "\u00b2"\n'
        '  --tensor-model-parallel-size: "\u00b9"\n',
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 0x" + "f" * 5000 + "\n",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1" + ":59" * 3000 + "\n",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --tensor-model-parallel-size: 0x"
        + "f" * 3000
        + "\n  --hidden-size: 0x"
        + "f" * 3000
        + "\n  --num-attention-heads: 0x"
        + "f" * 3000
        + "\n",
        'mixed_precision: fp8\nnum_processes: "\u00b2"\nfp8_config:\n  backend: TE\n'
        '  margin: "\u00b3"\n',
        "trainer:\n  devices: 1e308\n  num_nodes: .inf\nmodel:\n  fp8: true\n  fp8_hybrid: true\n"
        "  transformer_engine: true\n  tensor_model_parallel_size: .nan\n  hidden_size: 1e308\n",
    ],
    ids=range(9),
)
def test_numbers_that_do_not_fit_yaml(text: str) -> None:
    lint_ok("n.yaml", text)
    fix_ok("n.yaml", text)


@pytest.mark.parametrize(
    "text",
    [
        RISKY_PY.replace("margin=-1", "margin=" + "9" * 4200),
        RISKY_PY.replace("margin=-1", "margin=-" + "9" * 4200),
        RISKY_PY.replace("margin=-1", "amax_history_len=0x" + "f" * 5000),
        RISKY_PY.replace("margin=-1", "margin=1e400, amax_history_len=" + "9" * 5000),
        RISKY_PY + "M = 0x" + "f" * 5000 + "\nr = DelayedScaling(margin=M)\n",
    ],
    ids=range(5),
)
def test_numbers_that_do_not_fit_python(text: str) -> None:
    lint_ok("n.py", text)
    fix_ok("n.py", text)


def test_json_extensions_and_escapes() -> None:
    text = (
        '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "margin": NaN, '
        '"amax_history_len": Infinity, "amax_compute_algo": "max"}}'
    )
    diags = lint_ok("nan.json", text)
    messages = " ".join(d.message for d in diags)
    assert "amax_history_len` is Infinity" in messages or "Infinity" in messages, messages
    assert "margin` is amax_history_len" not in messages  # tokens stay aligned
    text = '{"mixed_precision": "fp8", "fp8_config": {"backend": "\\udfff", "fp8_format": "x"}}'
    for d in lint_ok("s.json", text):
        d.message.encode("utf-8")  # printable


def test_large_margin_does_not_break_rules() -> None:
    """A margin far outside any real recipe (2**20000 is not printable as an int)."""
    texts = [
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 20000\n",
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: 1100\n"
        "  --fp8-amax-history-len: 1024\n",
        RISKY_PY.replace("margin=-1", "margin=20000"),
    ]
    failures = []
    for text in texts:
        try:
            lint_ok("m.py" if "import" in text else "m.yaml", text)
        except (ValueError, OverflowError) as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
    if failures:
        pytest.fail(
            "rules format 2**margin without a bound (FP8103/FP8105/FP8106): " + failures[0][:120]
        )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "t.toml",
            "[parallelism]\ntensor_parallel_degree = " + "9" * 5000 + "\n[float8]\n"
            'recipe_name = "rowwise"\n',
        ),
        ("t.toml", "fp8 = " + "[" * DEEP + "]" * DEEP),
        ("s.sh", 'ARGS=(--fp8-format )pretrain_t.py "${ARGS[@]}" "'),
        ("s.sh", 'pretrain_t.py "$}" --fp8"'),
        ("s.sh", "python pretrain_gpt.py --fp8-format hybrid --fp8-margin " + "9" * 5000 + "\n"),
        ("s.sh", "python train.py model.fp8_margin=" + "9" * 5000 + " model.fp8=true\n"),
    ],
    ids=[
        "toml-long-int",
        "toml-deep",
        "sh-unclosed-array",
        "sh-unclosed-quote",
        "sh-long-int",
        "sh-hydra-long-int",
    ],
)
def test_toml_and_shell_sources(name: str, text: str) -> None:
    """Found by fuzzing: a long TOML integer escaped tomllib as ValueError, and an unclosed
    shell quote or array put fix edits past the end of the file."""
    lint_ok(name, text)
    fix_ok(name, text)


# --------------------------------------------------------------------------- size


BIG_SCRIPT = textwrap.dedent("""\
    import json, resource, subprocess, sys
    r = subprocess.run([sys.executable, "-m", "fp8lint", *sys.argv[1:]], capture_output=True,
                       text=True, timeout=300)
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr,
                      "maxrss_kb": use.ru_maxrss, "cpu_s": use.ru_utime + use.ru_stime}))
    """)


def test_fifty_megabyte_files(tmp_path: Path) -> None:
    """50 MB files with FP8 settings in every format: a clear "file too large" FP8001, in
    bounded memory (the read stops at the limit); resource use measured in a child."""
    line = "  fp8_margin_%07d: 0  # fp8 padding to make a huge file\n"
    chunk = "".join(line % i for i in range(20_000))
    reps = 50 * 1024 * 1024 // len(chunk) + 1
    (tmp_path / "huge.yaml").write_text("model:\n  fp8: true\n" + chunk * reps)
    (tmp_path / "huge.json").write_text('{"fp8": "' + "x" * (50 * 1024 * 1024) + '"}')
    (tmp_path / "huge.py").write_text("fp8 = 1\n" + "# fp8 padding\n" * (4 * 1024 * 1024))
    (tmp_path / "small.yaml").write_text(RISKY_MEGATRON)
    r = subprocess.run(
        [sys.executable, "-c", BIG_SCRIPT, "check", ".", "--output-format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert "Traceback" not in res["stderr"], res["stderr"]
    assert res["rc"] == 1
    for name in ("huge.yaml", "huge.json", "huge.py"):
        (tmp_path / name).unlink()  # pytest keeps recent temporary folders: free 150 MB now
    found = {d["filename"]: d for d in json.loads(res["stdout"])}
    for name in ("huge.yaml", "huge.json", "huge.py"):
        assert found[name]["code"] == "FP8001", found[name]
        assert "file too large" in found[name]["message"]
    assert found["small.yaml"]["code"] == "FP8101"
    # one file is read at a time, and only up to the limit (4 MiB): far below 50 MB x 3
    assert res["maxrss_kb"] < 300 * 1024, res
    assert res["cpu_s"] < 120, res  # not a timing check: a generous bound against hangs


def test_size_limit_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(RISKY_MEGATRON * 1)
    (tmp_path / "b.yaml").write_text("# " + "fp8 " * 1000 + "\n" + RISKY_MEGATRON)
    result = run([str(tmp_path)], RunSettings(max_bytes=2048))
    by_name = {Path(d.path).name: d for d in result.diagnostics}
    assert by_name["a.yaml"].code == "FP8101"
    assert by_name["b.yaml"].code == "FP8001" and "file too large" in by_name["b.yaml"].message


# --------------------------------------------------------------------------- paths


def test_directory_where_a_file_is_expected(tmp_path: Path, monkeypatch: Any) -> None:
    """Directories given to options that take a file: exit 2 and one line naming the path."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.yaml").mkdir()
    (tmp_path / "cfg").mkdir()
    (tmp_path / "risky.yaml").write_text(RISKY_MEGATRON)
    for argv in (
        ("check", "risky.yaml", "--config", "cfg"),
        ("check", "risky.yaml", "-o", "cfg"),
        ("check", "risky.yaml", "--baseline", "cfg"),
        ("check", "risky.yaml", "--write-baseline", "cfg"),
        ("show", "d.yaml"),
    ):
        code, _out, err = call_main(*argv)
        assert code == 2, (argv, code, err)
        assert "Traceback" not in err and ("cfg" in err or "d.yaml" in err), (argv, err)
    # as a PATH, a directory (even one named like a config file) is walked
    code, out, err = call_main("check", "d.yaml", "-q")
    assert code == 0 and not err
    # a file named with a trailing slash
    code, out, err = call_main("check", "risky.yaml/", "--output-format", "json")
    assert code == 1 and json.loads(out)[0]["code"] == "FP8001", out


def test_non_utf8_and_spaced_names_in_every_output_format(tmp_path: Path) -> None:
    names = ["with space.yaml", "ünïcödé.yaml"]
    if sys.platform.startswith("linux"):
        names.append("\udcff.yaml")  # bytes that are not UTF-8
    for name in names:
        (tmp_path / name).write_bytes(RISKY_MEGATRON.encode())
    from fp8lint.report import OUTPUT_FORMATS

    broken = []
    for fmt in OUTPUT_FORMATS:
        code, _out, err = call_main("check", str(tmp_path), "--output-format", fmt)
        if "internal error" in err:
            broken.append(f"{fmt}: {err.strip()[:160]}")
            continue
        assert code == 1, (fmt, err)
    if broken:
        pytest.fail("renderers cannot print a non-UTF-8 file name: " + "; ".join(broken))


def test_fix_through_a_link_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text(RISKY_MEGATRON)
    os.symlink("real.yaml", tmp_path / "link.yaml")
    _code, _out, err = call_main(
        "check", str(tmp_path / "link.yaml"), "--fix", "--unsafe-fixes", "-q"
    )
    assert "internal error" not in err
    assert (tmp_path / "link.yaml").is_symlink()
    assert "--fp8-amax-history-len: 1024" in target.read_text()


def test_copytree_of_examples_fix_is_idempotent(tmp_path: Path) -> None:
    """--fix on the examples, then --fix again: the second run changes nothing."""
    shutil.copytree(EXAMPLES, tmp_path / "ex")
    call_main("check", str(tmp_path / "ex"), "--fix", "--unsafe-fixes", "-q")
    first = snapshot(tmp_path)
    call_main("check", str(tmp_path / "ex"), "--fix", "--unsafe-fixes", "-q")
    assert snapshot(tmp_path) == first


def test_a_block_ending_the_file_without_a_newline_keeps_its_span_in_the_file() -> None:
    """libyaml ends the last block of a file without a final newline on a line after it; a
    finding there (a `defaults:` parent not found) stays on the last line.  Found by the
    mutation fuzzer."""
    text = (
        "model:\n  fp8: true\n  fp8_e4m3: true\n  hidden_size: ${model.x}\n"
        "defaults:\n  - lambda: _self_"
    )
    diags = lint_ok("megatron_gpt_config.yaml", text)
    found = [d for d in diags if d.code == "FP8407"]
    assert found and all((d.end_line, d.end_column) == (6, 19) for d in found), found
