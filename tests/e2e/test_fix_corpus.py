"""`--fix` and `--diff` over a copy of the real third-party configs (../shared/corpus/real;
skipped where absent).  The corpus has only info findings, so a plain `--fix` changes no file
at all (an info finding's fix, and any fix that changes numerics, needs `--unsafe-fixes`);
with `--unsafe-fixes` only files with a fix change, only where the fix said, the result
parses and settles, and `--diff` writes nothing."""

from __future__ import annotations

import difflib
import json
import re
import shutil
import stat
from copy import deepcopy
from pathlib import Path
from typing import Any

import pytest

from ..conftest import run_cli

MODES = (0o644, 0o600, 0o755, 0o664)


def copy_corpus(corpus: Path, tmp_path: Path) -> Path:
    """The corpus under tmp_path/corpus, files given a spread of permission modes."""
    copy = tmp_path / "corpus"
    shutil.copytree(corpus, copy)
    for i, p in enumerate(sorted(copy.rglob("*"))):
        if p.is_file():
            p.chmod(MODES[i % len(MODES)])
    return copy


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root.parent).as_posix(): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def check_json(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    r = run_cli("check", "corpus", "--output-format", "json", "--exit-zero", *extra, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    data: list[dict[str, Any]] = json.loads(r.stdout)
    return data


UNSAFE = "--unsafe-fixes"

_BEFORE: dict[tuple[str, ...], list[dict[str, Any]]] = {}


def check_json_before(tmp_path: Path, *extra: str) -> list[dict[str, Any]]:
    """`check_json` of a fresh, untouched copy: the same report for every copy (file names are
    relative to the copy), so it is computed once per set of flags and reused."""
    if extra not in _BEFORE:
        _BEFORE[extra] = check_json(tmp_path, *extra)
    return deepcopy(_BEFORE[extra])


def fix_edits(findings: list[dict[str, Any]]) -> dict[str, list[list[dict[str, Any]]]]:
    """filename -> the edit lists of its concrete safe or unsafe fixes (one per finding)."""
    out: dict[str, list[list[dict[str, Any]]]] = {}
    for d in findings:
        fix = d["fix"]
        if fix and fix["applicability"] in ("safe", "unsafe") and fix["edits"]:
            out.setdefault(d["filename"], []).append(fix["edits"])
    return out


def decode(data: bytes) -> str:
    return data.decode("utf-8-sig")


def _index(text: str, row: int, column: int) -> int:
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    return starts[row - 1] + column - 1


def apply_json_edits(text: str, fixes: list[list[dict[str, Any]]]) -> tuple[str, bool]:
    """The text with the fixes applied as one round of the fix loop takes them (in report
    order, a fix skipped when it overlaps one already taken), and whether any was skipped."""
    taken: list[tuple[int, int, str]] = []
    skipped = False
    for edits in fixes:
        spans = [
            (
                _index(text, e["location"]["row"], e["location"]["column"]),
                _index(text, e["end_location"]["row"], e["end_location"]["column"]),
                e["content"],
            )
            for e in edits
        ]
        if any((a == b == c == d) or (a < d and c < b) for a, b, _ in spans for c, d, _ in taken):
            skipped = True
            continue
        taken.extend(spans)
    out, last = [], 0
    for start, end, content in sorted(taken):
        out += [text[last:start], content]
        last = end
    out.append(text[last:])
    return "".join(out), skipped


def changed_rows_within_edits(before: str, after: str, fixes: list[list[dict[str, Any]]]) -> None:
    touched: set[int] = set()
    for edits in fixes:
        for e in edits:
            touched.update(range(e["location"]["row"], e["end_location"]["row"] + 1))
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if tag == "insert":  # new lines between original rows i1 and i1 + 1
            assert {i1, i1 + 1} & touched, (tag, i1, sorted(touched))
        else:
            rows = set(range(i1 + 1, i2 + 1))
            assert rows <= touched, (tag, sorted(rows), sorted(touched))


def test_plain_fix_changes_no_file_whose_findings_are_all_info(
    corpus: Path, tmp_path: Path
) -> None:
    copy = copy_corpus(corpus, tmp_path)
    original = snapshot(copy)
    before = check_json_before(tmp_path)
    assert before and {d["severity"] for d in before} == {"info"}
    assert not [d for d in before if d["fix"] and d["fix"]["applicability"] == "safe"]
    r = run_cli("check", "corpus", "--fix", "--exit-zero", cwd=tmp_path)
    assert r.returncode == 0 and "Traceback" not in r.stderr
    assert snapshot(copy) == original  # no byte, no mode changed
    r = run_cli("check", "corpus", "--diff", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == ""


def test_unsafe_fix_changes_only_fixable_files_and_settles(corpus: Path, tmp_path: Path) -> None:
    copy = copy_corpus(corpus, tmp_path)
    original = snapshot(copy)
    before = check_json_before(tmp_path, UNSAFE)
    assert not [d for d in before if d["code"] == "FP8001"]
    fixable = fix_edits(before)

    r = run_cli(
        "check", "corpus", "--fix", UNSAFE, "--output-format", "json", "--exit-zero", cwd=tmp_path
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""  # no fix was refused, nothing failed to write
    reported_after_fix: list[dict[str, Any]] = json.loads(r.stdout)
    fixed = snapshot(copy)

    assert fixed.keys() == original.keys()
    # permissions are kept, for changed and unchanged files alike
    assert {k: m for k, (_, m) in fixed.items()} == {k: m for k, (_, m) in original.items()}
    changed = sorted(k for k in original if fixed[k][0] != original[k][0])
    assert changed, "the corpus has unsafe fixes (the Accelerate E4M3 templates)"
    assert set(changed) <= set(fixable), set(changed) - set(fixable)
    for name in changed:
        old, new = decode(original[name][0]), decode(fixed[name][0])
        changed_rows_within_edits(old, new, fixable[name])
        expected, skipped = apply_json_edits(old, fixable[name])
        if not skipped:  # one round did it all: the file is exactly the reported edits
            assert new == expected, name

    # the fixed corpus parses, and the run's report is what a fresh check says
    after = check_json(tmp_path, UNSAFE)
    assert not [d for d in after if d["code"] == "FP8001"]

    def rows(ds: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(d["filename"], d["location"]["row"], d["code"], d["message"]) for d in ds]

    assert rows(reported_after_fix) == rows(after)
    for name in changed:  # what was fixed is gone from those files
        assert len([d for d in after if d["filename"] == name]) < len(
            [d for d in before if d["filename"] == name]
        )
    assert not fix_edits(after)

    # a second --fix changes nothing
    r2 = run_cli(
        "check", "corpus", "--fix", UNSAFE, "--output-format", "json", "--exit-zero", cwd=tmp_path
    )
    assert r2.returncode == 0 and r2.stderr == ""
    assert snapshot(copy) == fixed


def test_diff_writes_nothing_and_matches_fix(corpus: Path, tmp_path: Path) -> None:
    copy = copy_corpus(corpus, tmp_path)
    original = snapshot(copy)
    fixable = fix_edits(check_json_before(tmp_path, UNSAFE))

    r = run_cli("check", "corpus", "--diff", UNSAFE, cwd=tmp_path)
    assert snapshot(copy) == original  # byte-identical, same modes
    assert r.returncode == (1 if fixable else 0), r.stderr
    headers = sorted(
        line[len("+++ b/") :] for line in r.stdout.splitlines() if line.startswith("+++ ")
    )
    assert headers == sorted(fixable)
    assert f"Would fix {sum(len(v) for v in fixable.values())} findings." in r.stderr

    # the diff is exactly what --fix then writes
    r_fix = run_cli("check", "corpus", "--fix", UNSAFE, "--exit-zero", cwd=tmp_path)
    assert r_fix.returncode == 0
    fixed = snapshot(copy)
    expected = []
    for name in sorted(original):
        old, new = decode(original[name][0]), decode(fixed[name][0])
        if old != new:
            expected.append(
                "".join(
                    difflib.unified_diff(
                        old.splitlines(keepends=True),
                        new.splitlines(keepends=True),
                        fromfile=f"a/{name}",
                        tofile=f"b/{name}",
                    )
                )
            )
    assert r.stdout == "".join(expected)

    # on the fixed tree there is nothing left to diff
    r2 = run_cli("check", "corpus", "--diff", UNSAFE, cwd=tmp_path)
    assert r2.returncode == 0 and r2.stdout == ""
    assert snapshot(copy) == fixed


def test_diff_exit_zero_with_exit_zero_flag(corpus: Path, tmp_path: Path) -> None:
    copy = copy_corpus(corpus, tmp_path)
    original = snapshot(copy)
    r = run_cli("check", "corpus", "--diff", UNSAFE, "--exit-zero", cwd=tmp_path)
    assert r.returncode == 0
    assert r.stdout.startswith("--- a/corpus/")
    assert snapshot(copy) == original


# -- fixes touch only identified families, and never an FP8 key they do not target ----------

FP8_KEY = re.compile(r"fp8|float8|msamp", re.IGNORECASE)


def fp8_entries(name: str, text: str) -> dict[tuple[str, ...], tuple[Any, int]]:
    """Every entry of a data file whose key path names FP8: path -> (value, line of the key).
    Python and shell files are not data documents and are left out."""
    import tomllib

    from fp8lint.documents.tree import Node, load_json, load_yaml

    out: dict[tuple[str, ...], tuple[Any, int]] = {}
    if name.endswith(".toml"):
        data = tomllib.loads(text)
        lines = text.splitlines()

        def line_of(key: str) -> int:
            pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
            return next((i for i, s in enumerate(lines, 1) if pattern.match(s)), 0)

        def walk_toml(node: Any, path: tuple[str, ...]) -> None:
            if isinstance(node, dict):
                for k, v in node.items():
                    walk_toml(v, (*path, k))
            elif any(FP8_KEY.search(p) for p in path):
                out[path] = (node, line_of(path[-1]))

        walk_toml(data, ())
        return out
    if not name.endswith((".yaml", ".yml", ".json")):
        return out
    docs = load_json(text) if name.endswith(".json") else load_yaml(text)

    def plain(node: Node) -> Any:
        node = node.deref()
        if node.kind == "map":
            return {str(k.raw): plain(v) for k, v in node.items()}
        if node.kind == "seq":
            return [plain(v) for v in node.value]
        return node.value

    def walk_tree(node: Node, path: tuple[str, ...]) -> None:
        """Leaves (scalars and lists) under a key path that names FP8; rows are 1-based."""
        node = node.deref()
        if node.kind != "map":
            return
        for k, v in node.items():
            key = (*path, str(k.raw))
            if v.deref().kind == "map":
                walk_tree(v, key)
            elif any(FP8_KEY.search(p) for p in key):
                out[key] = (plain(v), k.start.line + 1)

    for i, doc in enumerate(docs):
        if doc.root is not None:
            walk_tree(doc.root, (str(i),))
    return out


def fix_rows(findings: list[dict[str, Any]], unsafe: bool) -> dict[str, set[int]]:
    """filename -> the rows the fixes `--fix` may apply would touch."""
    kinds = ("safe", "unsafe") if unsafe else ("safe",)
    out: dict[str, set[int]] = {}
    for d in findings:
        fix = d["fix"]
        if not fix or fix["applicability"] not in kinds:
            continue
        for e in fix["edits"]:
            rows = range(e["location"]["row"], e["end_location"]["row"] + 1)
            out.setdefault(d["filename"], set()).update(rows)
    return out


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fix_touches_only_identified_families_and_keeps_untargeted_fp8_keys(
    corpus: Path, tmp_path: Path, unsafe: bool
) -> None:
    copy = copy_corpus(corpus, tmp_path)
    original = snapshot(copy)
    extra = ("--unsafe-fixes",) if unsafe else ()
    before = check_json_before(tmp_path, *extra)
    # files with a finding in an identified family (FP8406 is the unidentified record's)
    identified = {d["filename"] for d in before if d["code"] != "FP8406"}
    rows = fix_rows(before, unsafe)

    r = run_cli("check", "corpus", "--fix", *extra, "--exit-zero", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fixed = snapshot(copy)
    changed = {k for k in original if fixed[k][0] != original[k][0]}
    assert changed <= identified, changed - identified
    assert changed <= set(rows), changed - set(rows)

    llamafactory = "corpus/hiyouga__LLaMA-Factory/examples__extras__fp8__llama3_fp8_fsdp_sft.yaml"
    assert llamafactory in original and llamafactory not in changed

    for name in original:
        old, new = decode(original[name][0]), decode(fixed[name][0])
        before_keys = fp8_entries(name, old)
        after_keys = fp8_entries(name, new)
        for path, (value, line) in before_keys.items():
            if line in rows.get(name, set()):
                continue  # a fix targets this key
            assert path in after_keys, (name, path)
            assert after_keys[path][0] == value, (name, path, value, after_keys[path][0])
