"""Autofix: exact fixed text per rule and format, and the file-level guarantees of --fix."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from fp8lint.documents import kind_for
from fp8lint.engine import fix_text
from fp8lint.settings import RunSettings

from ..conftest import run_cli


def fixed(name: str, text: str, unsafe: bool = True) -> str:
    """The fixed text, with every fix the check offers (most change numerics: unsafe)."""
    kind = kind_for(name)
    assert kind is not None
    result = fix_text(name, text, kind, RunSettings(), unsafe)
    assert result.failure is None, result.failure
    again = fix_text(name, result.text, kind, RunSettings(), unsafe)
    assert again.text == result.text and not again.fixed  # a second run changes nothing
    return result.text


# ----------------------------------------------------------------------------- YAML


def test_megatron_missing_keys_are_inserted_after_the_fp8_flags() -> None:
    before = (
        "# functional test\n"
        "MODEL_ARGS:\n"
        "  --tensor-model-parallel-size: 2   # TP\n"
        "  --fp8-format: hybrid  # turn FP8 on\n"
        "  --bf16: true\n"
    )
    assert fixed("m.yaml", before) == (
        "# functional test\n"
        "MODEL_ARGS:\n"
        "  --tensor-model-parallel-size: 2   # TP\n"
        "  --fp8-format: hybrid  # turn FP8 on\n"
        "  --fp8-amax-history-len: 1024\n"
        "  --fp8-amax-compute-algo: max\n"
        "  --bf16: true\n"
    )


def test_crlf_stays_crlf_and_a_missing_final_newline_stays_missing() -> None:
    before = "MODEL_ARGS:\r\n    --bf16: true\r\n    --fp8-format: e4m3"
    assert fixed("m.yaml", before) == (
        "MODEL_ARGS:\r\n    --bf16: true\r\n    --fp8-format: hybrid\r\n"
        "    --fp8-amax-history-len: 1024\r\n    --fp8-amax-compute-algo: max"
    )


def test_written_values_are_replaced_in_place_keeping_quotes_and_comments() -> None:
    before = (
        "model:\n"
        "  transformer_engine: true\n"
        "  fp8: true\n"
        "  fp8_hybrid: true\n"
        "  fp8_margin: -1          # experiment\n"
        "  fp8_amax_history_len: 1024\n"
        '  fp8_amax_compute_algo: "most_recent"   # keep me\n'
    )
    assert fixed("n.yaml", before) == (
        "model:\n"
        "  transformer_engine: true\n"
        "  fp8: true\n"
        "  fp8_hybrid: true\n"
        "  fp8_margin: 0          # experiment\n"
        "  fp8_amax_history_len: 1024\n"
        '  fp8_amax_compute_algo: "max"   # keep me\n'
    )


def test_flow_style_yaml() -> None:
    before = (
        "model: {transformer_engine: true, fp8: true, fp8_hybrid: true, fp8_amax_history_len: 1}\n"
    )
    assert fixed("f.yaml", before) == (
        "model: {transformer_engine: true, fp8: true, fp8_hybrid: true, "
        "fp8_amax_history_len: 1024, fp8_amax_compute_algo: max}\n"
    )


def test_nemo_format_is_two_booleans() -> None:
    before = (
        "model:\n  transformer_engine: True\n  fp8: True\n  fp8_e4m3: True\n"
        "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
    )
    assert fixed("n.yaml", before) == (
        "model:\n  transformer_engine: True\n  fp8: True\n  fp8_e4m3: False\n"
        "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n  fp8_hybrid: True\n"
    )


def test_nemo_reduce_amax_on_the_legacy_path() -> None:
    before = (
        "model:\n  mcore_gpt: false\n  transformer_engine: true\n  fp8: true\n"
        "  fp8_hybrid: true\n  reduce_amax: false\n  sequence_parallel: true\n"
        "  tensor_model_parallel_size: 2\n"
    )
    assert fixed("n.yaml", before) == before.replace("reduce_amax: false", "reduce_amax: true")


def test_dead_key_is_deleted_with_its_line() -> None:
    before = (
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-interval: 4   # old TE\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )
    assert fixed("m.yaml", before) == (
        "MODEL_ARGS:\n  --fp8-format: hybrid\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )


def test_accelerate_wizard_keys_are_renamed() -> None:
    before = (
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 1024\n"
        "  amax_compute_algorithm: max  # from the wizard\n"
    )
    # 1024 is Accelerate's own default (dropped either way): that key just goes
    assert fixed("a.yaml", before) == (
        "mixed_precision: fp8\nfp8_config:\n  backend: TE\n"
        "  amax_compute_algo: max  # from the wizard\n"
    )


def test_a_rename_that_would_reveal_a_new_finding_is_refused() -> None:
    before = "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 4\n"
    result = fix_text("a.yaml", before, "yaml", RunSettings(), False)
    assert result.text == before and result.fixed == []
    assert result.failure is not None and "FP8102" in result.failure


# ----------------------------------------------------------------------------- JSON


def test_json_multiline_insertion_and_format() -> None:
    before = (
        "{\n"
        '    "mixed_precision": "fp8",\n'
        '    "fp8_config": {\n'
        '        "backend": "TE",\n'
        '        "fp8_format": "E4M3",\n'
        '        "amax_history_len": 1\n'
        "    }\n"
        "}\n"
    )
    assert fixed("a.json", before) == (
        "{\n"
        '    "mixed_precision": "fp8",\n'
        '    "fp8_config": {\n'
        '        "backend": "TE",\n'
        '        "fp8_format": "HYBRID",\n'
        '        "amax_history_len": 1024,\n'
        '        "amax_compute_algo": "max"\n'
        "    }\n"
        "}\n"
    )


def test_json_single_line() -> None:
    before = '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "amax_history_len": 1}}'
    assert fixed("a.json", before) == (
        '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE", "amax_history_len": 1024, '
        '"amax_compute_algo": "max"}}'
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            '{\n  "train_batch_size": 8,\n  "fp8": {"enabled": true},\n'
            '  "bf16": {"enabled": true}\n}\n',
            '{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true}\n}\n',
        ),
        (
            '{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true},\n  "fp8": {\n'
            '    "enabled": true\n  }\n}\n',
            '{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true}\n}\n',
        ),
        (
            '{"train_batch_size": 8, "fp8": true, "bf16": {"enabled": true}}',
            '{"train_batch_size": 8, "bf16": {"enabled": true}}',
        ),
        (  # another key on the deleted key's line keeps its indentation (issue 20)
            '{\n  "train_batch_size": 8,\n  "fp8": {"enabled": true}, '
            '"bf16": {"enabled": true}\n}\n',
            '{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true}\n}\n',
        ),
        (  # the deleted key ends a line that another key starts: no trailing space left
            '{\n  "train_batch_size": 8, "fp8": {"enabled": true},\n'
            '  "bf16": {"enabled": true}\n}\n',
            '{\n  "train_batch_size": 8,\n  "bf16": {"enabled": true}\n}\n',
        ),
    ],
)
def test_json_key_removal_keeps_commas_right(before: str, after: str) -> None:
    assert fixed("ds.json", before) == after
    json.loads(after)


# ----------------------------------------------------------------------------- Python

TE = "from transformer_engine.common.recipe import DelayedScaling, Format\n"


def test_python_multiline_call_gets_one_keyword_per_line() -> None:
    before = (
        "from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision\n"
        "\n"
        "plugin = MegatronMixedPrecision(\n"
        '    precision="bf16-mixed",\n'
        '    fp8="hybrid",\n'
        "    fp8_recipe='tensorwise',\n"
        "    first_last_layers_bf16=True,  # baseline recipe\n"
        ")\n"
    )
    assert fixed("p.py", before) == (
        "from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision\n"
        "\n"
        "plugin = MegatronMixedPrecision(\n"
        '    precision="bf16-mixed",\n'
        '    fp8="hybrid",\n'
        "    fp8_recipe='tensorwise',\n"
        "    first_last_layers_bf16=True,  # baseline recipe\n"
        "    num_layers_at_start_in_bf16=1,\n"
        "    num_layers_at_end_in_bf16=1,\n"
        ")\n"
    )


def test_python_single_line_and_empty_calls() -> None:
    before = TE + "a = DelayedScaling(margin=0, amax_history_len=1)\nb = DelayedScaling()\n"
    assert fixed("t.py", before) == (
        TE + 'a = DelayedScaling(margin=0, amax_history_len=1024, amax_compute_algo="max")\n'
        "b = DelayedScaling()\n"
    )


def test_python_values_keep_their_spelling() -> None:
    before = TE + (
        "r = DelayedScaling(\n    fp8_format=Format.E4M3,\n    amax_history_len=1024,\n"
        "    amax_compute_algo='most_recent',\n    margin=-1,\n)\n"
    )
    assert fixed("t.py", before) == TE + (
        "r = DelayedScaling(\n    fp8_format=Format.HYBRID,\n    amax_history_len=1024,\n"
        "    amax_compute_algo='max',\n    margin=0,\n)\n"
    )


def test_python_keyword_removal() -> None:
    before = TE + (
        "r = DelayedScaling(amax_history_len=1024, interval=4)\n"
        "s = DelayedScaling(\n    interval=8,\n    amax_history_len=1024,\n)\n"
    )
    assert fixed("t.py", before) == TE + (
        "r = DelayedScaling(amax_history_len=1024)\n"
        "s = DelayedScaling(\n    amax_history_len=1024,\n)\n"
    )


# ----------------------------------------------------------------------------- safety levels


def test_value_from_an_anchor_is_advice_only() -> None:
    """Rewriting `&hist 1` would change `common.hist` too, a key no finding flagged: no fix
    writes there, in either mode (issue 20)."""
    before = (
        "common: &hist 1\nMODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-compute-algo: max\n"
        "  --fp8-amax-history-len: *hist\n"
    )
    for unsafe in (False, True):
        result = fix_text("a.yaml", before, "yaml", RunSettings(), unsafe)
        assert result.text == before and not result.fixed
        (d,) = [d for d in result.remaining if d.code == "FP8101"]
        assert d.fix is not None and d.fix.applicability.value == "display-only"
        assert "the value at line 1 is shared" in d.fix.message


def test_unsafe_recipe_switch_needs_unsafe_fixes() -> None:
    before = (
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --first-last-layers-bf16: true\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )
    assert fix_text("m.yaml", before, "yaml", RunSettings(), False).text == before
    assert fixed("m.yaml", before, unsafe=True) == before + "  --fp8-recipe: tensorwise\n"


def test_display_only_fix_is_advice() -> None:
    before = TE + (
        "import transformer_engine.pytorch as te\nr = DelayedScaling()\n"
        "with te.fp8_autocast(fp8_recipe=r, fp8_group=mpu.get_data_parallel_group()):\n"
        "    pass\n"
    )
    result = fix_text("t.py", before, "python", RunSettings(), True)
    assert result.text == before
    (d,) = [d for d in result.remaining if d.code == "FP8301"]
    assert d.fix is not None and d.fix.applicability.value == "display-only"
    assert d.fix.edits == ()


# ----------------------------------------------------------------------------- files and CLI

RISKY = "MODEL_ARGS:\n  --fp8-format: hybrid\n"


def test_fix_writes_in_place_keeping_mode_bom_and_encoding(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_bytes(b"\xef\xbb\xbf" + RISKY.encode())
    a.chmod(0o640)
    b = tmp_path / "b.yaml"
    b.write_bytes(RISKY.encode("utf-16"))
    r = run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Fixed 2 findings." in r.stdout
    assert a.read_bytes().startswith(b"\xef\xbb\xbf")
    assert a.read_bytes()[3:].decode().endswith("  --fp8-amax-compute-algo: max\n")
    assert stat.S_IMODE(a.stat().st_mode) == 0o640
    assert b.read_bytes()[:2] == b"\xff\xfe"
    assert "--fp8-amax-history-len: 1024" in b.read_bytes().decode("utf-16")
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".fp8lint-")]


def test_diff_writes_nothing_and_exits_one(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    p.write_text(RISKY)
    assert run_cli("check", ".", "--diff", cwd=tmp_path).returncode == 0  # nothing safe
    r = run_cli("check", ".", "--diff", "--unsafe-fixes", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stdout == (
        "--- a/a.yaml\n+++ b/a.yaml\n@@ -1,2 +1,4 @@\n MODEL_ARGS:\n   --fp8-format: hybrid\n"
        "+  --fp8-amax-history-len: 1024\n+  --fp8-amax-compute-algo: max\n"
    )
    assert p.read_text() == RISKY
    p.write_text(RISKY + "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n")
    assert run_cli("check", ".", "--diff", "--unsafe-fixes", cwd=tmp_path).returncode == 0


def test_show_fixes_and_exit_non_zero_on_fix(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(RISKY)
    r = run_cli(
        "check",
        ".",
        "--fix",
        "--unsafe-fixes",
        "--show-fixes",
        "--exit-non-zero-on-fix",
        cwd=tmp_path,
    )
    assert r.returncode == 1
    assert "Fixed 1 finding:\n- a.yaml:\n    1 x FP8101 (zero-headroom)\n" in r.stdout
    again = run_cli("check", ".", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", cwd=tmp_path)
    assert again.returncode == 0


def test_text_output_marks_fixable_findings(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "MODEL_ARGS:\n  --fp8-format: hybrid\n  --first-last-layers-bf16: true\n"
    )
    r = run_cli("check", ".", cwd=tmp_path)
    lines = r.stdout.splitlines()
    # both fixes change the training run: neither is `[*]`, both are counted as unsafe
    assert any(line.startswith("a.yaml:2:17: FP8101 [warning]") for line in lines)
    assert any(line.startswith("a.yaml:3:29: FP8205 [error]") for line in lines)
    assert not any("fixable with --fix." in line for line in lines)
    assert "(2 more fixable with --fix --unsafe-fixes.)" in lines


def test_refused_fix_leaves_the_file_and_says_why(tmp_path: Path) -> None:
    p = tmp_path / "a.yaml"
    text = "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 4\n"
    p.write_text(text)
    r = run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert p.read_text() == text
    assert "a.yaml: fix not applied: the fix would add a new FP8102 finding" in r.stderr
    assert r.returncode == 1


def test_fix_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.yaml"
    target.write_text(RISKY)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    run_cli("check", "link.yaml", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert link.is_symlink()
    assert "--fp8-amax-history-len: 1024" in target.read_text()


def test_wizard_key_at_accelerates_default_is_removed_not_renamed() -> None:
    before = (
        '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE",\n'
        ' "amax_compute_algorithm": "most_recent"}}\n'
    )
    assert (
        fixed("a.json", before) == '{"mixed_precision": "fp8", "fp8_config": {"backend": "TE"}}\n'
    )


def test_an_edit_made_while_fixing_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Someone appends a line while `--fix` computes its fixes: the file keeps that line,
    nothing is written, the run says so on stderr and exits 1."""
    from fp8lint import engine
    from fp8lint.cli import main

    risky = tmp_path / "risky.yaml"
    risky.write_text("MODEL_ARGS:\n  --fp8-format: hybrid\n")
    real = engine.runner.fix_text

    def slow_fix(*args: object, **kw: object) -> object:
        out = real(*args, **kw)  # type: ignore[arg-type]
        with open(risky, "a") as fh:
            fh.write("  --seq-length: 4096\n")
        return out

    monkeypatch.setattr(engine.runner, "fix_text", slow_fix)
    code = main(["check", "--fix", "--unsafe-fixes", str(risky)])
    _, err = capsys.readouterr()
    assert risky.read_text() == "MODEL_ARGS:\n  --fp8-format: hybrid\n  --seq-length: 4096\n"
    assert code == 1
    assert "the file changed while it was being fixed; nothing was written" in err
    assert not list(tmp_path.glob(".fp8lint-*"))  # no temporary file left behind
    # unchanged meanwhile: the same run writes the fix
    monkeypatch.setattr(engine.runner, "fix_text", real)
    assert main(["check", "--fix", "--unsafe-fixes", str(risky)]) == 0
    assert "--fp8-amax-history-len: 1024" in risky.read_text()
    assert "--seq-length: 4096" in risky.read_text()


