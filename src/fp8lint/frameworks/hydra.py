"""Effective configuration across files: Hydra `defaults:` chains and command-line overrides.

A YAML config may name parents in `defaults:` (Hydra: `- base`, `- group: option`; NeMo-RL
recipes: `defaults: parent.yaml`); parents are merged first and the file's own keys win.
A launch script may select a config (`--config-path/--config-name`, or a NeMo-Framework-
Launcher `training=llama/llama2_70b`) and override keys (`model.fp8=True`, `+key=v`,
`++key=v`, `~key`).  The result is one merged tree whose every node still points at the file
and line that wrote it, so a finding lands where the winning value is written.  Chains are
bounded and cycles are reported, never followed forever.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any

from fp8lint.documents.text import ParseError, Reader, SourceFile
from fp8lint.documents.tree import Document, Node, Pos, TreeError, load_yaml

MAX_CHAIN = 8


@dataclass(frozen=True)
class Override:
    op: str  # "set" (key=v), "add" (+key=v), "force" (++key=v), "delete" (~key)
    path: tuple[str, ...]
    raw: str | None
    value: Any
    known: bool
    key_start: Pos
    key_end: Pos
    value_start: Pos
    value_end: Pos


_OVERRIDE = re.compile(r"^(?P<op>~|\+\+|\+)?(?P<key>[A-Za-z_][\w.\-/@]*)(?:=(?P<value>.*))?$", re.S)
_INT = re.compile(r"^[-+]?\d+$")
_FLOAT = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$")


def hydra_value(text: str) -> tuple[Any, bool]:
    """(value, known) by Hydra's override grammar: bools, null, numbers, quoted strings."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true", True
    if t.lower() == "null":
        return None, True
    if _INT.match(t):
        return (int(t), True) if len(t) <= 40 else (t, False)
    if _FLOAT.match(t):
        return float(t), True
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1], True
    if t.startswith(("[", "{")) or "${" in t or "$" in t:
        return t, False
    return t, True


def parse_override(
    word: str, file: SourceFile, start: int, end: int, known: bool = True
) -> Override | None:
    """An override from one command-line word written at `start`..`end` of `file`."""
    m = _OVERRIDE.match(word)
    if m is None:
        return None
    op = {"~": "delete", "++": "force", "+": "add", None: "set"}[m.group("op")]
    if op != "delete" and m.group("value") is None:
        return None
    raw = m.group("value")
    value, ok = hydra_value(raw) if raw is not None else (None, True)
    text_key = m.group("key")
    # the word may have been quoted in the script: find the key inside the written text
    offset = max(file.text.find(text_key, start, end), start)
    value_at = offset + len(text_key) + 1 if raw is not None else offset + len(text_key)
    return Override(
        op=op,
        path=tuple(text_key.split(".")),
        raw=raw,
        value=value,
        known=ok and known,
        key_start=file.pos_of_index(offset),
        key_end=file.pos_of_index(offset + len(text_key)),
        value_start=file.pos_of_index(min(value_at, end)),
        value_end=file.pos_of_index(end),
    )


def _with_origin(p: Pos, file: SourceFile) -> Pos:
    return replace(p, origin=file)


def apply_overrides(root: Node, overrides: list[Override], file: SourceFile) -> Node:
    """A copy of `root` with the overrides applied (mappings copied on the way down)."""
    for ov in overrides:
        root = _apply(root, list(ov.path), ov, file)
    return root


def _apply(node: Node, path: list[str], ov: Override, file: SourceFile) -> Node:
    node = node.deref()
    if node.kind != "map":
        node = Node("map", node.start, node.end, value=[], style="block")
    entries = list(node.value)
    head, rest = path[0], path[1:]
    found = next((i for i, (k, _) in enumerate(entries) if k.raw == head), None)
    key = Node(
        "scalar",
        _with_origin(ov.key_start, file),
        _with_origin(ov.key_end, file),
        value=head,
        raw=head,
        style="plain",
    )
    if rest:
        child = (
            entries[found][1]
            if found is not None
            else Node("map", key.start, key.end, value=[], style="block")
        )
        new_child = _apply(child, rest, ov, file)
        if found is None:
            entries.append((key, new_child))
        else:
            entries[found] = (entries[found][0], new_child)
    elif ov.op == "delete":
        if found is not None:
            del entries[found]
    else:
        value = Node(
            "scalar",
            _with_origin(ov.value_start, file),
            _with_origin(ov.value_end, file),
            value=ov.value,
            raw=ov.raw,
            style="plain",
            typed=ov.known,
        )
        if found is None:
            entries.append((key, value))
        else:
            entries[found] = (key, value)
    return _remapped(node, entries)


