"""OmegaConf over position-keeping trees: what resolves, what stays unknown and why, the
bounds, the pruning, and merges that keep every value's position."""

from __future__ import annotations

from typing import Any

import pytest

from fp8lint.documents import omega
from fp8lint.documents.omega import Edit, Interpolations, MergeError, merge
from fp8lint.documents.tree import Node, Pos, load_yaml
from fp8lint.frameworks.shared.hydra import RESOLVERS


def root_of(text: str) -> Node:
    (doc,) = load_yaml(text)
    assert doc.root is not None
    return doc.root


def resolve(text: str, key: str, prune: bool = True) -> omega.Resolved:
    path = tuple(key.split("."))
    return Interpolations(root_of(text), RESOLVERS, prune=prune).resolve([path])[path]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("a:\n  b: 3\nx: ${a.b}\n", "x", 3),
        ("m:\n  h: 4\n  x: ${.h}\n", "m.x", 4),
        ("h: 5\nm:\n  x: ${..h}\n", "m.x", 5),
        ("l: [7, 8]\nx: ${l[1]}\n", "x", 8),
        ("l: [7, 8]\nx: ${l.0}\n", "x", 7),
        ("m:\n  h: 1024\n  f: ${multiply:4, ${.h}}\n", "m.f", 4096),
        ("a: 3\nx: ${sum:${a},-1}\n", "x", 2),
        ("x: ${divide_ceil:7,2}\n", "x", 4),
        ("x: ${divide_floor:7,2}\n", "x", 3),
        ("x: ${add:1,2.5}\n", "x", 3.5),
        ("x: ${mul:3,4}\n", "x", 12),
        ("x: ${div:3,4}\n", "x", 0.75),
        ("x: ${max:3,4}\n", "x", 4),
        ("a: 2\nx: ${oc.select:a,5}\n", "x", 2),
        ("x: ${oc.select:nope,5}\n", "x", 5),
        ("a: b\nx: pre_${a}_post\n", "x", "pre_b_post"),
        ("a: &x 6\nx: ${b}\nb: *x\n", "x", 6),
        ("base: &b\n  h: 9\nm:\n  <<: *b\nx: ${m.h}\n", "x", 9),
        ("1: 4\nx: ${1}\n", "x", 4),
        ("a: 1\nx: \\${a}\n", "x", "${a}"),  # escaped: the text itself
        ("a: ${b}\nb:\n  c: 2\nx: ${a.c}\n", "x", 2),  # through an interpolated section
    ],
)
def test_resolves(text: str, key: str, value: Any) -> None:
    found = resolve(text, key)
    assert found.known and found.value == value and type(found.value) is type(value), found


@pytest.mark.parametrize(
    ("text", "key", "note"),
    [
        ("x: ???\n", "x", "mandatory value that must be given at launch"),
        ("m: ???\nx: ${m}\n", "x", "refers to a mandatory value (`???`) given at launch"),
        ("x: ${nope.y}\n", "x", "names a key that this configuration does not have"),
        ("x: ${int_div:4,2}\n", "x", "uses the resolver `int_div`, which fp8lint does not"),
        ("x: ${gpu_name:}\n", "x", "name of the GPU"),
        ("x: ${hydra:runtime.choices.training}\n", "x", "filled in by Hydra"),
        ("x: ${oc.create:1}\n", "x", "`oc.create` builds a configuration at run time"),
        ("x: ${oc.decode:'3'}\n", "x", "`oc.decode` parses text at run time"),
        ("x: ${oc.deprecated:a}\na: 1\n", "x", "`oc.deprecated` redirects"),
        ("x: ${oc.dict.keys:a}\na: {b: 1}\n", "x", "not a single value"),
        ("s: ab\nx: ${multiply:${s},3}\n", "x", "`ab` is not a number"),
        ("x: ${multiply:true,3}\n", "x", "is not a number"),
        ("x: ${div:1,0}\n", "x", "divides by zero"),
        ("x: ${multiply:1}\n", "x", "cannot compute it from these arguments"),
        ("a: ${b}\nb: ${a}\nx: ${a}\n", "x", "interpolation cycle: a -> b -> a"),
        ("x: ${x}\n", "x", "interpolation cycle: x -> x"),
        ("k: y\ny: 3\nx: ${${k}}\n", "x", "computes a key name"),
        ("y: 3\nx: ${oc.select:${k}}\nk: y\n", "x", "computes a key name"),
        ("x: ${oops\n", "x", "is not a valid OmegaConf interpolation"),
        ("t: !foo 3\nx: ${t}\n", "x", "custom tag `!foo`"),
        ("m:\n  a: 1\n  x: ${m}\n", "m.x", "Interpolation to parent node"),
        ("a:\n  b: 1\nx: ${a}\n", "x", "is a section, not a value"),
        ('"a.b": 3\nx: ${a.b}\n', "x", "names a key that this configuration does not have"),
        ("r: &r {x: *r}\nx: ${r.x.x}\n", "x", "contains itself (a recursive alias)"),
        ("m:\n  x: ${...a}\n", "m.x", "names a key that this configuration does not have"),
        ("x: ${" + "a" * 20_000 + "}\n", "x", "characters is not resolved"),
    ],
)
def test_unknown_with_a_note(text: str, key: str, note: str) -> None:
    found = resolve(text, key)
    assert not found.known and found.value is None
    assert note in (found.note or ""), found.note