def test_a_save_after_the_content_check_is_never_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor saves between the "still the bytes we read" check and the rename (issue
    20): the stamp taken right before the rename differs, so the save is kept."""
    from fp8lint import fixes

    p = tmp_path / "a.yaml"
    p.write_text("model: 1\n")
    read_as = fixes.stamp(os.stat(p))
    real = fixes.unchanged_since

    def then_save(path: str, expected: bytes, stamp: object) -> object:
        seen = real(path, expected, stamp)  # type: ignore[arg-type]
        with open(path, "w") as fh:  # the editor's save, same size as before
            fh.write("model: 2\n")
        os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 1_000_000))
        return seen

    monkeypatch.setattr(fixes, "unchanged_since", then_save)
    with pytest.raises(fixes.FileChanged):
        fixes.write_atomic(str(p), "model: 3\n", "utf-8", b"", b"model: 1\n", read_as)
    assert p.read_text() == "model: 2\n"
    assert not list(tmp_path.glob(".fp8lint-*"))


def test_a_file_saved_back_with_the_same_bytes_is_still_a_change(tmp_path: Path) -> None:
    """Same bytes, another stamp (an editor rewrote the file, or another tool replaced it):
    fp8lint does not write over a file it did not read."""
    from fp8lint import fixes

    p = tmp_path / "a.yaml"
    p.write_text("model: 1\n")
    read_as = fixes.stamp(os.stat(p))
    tmp = tmp_path / "b.yaml"
    tmp.write_text("model: 1\n")
    os.replace(tmp, p)  # another inode
    with pytest.raises(fixes.FileChanged):
        fixes.write_atomic(str(p), "model: 3\n", "utf-8", b"", b"model: 1\n", read_as)
    assert p.read_text() == "model: 1\n"
    fixes.write_atomic(str(p), "model: 3\n", "utf-8", b"", b"model: 1\n", fixes.stamp(os.stat(p)))
    assert p.read_text() == "model: 3\n"


ANCHORED = """language_model:
  fp8: hybrid
  fp8_margin: 0
  fp8_amax_history_len: &h 1
  fp8_amax_compute_algo: max
