"""The per-syntax editors: ranges, literals, insertions and removals on the original text."""

from __future__ import annotations

import pytest

from fp8lint.documents.editing import CannotEdit, editor_for
from fp8lint.documents.text import SourceFile
from fp8lint.model import EditInfo, Span


def span(file: SourceFile, start: int, end: int) -> Span:
    return file.span_of_indices(start, end)


def container(file: SourceFile, syntax: str, after: str, **kw: object) -> EditInfo:
    i = file.text.index(after)
    return EditInfo.model_construct(
        syntax=syntax, insert_after=span(file, i, i + len(after)), values={}, keys={}, **kw
    )


def apply(text: str, at: int, end: int, content: str) -> str:
    return text[:at] + content + text[end:]


def test_yaml_block_insertion_keeps_indent_and_line_endings() -> None:
    text = "model:\r\n  fp8: true\r\n  other: 1\r\n"
    file = SourceFile("a.yaml", text)
    ed = editor_for(file, container(file, "yaml", "fp8: true", indent="  "))
    at, content = ed.insertion("fp8_margin", ed.literal(0, None))
    assert (
        apply(text, at, at, content) == "model:\r\n  fp8: true\r\n  fp8_margin: 0\r\n  other: 1\r\n"
    )


def test_yaml_flow_insertion_and_anchor_skipping() -> None:
    text = "m: {fp8: true, h: &a 1}\n"
    file = SourceFile("a.yaml", text)
    ed = editor_for(file, container(file, "yaml", "h: &a 1", flow=True))
    at, content = ed.insertion("k", ed.literal("x", None))
    assert apply(text, at, at, content) == "m: {fp8: true, h: &a 1, k: x}\n"
    i = text.index("&a 1")
    start, end = ed.value_range(span(file, i, i + 4))
    assert text[start:end] == "1"


def test_yaml_booleans_copy_the_case_written_next_to_them() -> None:
    text = "model:\n  fp8: True\n"
    file = SourceFile("a.yaml", text)
    i = text.index("True")
    info = container(file, "yaml", "fp8: True", indent="  ")
    info = info.model_copy(update={"values": {"fp8": span(file, i, i + 4)}})
    ed = editor_for(file, info)
    assert ed.literal(False, None) == "False"
    assert ed.literal(True, "false") == "true"
    assert ed.literal("max", "'most_recent'") == "'max'"


def test_yaml_removal_takes_the_line_or_refuses() -> None:
    text = "a: 1\nb: 2  # note\nc: {d: 1}\n"
    file = SourceFile("a.yaml", text)
    ed = editor_for(file, container(file, "yaml", "a: 1"))
    i = text.index("b: 2")
    assert apply(text, *ed.removal(span(file, i, i + 4)), "") == "a: 1\nc: {d: 1}\n"
    shared = SourceFile("b.yaml", "a: 1; b: 2\n")
    ed2 = editor_for(shared, container(shared, "yaml", "a: 1"))
    with pytest.raises(CannotEdit, match="shares its line"):
        ed2.removal(span(shared, 6, 10))


def test_json_literals_and_comma_aware_removal() -> None:
    text = '{\n  "a": 1,\n  "b": "x",\n  "c": true\n}\n'
    file = SourceFile("a.json", text)
    ed = editor_for(file, container(file, "json", '"c": true', indent="  "))
    assert ed.literal("HYBRID", '"E4M3"') == '"HYBRID"'
    at, content = ed.insertion("fp8", ed.literal(False, None))
    assert (
        apply(text, at, at, content)
        == '{\n  "a": 1,\n  "b": "x",\n  "c": true,\n  "fp8": false\n}\n'
    )
    i = text.index('"b": "x"')
    assert apply(text, *ed.removal(span(file, i, i + 8)), "") == '{\n  "a": 1,\n  "c": true\n}\n'
    j = text.index('"c": true')
    assert apply(text, *ed.removal(span(file, j, j + 9)), "") == '{\n  "a": 1,\n  "b": "x"\n}\n'


def test_shell_flags_and_python_members() -> None:
    text = "torchrun pretrain_gpt.py --fp8-format hybrid --tp 2\n"
    file = SourceFile("a.sh", text)
    ed = editor_for(file, container(file, "shell", "--fp8-format hybrid"))
    at, content = ed.insertion("--fp8-amax-history-len", "1024")
    assert apply(text, at, at, content) == (
        "torchrun pretrain_gpt.py --fp8-format hybrid --fp8-amax-history-len 1024 --tp 2\n"
    )
    i = text.index("--tp 2")
    assert apply(text, *ed.removal(span(file, i, i + 6)), "") == (
        "torchrun pretrain_gpt.py --fp8-format hybrid\n"
    )
    py = SourceFile("a.py", "r = DelayedScaling(fp8_format=Format.E4M3)\n")
    ped = editor_for(py, container(py, "python", "Format.E4M3"))
    assert ped.literal("HYBRID", "Format.E4M3", member=True) == "Format.HYBRID"
    assert ped.literal("max", "cfg.algo") == '"max"'  # not a member: never spelled as attribute
    assert ped.literal(True, None) == "True"


def test_a_span_in_another_file_cannot_be_edited() -> None:
    file = SourceFile("a.yaml", "a: 1\n")
    ed = editor_for(file, container(file, "yaml", "a: 1"))
    other = Span.model_construct(path="base.yaml", line=1, column=1, end_line=1, end_column=2)
    with pytest.raises(CannotEdit, match=r"written in base\.yaml"):
        ed.value_range(other)