def test_environment_is_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FP8LINT_TEST_MARGIN", "3")
    for text in ("x: ${oc.env:FP8LINT_TEST_MARGIN}\n", "x: ${oc.env:FP8LINT_TEST_MARGIN,2}\n"):
        found = resolve(text, "x")
        assert not found.known and found.value is None
        assert "comes from the environment" in (found.note or "")
    # even after another library registers an `oc.env` that reads it
    from omegaconf import OmegaConf

    OmegaConf.clear_resolvers()  # OmegaConf's defaults again: its own `oc.env`
    assert OmegaConf.create({"x": "${oc.env:FP8LINT_TEST_MARGIN}"}).x == "3"
    found = resolve("x: ${oc.env:FP8LINT_TEST_MARGIN}\ny: ${multiply:${x},2}\n", "y")
    assert not found.known and "comes from the environment" in (found.note or "")


def test_unknown_arguments_give_unknown_results() -> None:
    text = "t: !foo 3\nh: ${oc.env:H}\na: ${multiply:${t},2}\nb: ${sum:${h},1}\nc: ${max:${a},1}\n"
    root = root_of(text)
    found = Interpolations(root, RESOLVERS).resolve([("a",), ("b",), ("c",)])
    assert [f.known for f in found.values()] == [False, False, False]
    assert "custom tag" in (found[("c",)].note or "")


def test_bombs_chains_and_huge_numbers_are_bounded() -> None:
    doubling = "b0: xxxxxxxxxx\n" + "".join(
        f"b{i}: ${{b{i - 1}}}${{b{i - 1}}}\n" for i in range(1, 30)
    )
    found = resolve(doubling, "b29")
    assert not found.known and "expands to more than" in (found.note or "")
    assert resolve(doubling, "b3").value == "x" * 80  # small ones still resolve
    chain = "c0: 1\n" + "".join(f"c{i}: ${{c{i - 1}}}\n" for i in range(1, 5000))
    found = resolve(chain, "c4999")
    assert not found.known and "chain deeper than" in (found.note or "")
    assert resolve(chain, "c20").value == 1
    huge = "p0: " + "9" * 4000 + "\n"
    found = resolve(huge + "p1: ${multiply:${p0},${p0}}\n", "p1")
    assert not found.known and "too large to be a configuration value" in (found.note or "")
    products = huge + "".join(
        f"p{i}: ${{multiply:${{p{i - 1}}},${{p{i - 1}}}}}\n" for i in range(1, 30)
    )
    assert not resolve(products, "p29").known


def test_via_follows_copies_and_computed_values_name_their_inputs() -> None:
    text = "m:\n  h: 1024\n  g: ${.h}\n  c: ${m.g}\n  f: ${multiply:4, ${.g}}\n  s: x${.h}\n"
    # a copy: every hop up to where the value is written (fixes write there)
    copied = resolve(text, "m.c")
    assert copied.via == (("m", "g"), ("m", "h")) and copied.note is None
    # computed: defined by its own formula, built from the keys the note names
    computed = resolve(text, "m.f")
    assert computed.value == 4096 and computed.via == ()
    assert computed.note == "computed by OmegaConf from `m.g`"
    assert resolve(text, "m.s").via == () and resolve(text, "m.s").value == "x1024"


def test_pruning_hands_omegaconf_only_what_is_referenced(monkeypatch: pytest.MonkeyPatch) -> None:
    from omegaconf import OmegaConf

    seen: list[Any] = []
    create = OmegaConf.create

    def spy(data: Any = None, *args: Any, **kwargs: Any) -> Any:
        seen.append(data)
        return create(data, *args, **kwargs)

    monkeypatch.setattr(OmegaConf, "create", spy)
    text = (
        "trainer:\n  devices: 8\n  unrelated: ${oc.env:X}\n"
        "data:\n  paths: [a, b, c]\n"
        "model:\n  hidden_size: 2048\n  sub:\n    h: ${..hidden_size}\n"
        "  ffn_hidden_size: ${multiply:4, ${.sub.h}}\n  fp8: true\n"
    )
    (path,) = [("model", "ffn_hidden_size")]
    found = Interpolations(root_of(text), RESOLVERS, prune=True).resolve([path])[path]
    assert found.value == 8192
    assert seen[-1] == {
        "model": {
            "hidden_size": 2048,
            "sub": {"h": "${..hidden_size}"},
            "ffn_hidden_size": "${multiply:4, ${.sub.h}}",
        }
    }
    full = Interpolations(root_of(text), RESOLVERS, prune=False).resolve([path])[path]
    assert full == found and set(seen[-1]) == {"trainer", "data", "model"}