def _remapped(template: Node, entries: list[tuple[Node, Node]]) -> Node:
    """A mapping like `template` (same place, style and anchor) with other entries."""
    return Node(
        "map",
        template.start,
        template.end,
        value=entries,
        style=template.style,
        anchor=template.anchor,
        doc_index=template.doc_index,
    )


def merge(base: Node, top: Node) -> Node:
    """`top` over `base`: mappings merge key by key, anything else is replaced."""
    base, top = base.deref(), top.deref()
    if base.kind != "map" or top.kind != "map":
        return top
    entries = list(base.value)
    index = {k.raw: i for i, (k, _) in enumerate(entries)}
    for k, v in top.value:
        if k.raw in index:
            i = index[k.raw]
            entries[i] = (k, merge(entries[i][1], v))
        else:
            index[k.raw] = len(entries)
            entries.append((k, v))
    return _remapped(top, entries)


def _parents(root: Node, folder: str) -> list[tuple[str, Node]]:
    """(path, the `defaults:` entry node) for each parent file named by `defaults:`."""
    pair = root.get("defaults")
    if pair is None:
        return []
    value = pair[1].deref()
    names: list[tuple[str, Node]] = []
    if value.kind == "scalar" and isinstance(value.value, str):
        names.append((value.value, value))
    elif value.kind == "seq":
        for item in value.value:
            item = item.deref()
            if item.kind == "scalar" and isinstance(item.value, str) and item.value != "_self_":
                names.append((item.value, item))
            elif item.kind == "map":
                for k, v in item.value:
                    group = str(k.raw or "")
                    option = v.deref().value
                    if "@" in group or group.startswith("optional ") or not isinstance(option, str):
                        continue  # package-relocated or optional groups: not followed
                    group = group.removeprefix("override ").strip()
                    names.append((f"{group}/{option}", item))
    out = []
    seen: set[str] = set()
    for name, node in names:
        if name in seen:
            continue  # listing a parent twice merges it once
        seen.add(name)
        candidate = os.path.join(
            folder, name if name.endswith((".yaml", ".yml")) else name + ".yaml"
        )
        if os.path.isfile(candidate):
            out.append((os.path.normpath(candidate), node))
    return out


def effective_root(
    file: SourceFile, doc: Document, reader: Reader, chain: tuple[str, ...] = ()
) -> tuple[Node | None, list[str]]:
    """The document merged over its `defaults:` parents, and the files it came from."""
    root = doc.root
    if root is None or not root.is_map:
        return root, [file.path]
    here = os.path.normpath(os.path.abspath(file.path))
    chain = (*chain, here)
    merged: Node | None = None
    layers: list[str] = []
    for parent_path, entry in _parents(root, os.path.dirname(file.path) or "."):
        absolute = os.path.normpath(os.path.abspath(parent_path))
        if absolute in chain:
            names = " -> ".join(os.path.basename(c) for c in (*chain, absolute))
            raise ParseError(
                f"`defaults:` chain cycles: {names}", entry.start.line + 1, entry.start.column + 1
            )
        if len(chain) >= MAX_CHAIN:
            raise ParseError(
                f"`defaults:` chain deeper than {MAX_CHAIN} files",
                entry.start.line + 1,
                entry.start.column + 1,
            )
        parent_file = load_file(parent_path, reader)
        if parent_file is None:
            continue
        pdocs = _docs(parent_file)
        if not pdocs:
            continue
        proot, players = effective_root(parent_file, pdocs[0], reader, chain)
        if proot is None:
            continue
        merged = proot if merged is None else merge(merged, proot)
        layers.extend(p for p in players if p not in layers)
    layers.append(file.path)
    return (root if merged is None else merge(merged, root)), layers


def load_file(path: str, reader: Reader) -> SourceFile | None:
    """Another file that one linted file pulls in (a `defaults:` parent, the config a script
    names), read as `open(path, encoding="utf-8-sig")` would, at most 4 Mi characters (the
    default size limit).  The bytes come through the engine's `reader`, which bounds the read
    and notes the file for the cache."""
    import io

    data = reader(path)
    if data is None:
        return None
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig").read(4 * 1024 * 1024)
    except UnicodeDecodeError:
        return None
    return SourceFile(path, text)


def _docs(file: SourceFile) -> list[Document]:
    try:
        return load_yaml(file.text, file)
    except TreeError:
        return []
