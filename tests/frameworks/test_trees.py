"""YAML/JSON dispatch: aliases, documents, unidentified keys and what any tree family shares
(each family's own tests are in `test_NAME.py`)."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import Framework

from ..conftest import lint


def sites(text: str, name: str = "x.yaml"):  # type: ignore[no-untyped-def]
    file = SourceFile(name, text)
    return parse_file(file, "json" if name.endswith(".json") else "yaml")


def test_alias_value_is_read_at_use_site_with_anchor_named() -> None:
    (site,) = sites(
        "h: &hist 1\nMODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: *hist\n"
    )
    assert site.amax_history_len.value == 1
    assert site.amax_history_len.span is not None and site.amax_history_len.span.line == 4
    assert "hist" in (site.amax_history_len.note or "")
    assert site.amax_history_len.via[0].line == 1


def test_files_without_a_known_shape_have_no_site() -> None:
    # no family's site: only the one record of unidentified FP8 keys that FP8406 reads
    for found in (sites("fp8_thing: 1\nother: 2\n"), sites('{"fp8": 1}', "x.json")):
        (record,) = found
        assert record.framework == Framework.UNIDENTIFIED
        assert record.enabled.known is False and record.edit is None
    assert sites("other: 2\n") == []


def test_unidentified_keys_get_one_info_and_no_other_rule() -> None:
    text = (
        "gradient_accumulation_steps: 8\nbf16: true\n"  # once taken for DeepSpeed
        "fp8: true\nfp8_scaling: dynamic\nfp8_amax_window: 1\nuse_fp8_kv_cache: true\n"
        "fp8_all_gather: true\nnested:\n  float8_thing: 3\n"
    )
    (record,) = sites(text)
    assert record.framework == Framework.UNIDENTIFIED
    assert [n.key for n in record.notes] == [
        "fp8",
        "fp8_scaling",
        "fp8_amax_window",
        "use_fp8_kv_cache",
        "fp8_all_gather",
        "nested.float8_thing",
    ]
    (d,) = lint("x.yaml", text)
    assert d.code == "FP8406" and d.severity.value == "info" and d.fix is None
    assert (d.line, d.column) == (3, 1)
    assert "`fp8`, `fp8_scaling`, `fp8_amax_window`, `use_fp8_kv_cache` and 2 more" in d.message


def test_finding_through_an_alias_names_the_anchor() -> None:
    from ..conftest import lint

    diags = lint(
        "a.yaml",
        "common: &algo most_recent\nMODEL_ARGS:\n  --fp8-format: hybrid\n"
        "  --fp8-amax-compute-algo: *algo\n",
        select=["FP8101"],
    )
    (d,) = diags
    assert (d.line, d.column) == (4, 28)
    assert "via alias `*algo` defined at line 1" in d.message


def test_each_yaml_document_is_its_own_site() -> None:
    found = sites("MODEL_ARGS:\n  --fp8-format: hybrid\n---\nMODEL_ARGS:\n  --bf16: true\n")
    assert [(s.span.line, s.is_on) for s in found] == [(1, True), (4, False)]


# ------------------------------------------------------------------------- OmegaConf values

GEMM = (
    "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
    "  fp8_amax_history_len: 1024\n  fp8_amax_compute_algo: max\n"
    "  hidden_size: 2064\n  num_attention_heads: 12\n  tensor_model_parallel_size: 8\n"
    "  ffn_hidden_size: {ffn}\n"
)


def test_fp8304_reads_an_ffn_size_computed_by_multiply() -> None:
    # the Launcher's spelling (conf/training/gpt3/*.yaml): 4 x 2064 = 8256, / TP 8 = 1032
    text = GEMM.format(ffn="${multiply:4, ${.hidden_size}}")
    (site,) = sites(text)
    assert site.ffn_hidden_size.value == 8256 and site.ffn_hidden_size.known
    assert site.ffn_hidden_size.via == ()  # computed where it is written
    assert site.ffn_hidden_size.note == "computed by OmegaConf from `model.hidden_size`"
    (d,) = lint("g.yaml", text, select=["FP8304"])
    assert "ffn hidden size / TP = 8256/8 = 1032" in d.message
    # unknown (read from the environment at launch): no guess, no finding
    text = GEMM.format(ffn="${multiply:4, ${oc.env:HIDDEN}}")
    (site,) = sites(text)
    assert site.ffn_hidden_size.known is False
    assert "environment" in (site.ffn_hidden_size.note or "")
    assert lint("g.yaml", text, select=["FP8304"]) == []


def test_missing_mandatory_value_is_unknown_with_a_note() -> None:
    (site,) = sites(
        "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
        "  fp8_amax_history_len: ???\n"
    )
    assert site.amax_history_len.known is False and site.amax_history_len.written
    assert "must be given at launch" in (site.amax_history_len.note or "")


def test_fixes_never_write_a_copied_value_nor_silently_over_a_formula() -> None:
    """`${.algo}` copies `algo`: writing `algo` would change a key no finding flagged, so
    the fix is advice in either mode (issue 20)."""
    from fp8lint.engine import fix_text
    from fp8lint.settings import RunSettings

    head = "model:\n  transformer_engine: true\n  fp8: true\n  fp8_hybrid: true\n"
    copied = head + "  algo: most_recent\n  fp8_amax_compute_algo: ${.algo}\n"
    result = fix_text("c.yaml", copied, "yaml", RunSettings(), True)
    assert result.text == copied
    (d,) = [d for d in result.remaining if d.code == "FP8101"]
    assert d.fix is not None and d.fix.applicability.value == "display-only"
    assert "the value at line 5 is shared" in d.fix.message
    computed = head + "  fp8_amax_history_len: ${multiply:1,1}\n  fp8_amax_compute_algo: max\n"
    (d,) = [d for d in lint("m.yaml", computed) if d.code == "FP8101"]
    assert d.fix is not None and d.fix.applicability.value == "unsafe"
    safe = fix_text("m.yaml", computed, "yaml", RunSettings(), False)
    assert "${multiply:1,1}" in safe.text


def test_show_lists_no_site_for_unidentified_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ..conftest import run_cli

    (tmp_path / "t.yaml").write_text("trainer:\n  enable_fp8: true\n")
    r = run_cli("show", "--output-format", "json", "t.yaml", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "[]"
    r = run_cli("check", "--output-format", "json", "--exit-zero", "t.yaml", cwd=tmp_path)
    assert [d["code"] for d in __import__("json").loads(r.stdout)] == ["FP8406"]