other:
  window: *h
"""


def test_a_value_shared_through_an_anchor_is_never_fixed() -> None:
    """`window: *h` reads the same `1`: rewriting `&h 1` changes it too, so neither mode
    edits it, and the advice says where the value is defined."""
    assert fixed("a.yaml", ANCHORED, unsafe=False) == ANCHORED
    assert fixed("a.yaml", ANCHORED, unsafe=True) == ANCHORED
    from ..conftest import lint

    (d,) = [d for d in lint("a.yaml", ANCHORED) if d.code == "FP8101"]
    assert d.fix is not None and d.fix.applicability.value == "display-only"
    assert "the value at line 4 is shared" in d.fix.message


MERGED = """base: &base
  fp8: hybrid
  fp8_margin: 0
  fp8_amax_history_len: 1
  fp8_amax_compute_algo: most_recent
language_model:
  <<: *base
  fp8_amax_history_len: 1024
  fp8_amax_compute_algo: max
"""


def test_merge_keys_local_values_win_and_the_template_is_not_a_config() -> None:
    from ..conftest import lint

    assert [d.code for d in lint("m.yaml", MERGED)] == []  # the merged config is NVIDIA's
    assert fixed("m.yaml", MERGED, unsafe=True) == MERGED  # nothing edits the template
    # a value that comes from the template is reported where it is written, and its fix
    # (which would change every mapping that merges the template) is advice only
    inherited = MERGED.replace(
        "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n", "  hidden_size: 4096\n"
    )
    (d,) = lint("m.yaml", inherited)
    assert (d.code, d.line) == ("FP8101", 5)
    assert d.fix is not None and d.fix.applicability.value == "display-only"
    assert "is shared (merged in with `<<`)" in d.fix.message
    assert fixed("m.yaml", inherited, unsafe=True) == inherited


def test_refused_fix_is_not_counted_as_fixable(tmp_path: Path) -> None:
    """After --fix refused a file's fixes, the report neither marks them `[*]` nor counts them
    as fixable (issue 13): the help says the fix was not applied."""
    p = tmp_path / "a.yaml"
    text = "mixed_precision: fp8\nfp8_config:\n  backend: TE\n  amax_history_length: 4\n"
    p.write_text(text)
    r = run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert p.read_text() == text
    assert "fix not applied" in r.stderr
    assert "fixable" not in r.stdout and "[*]" not in r.stdout, r.stdout
    assert "(not applied: the fix would add a new FP8102 finding)" in r.stdout
    data = json.loads(
        run_cli(
            "check", ".", "--fix", "--unsafe-fixes", "--output-format", "json", cwd=tmp_path
        ).stdout
    )
    assert [d["fix"]["edits"] for d in data if d["code"] == "FP8402"] == [[]]
    # a plain check runs the same loop on offered fixes (issue 19): what it would refuse is
    # advice there too, so "N fixable" is what --fix then does
    plain = run_cli("check", ".", cwd=tmp_path).stdout
    assert "fixable" not in plain and "[*]" not in plain, plain
    assert "(not applied: the fix would add a new FP8102 finding)" in plain


SHARED_ANCHOR = (
    "model:\n"
    "  fp8: true\n"
    "  fp8_e4m3: false\n"
    "  fp8_hybrid: true\n"
    "  fp8_amax_history_len: &h 4\n"
    "  fp8_amax_compute_algo: max\n"
    "  tensor_model_parallel_size: *h\n"
)


def test_refused_fix_names_the_shared_anchor(tmp_path: Path) -> None:
    """The history fix would rewrite `&h 4`, which the TP size reads through `*h`: the advice
    names the line and the alias, not a model field (issues 13, 20)."""
    p = tmp_path / "model_config.yaml"
    p.write_text(SHARED_ANCHOR)
    r = run_cli("check", ".", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert p.read_text() == SHARED_ANCHOR
    assert (
        "(not applied automatically: the value at line 5 is shared (anchored and used "
        "elsewhere through an alias)"
    ) in r.stdout
    assert "`tensor_parallel`" not in r.stdout + r.stderr
    assert "fixable" not in r.stdout


def test_refusal_names_a_shared_merge_template() -> None:
    """A value merged in with `<<` from a template that the fix rewrote: the refusal names the
    key that reads it and the merge, not the model field (issue 13)."""
    from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Severity, TextEdit
    from fp8lint.fixes import _unintended
    from fp8lint.model import Setting, Span

    template = Span(
        path="m.yaml", line=3, column=25, end_line=3, end_column=26, start_offset=60, end_offset=61
    )
    merged = Setting[int].model_construct(
        value=4,
        known=True,
        provenance="written",
        span=template,
        key="other.fp8_amax_history_len",
        note="merged in with `<<`",
        via=(template,),
    )
    edit = TextEdit("1024", 3, 25, 3, 26, 60, 61)
    chosen = Diagnostic(
        "FP8102", "short-amax-history", Severity.INFO, "m", "m.yaml", 3, 25, 3, 26,
        fix=Fix(Applicability.UNSAFE, "set amax_history_len 1024", (edit,)),
    )  # fmt: skip
    assert _unintended("amax_history_len", merged, [chosen]) == (
        "`other.fp8_amax_history_len` would change too: it shares the value defined at line 3 "
        "(merged in with `<<`)"
    )
    # an edit elsewhere is not the cause: the plain wording, naming the key
    far = TextEdit("1024", 9, 1, 9, 2, 200, 201)
    other = Diagnostic(
        "FP8102", "short-amax-history", Severity.INFO, "m", "m.yaml", 9, 1, 9, 2,
        fix=Fix(Applicability.UNSAFE, "set", (far,)),
    )  # fmt: skip
    assert _unintended("amax_history_len", merged, [other]) == (
        "`other.fp8_amax_history_len` changed although no fix meant to change it"
    )
