"""The position-keeping YAML/JSON trees: spans, aliases, merge keys, hostile input."""

from __future__ import annotations

import time

import pytest

from fp8lint.documents.tree import TreeError, load_json, load_yaml


def test_yaml_positions_are_zero_based_marks() -> None:
    (doc,) = load_yaml("a:\n  b: 12\n  c: [1, 2]\n")
    assert doc.root is not None
    pair = doc.root.get("a")
    assert pair is not None
    k, v = pair[1].get("b")  # type: ignore[misc]
    assert (k.start.line, k.start.column) == (1, 2)
    assert (v.start.line, v.start.column, v.value) == (1, 5, 12)
    assert v.end.column == 7


def test_yaml_scalar_types() -> None:
    (doc,) = load_yaml("i: 0x10\nf: 1.0e-5\nb: True\nn: null\ns: '1'\no: 010\n")
    assert doc.root is not None
    values = {k.raw: v.value for k, v in doc.root.items()}
    assert values == {"i": 16, "f": 1e-5, "b": True, "n": None, "s": "1", "o": 8}


def test_alias_keeps_its_own_position_and_names_the_anchor() -> None:
    (doc,) = load_yaml("base: &h 1024\nmodel:\n  hist: *h\n")
    assert doc.root is not None
    _, model = doc.root.get("model")  # type: ignore[misc]
    _, alias = model.get("hist")
    assert alias.kind == "alias" and alias.anchor == "h"
    assert alias.start.line == 2
    assert alias.deref().value == 1024 and alias.deref().start.line == 0


def test_merge_keys_do_not_override_explicit_keys() -> None:
    (doc,) = load_yaml("d: &d {x: 1, y: 2}\nm:\n  <<: *d\n  y: 3\n")
    assert doc.root is not None
    _, m = doc.root.get("m")  # type: ignore[misc]
    assert {k.raw: v.deref().value for k, v in m.items()} == {"y": 3, "x": 1}


def test_multi_document_streams_are_separate() -> None:
    docs = load_yaml("a: 1\n---\na: 2\n")
    assert [d.index for d in docs] == [0, 1]
    assert [d.root.get("a")[1].value for d in docs if d.root] == [1, 2]  # type: ignore[index]


def test_billion_laughs_is_not_expanded() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    start = time.process_time()
    (doc,) = load_yaml("\n".join(lines) + "\n")
    assert time.process_time() - start < 5  # references, not 9^9 copies
    assert doc.root is not None and len(doc.root.keys()) == 10


def test_recursive_aliases_terminate() -> None:
    from fp8lint.documents.tree import walk

    (doc,) = load_yaml("a: &a [*a]\nb: &b {<<: *b, x: 1}\n")
    assert doc.root is not None
    assert len(list(walk(doc.root))) == 2
    _, b = doc.root.get("b")  # type: ignore[misc]
    assert [k.raw for k, _ in b.items()] == ["x"]


def test_undefined_alias_is_an_error() -> None:
    with pytest.raises(TreeError) as err:
        load_yaml("a: *nope\n")
    assert "undefined alias" in err.value.message


def test_unsafe_tags_are_text_only() -> None:
    (doc,) = load_yaml(
        "x: !!python/object/apply:os.system ['echo hi']\ny: !!python/name:os.system\n"
    )
    assert doc.root is not None
    _, y = doc.root.get("y")  # type: ignore[misc]
    assert y.typed is False and y.value == ""


def test_yaml_syntax_error_has_line_and_column() -> None:
    with pytest.raises(TreeError) as err:
        load_yaml("a: 1\nb: [1, 2\nc: 3\n")
    assert err.value.line >= 2


def test_deep_yaml_nesting_is_a_clear_error() -> None:
    with pytest.raises(TreeError) as err:
        load_yaml("[" * 5000 + "]" * 5000)
    assert "nesting" in err.value.message or "YAML" in err.value.message


def test_json_positions() -> None:
    (doc,) = load_json('{\n  "msamp": {"enabled": true,\n    "opt_level": "O2"}\n}\n')
    assert doc.root is not None
    _, msamp = doc.root.get("msamp")  # type: ignore[misc]
    k, v = msamp.get("opt_level")
    assert (k.start.line, k.start.column) == (2, 4)
    assert (v.start.line, v.start.column, v.end.column, v.value) == (2, 17, 21, "O2")


def test_json_syntax_error() -> None:
    with pytest.raises(TreeError) as err:
        load_json('{"a": 1,\n "b": }\n')
    assert (err.value.line, err.value.column) == (2, 7)


def test_json_deep_nesting_is_a_clear_error() -> None:
    with pytest.raises(TreeError) as err:
        load_json("[" * 100000 + "]" * 100000)
    assert "nesting" in err.value.message


def test_json_duplicate_keys_last_wins() -> None:
    (doc,) = load_json('{"a": 1, "a": 2}')
    assert doc.root is not None
    assert doc.root.get("a")[1].value == 2  # type: ignore[index]