def test_resolvers_are_registered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from omegaconf import OmegaConf

    resolve("x: ${mul:2,3}\n", "x")
    calls: list[str] = []
    register = OmegaConf.register_resolver

    def spy(name: str, *args: Any, **kwargs: Any) -> None:
        calls.append(name)
        register(name, *args, **kwargs)

    monkeypatch.setattr(OmegaConf, "register_resolver", spy)
    monkeypatch.setattr(OmegaConf, "register_new_resolver", spy)
    assert resolve("x: ${mul:2,3}\n", "x").value == 6
    assert calls == []


# ---------------------------------------------------------------------------------- merge


@pytest.mark.parametrize(
    "text",
    ["${a}", "${a.b}", "${.a}", "${..a.b_c}", "${...x}", "${_k.v2}", "${model.fp8_hybrid}"],
)
@pytest.mark.parametrize("parent", [(), ("model",), ("model", "optim")])
def test_a_plain_reference_reads_as_the_grammar_does(text: str, parent: tuple[str, ...]) -> None:
    """The unparsed reading of one plain `${key}` is the grammar's, dots and all."""
    assert omega._PLAIN.fullmatch(text)
    assert omega._interpolation_refs(text, parent) == omega._grammar_refs(text, parent)


@pytest.mark.parametrize(
    "text", ["${a}b", "${ a }", "${a.${b}}", "${oc.env:X}", "${a-b}", "${0}", "x${a}", "${}"]
)
def test_anything_else_is_read_by_the_grammar(text: str) -> None:
    assert omega._PLAIN.fullmatch(text) is None


def scalar_at(node: Node, *path: str) -> Node:
    found = omega.lookup(node, path)
    assert found is not None
    return found.deref()


def test_merge_later_layers_win_and_keep_their_positions() -> None:
    base = root_of("model:\n  a: 1\n  b: [1, 2]\n  c: {d: 1}\n  keep: 7\n  m: 1\n")
    top = root_of("\n\nmodel:\n  a: 2\n  b: [3]\n  c: 5\n  m: ???\n  new: 9\n")
    merged = merge([base, top])
    assert scalar_at(merged, "model", "a").value == 2
    assert scalar_at(merged, "model", "a").start.line == 3  # written in `top`
    assert scalar_at(merged, "model", "keep").start.line == 4  # written in `base`
    assert [n.value for n in scalar_at(merged, "model", "b").value] == [3]  # lists replaced
    assert scalar_at(merged, "model", "c").value == 5  # a value replaces a section
    assert scalar_at(merged, "model", "m").value == 1  # `???` does not replace a value
    assert scalar_at(merged, "model", "m").start.line == 5
    assert merged.deref().get("model") is not None
    assert scalar_at(merged, "model").keys() == ["a", "b", "c", "keep", "m", "new"]
    key, _ = scalar_at(merged, "model").get("new") or (None, None)
    assert key is not None and key.start.line == 7


def test_merge_applies_edits_in_order() -> None:
    base = root_of("model:\n  a: 1\n  b: 2\n")
    at = Pos(0, 0, 0, origin="script")

    def edit(path: str, value: object) -> Edit:
        name = path.rsplit(".", 1)[-1]
        key = Node("scalar", at, at, value=name, raw=name)
        node = None if value is None else Node("scalar", at, at, value=value, raw=str(value))
        return Edit(tuple(path.split(".")), key, node)

    merged = merge(
        [base],
        [edit("model.a", 5), edit("model.b", None), edit("model.x.y", 3), edit("model.a.q", 1)],
    )
    model = scalar_at(merged, "model")
    assert model.keys() == ["a", "x"]
    assert scalar_at(merged, "model", "x", "y").value == 3
    assert scalar_at(merged, "model", "a", "q").value == 1  # a value in the way: a mapping
    assert model.start.origin is None  # the section is the file's own
    assert scalar_at(merged, "model", "x").start.origin == "script"  # made by the edit


def test_merge_refuses_what_omegaconf_refuses() -> None:
    with pytest.raises(MergeError, match="cannot merge"):
        merge([root_of("a: {b: 1}\n"), root_of("a: [1]\n")])


def test_merge_of_an_alias_bomb_is_bounded() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(MergeError, match="more than"):
        merge([root_of("\n".join(lines) + "\n"), root_of("b: 1\n")])
