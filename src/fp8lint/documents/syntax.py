"""Whether a text still parses as its syntax: the last check on a fixed file before it is
written.  The fix loop compares the sites of the text before and after, but a file whose
edit broke it may have no site to compare (a Python module without FP8 words is never
parsed by a reader), so the fixed text is parsed here in full, whatever it contains."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fp8lint.documents.tree import Node


def checked_parse(text: str, kind: str) -> tuple[str | None, object | None]:
    """Why `text` does not parse as `kind` (None when it does; a shell script has no parser
    here: the shell itself is the only judge, and fp8lint never runs it), and the parse made
    where a reader can take it over: a Python module of the whole text (the fix loop's next
    lint of that text then skips its parse)."""
    tree: object | None = None
    try:
        if kind == "python":
            import libcst

            tree = libcst.parse_module(text)
        elif kind == "yaml":  # as the reader loads it (libyaml events where available)
            from fp8lint.documents.tree import load_yaml

            load_yaml(text)
        elif kind == "json":
            from fp8lint.documents.tree import load_json

            load_json(text)
        elif kind == "toml":  # as the reader loads it
            from fp8lint.documents.text import SourceFile
            from fp8lint.documents.toml import load

            load(SourceFile("", text))
    except RecursionError:
        return "nesting too deep to read", None
    except Exception as exc:  # every parser's own error type: the text does not parse
        why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".strip()
        return why, None
    return None, tree


# ------------------------------------------------------------------ the whole document


MAX_ENTRIES = 200_000  # values visited, aliases expanded: far above any real config


@dataclass(frozen=True, slots=True)
class Entry:
    """One value of a parsed document: what it is (a scalar's type and text, or the kind of
    collection), where its `key: value` is written, and whether it is read through a YAML
    alias or merge key, so that its text is shared with another key."""

    value: tuple[str, str]
    start: int
    end: int
    shared: str | None  # how its text is shared: "it lies under `&b` (line 1), which ..."


# (document index, key path) -> the value there
Entries = dict[tuple[int, tuple[str, ...]], Entry]


class Unverifiable(Exception):
    """The document is too large (or too deeply shared) to compare value by value."""


def document_entries(text: str, kind: str) -> Entries | None:
    """Every value of a YAML, JSON or TOML document by key path, for the fix loop's last
    check: after a fix, only values whose own text was edited may differ, and none that an
    alias or merge key reads.  None for kinds without such a tree (Python, shell),
    whose edits are checked on their sites; `Unverifiable` past MAX_ENTRIES."""
    if kind in ("yaml", "json"):
        from fp8lint.documents.tree import load_json, load_yaml

        docs = load_yaml(text) if kind == "yaml" else load_json(text)
        out: Entries = {}
        for doc in docs:
            if doc.root is not None:
                _tree_entries(doc.index, doc.root, out)
        return out
    if kind == "toml":
        return _toml_entries(text)
    return None


def _tree_entries(index: int, root: Node, out: Entries) -> None:
    """Values by key path without expanding aliases (an alias bomb stays small): an alias is
    compared as the anchor it names, and a value under an anchored node that an alias or a
    `<<:` merge reads is marked shared, since its text is what those keys read too."""
    stack: list[tuple[tuple[str, ...], Node, int, str | None]] = [
        ((), root, root.start.index, None)
    ]
    while stack:
        if len(out) >= MAX_ENTRIES:
            raise Unverifiable(f"more than {MAX_ENTRIES} values")
        path, node, start, shared = stack.pop()
        if shared is None and node.aliased and node.anchor is not None:
            how = "a `<<:` merge" if node.merged else "an alias"
            shared = (
                f"it lies under `&{node.anchor}` (line {node.start.line + 1}), which {how} reads"
            )
        end = node.end.index
        if node.kind == "map":
            out[(index, path)] = Entry(("map", ""), start, end, shared)
            for k, v in node.value:
                stack.append(((*path, str(k.raw)), v, k.start.index, shared))
        elif node.kind == "seq":
            out[(index, path)] = Entry(("seq", str(len(node.value))), start, end, shared)
            for i, v in enumerate(node.value):
                stack.append(((*path, str(i)), v, v.start.index, shared))
        elif node.kind == "alias":
            out[(index, path)] = Entry(("alias", str(node.anchor)), start, end, shared)
        else:
            value = (type(node.value).__name__, str(node.raw))
            out[(index, path)] = Entry(value, start, end, shared)


def _toml_entries(text: str) -> Entries:
    from fp8lint.documents.text import SourceFile
    from fp8lint.documents.toml import load

    doc = load(SourceFile("", text))
    out: Entries = {}
    stack: list[tuple[tuple[str, ...], Any]] = [((), doc.data)]
    while stack:
        if len(out) >= MAX_ENTRIES:
            raise Unverifiable(f"more than {MAX_ENTRIES} values")
        path, value = stack.pop()
        written = tuple(p for p in path if not p.isdigit())
        at = next(
            (
                doc.where[written[:n]]
                for n in range(len(written), 0, -1)
                if written[:n] in doc.where
            ),
            None,
        )
        start, end = (at.key_start, at.value_end) if at is not None else (-1, -1)
        if isinstance(value, dict):
            out[(0, path)] = Entry(("map", ""), start, end, None)
            stack.extend(((*path, str(k)), v) for k, v in value.items())
        elif isinstance(value, list):
            out[(0, path)] = Entry(("seq", str(len(value))), start, end, None)
            stack.extend(((*path, str(i)), v) for i, v in enumerate(value))
        else:
            out[(0, path)] = Entry((type(value).__name__, repr(value)), start, end, None)
    return out
