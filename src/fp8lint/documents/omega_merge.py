"""Layers (Hydra `defaults:`, command-line overrides) merged by `OmegaConf.merge` and item
assignment, on *tokens*: every scalar is replaced by a token naming the (key, value) nodes that
wrote it, so the merged result says which node won each value (OmegaConf's rules: later layers
win, `???` does not replace a value, lists are replaced whole).  The merged `Node` tree is
rebuilt from those nodes; positions and provenance stay fp8lint's own.  OmegaConf is imported
only inside `merge`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fp8lint.diagnostics import LocatedError
from fp8lint.documents.omega_base import MAX_NODES, MISSING, Path, TooLarge
from fp8lint.documents.tree import Kind, Node


class MergeError(LocatedError):
    """Layers OmegaConf cannot merge (a mapping over a list, a value too large to merge)."""


@dataclass(frozen=True)
class Edit:
    """A command-line override on top of the layers: set `path` to `value` (written with the
    key node `key`), or delete it (`value` None)."""

    path: Path
    key: Node
    value: Node | None


def merge(layers: Sequence[Node], edits: Sequence[Edit] = ()) -> Node:
    """`layers` (mappings, base first) merged by OmegaConf, then `edits` applied; the result is
    a tree of the nodes that won, so every value keeps the file and line that wrote it."""
    from omegaconf import DictConfig, OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    table: list[tuple[Node | None, Node]] = []  # token -> (key node, value node)
    indexes: list[dict[Path, tuple[Node | None, Node]]] = []
    budget = [MAX_NODES]
    plains = []
    for layer in layers:
        index: dict[Path, tuple[Node | None, Node]] = {(): (None, layer)}
        try:
            plains.append(_tokens(layer, (), table, index, budget, 0))
        except TooLarge:
            raise MergeError(
                f"the layers hold more than {MAX_NODES:,} values (aliases expanded); not merged"
            ) from None
        indexes.append(index)
    try:
        cfg = OmegaConf.merge(*plains) if plains else OmegaConf.create({})
        for edit in edits:
            index = {}
            _apply(cfg, edit, table, index)
            indexes.append(index)
        data = OmegaConf.to_container(cfg, resolve=False)
    except (OmegaConfBaseException, TypeError, ValueError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise MergeError(f"OmegaConf cannot merge these layers: {message}") from None
    assert isinstance(cfg, DictConfig)
    return _rebuild(data, (), table, indexes)


def _token(n: int) -> str:
    return f"\x00fp8lint:{n}"


def _tokens(
    node: Node,
    path: Path,
    table: list[tuple[Node | None, Node]],
    index: dict[Path, tuple[Node | None, Node]],
    budget: list[int],
    depth: int,
    key: Node | None = None,
    written: Node | None = None,
) -> Any:
    budget[0] -= 1
    if budget[0] < 0 or depth > 200:
        raise TooLarge
    target = node.deref()
    if target.kind == "map":
        out: dict[str, Any] = {}
        for k, v in target.items():
            if k.kind != "scalar" or k.raw is None:
                continue
            child = (*path, k.raw)
            index[child] = (k, v)
            out[k.raw] = _tokens(v, child, table, index, budget, depth + 1, k, v)
        return out
    if target.kind == "seq":
        items = []
        for i, v in enumerate(target.value):
            child = (*path, str(i))
            index[child] = (None, v)
            items.append(_tokens(v, child, table, index, budget, depth + 1, None, v))
        return items
    if target.kind == "scalar" and target.value == MISSING:
        return MISSING  # OmegaConf's rule: `???` does not replace a value below it
    table.append((key, written if written is not None else node))
    return _token(len(table) - 1)


def _apply(
    cfg: Any, edit: Edit, table: list[tuple[Node | None, Node]], index: dict[Path, Any]
) -> None:
    """One override, by OmegaConf: `OmegaConf.update` (which turns a value in the way into a
    mapping, as fp8lint always has) or `del`; mappings it creates are noted in `index`."""
    from omegaconf import DictConfig, OmegaConf

    def mapping_at(path: Path) -> Any:
        if not path:
            return cfg
        found = OmegaConf.select(cfg, ".".join(path), default=None, throw_on_missing=False)
        return found if isinstance(found, DictConfig) else None

    if edit.value is None:
        parent = mapping_at(edit.path[:-1])
        if parent is not None and edit.path[-1] in parent:
            del parent[edit.path[-1]]
        return
    for cut in range(1, len(edit.path)):
        if mapping_at(edit.path[:cut]) is None:
            start, end = edit.key.start, edit.key.end
            name = edit.path[cut - 1]
            key = Node("scalar", start, end, value=name, raw=name, style="plain")
            index[edit.path[:cut]] = (key, Node("map", start, end, value=[], style="block"))
    table.append((edit.key, edit.value))
    OmegaConf.update(cfg, ".".join(edit.path), _token(len(table) - 1), merge=False, force_add=True)


def _rebuild(
    data: Any,
    path: Path,
    table: list[tuple[Node | None, Node]],
    indexes: list[dict[Path, tuple[Node | None, Node]]],
) -> Node:
    if isinstance(data, str) and data.startswith("\x00fp8lint:"):
        return table[int(data.rsplit(":", 1)[1])][1]
    kind: Kind = "map" if isinstance(data, dict) else "seq" if isinstance(data, list) else "scalar"
    template = _last(indexes, path, kind)
    if kind == "scalar":
        return template[1] if template is not None else Node("scalar", *_nowhere(), value=data)
    shape = template[1].deref() if template is not None else Node(kind, *_nowhere(), value=[])
    if isinstance(data, dict):
        entries: list[tuple[Node, Node]] = []
        for name, value in data.items():
            child = (*path, str(name))
            node = _rebuild(value, child, table, indexes)
            entries.append((_key_of(value, child, table, indexes, node), node))
        value_out: Any = entries
    else:
        value_out = [_rebuild(v, (*path, str(i)), table, indexes) for i, v in enumerate(data)]
    return Node(
        kind,
        shape.start,
        shape.end,
        value=value_out,
        style=shape.style,
        anchor=shape.anchor,
        doc_index=shape.doc_index,
    )


def _key_of(
    value: Any,
    path: Path,
    table: list[tuple[Node | None, Node]],
    indexes: list[dict[Path, tuple[Node | None, Node]]],
    node: Node,
) -> Node:
    if isinstance(value, str) and value.startswith("\x00fp8lint:"):
        key = table[int(value.rsplit(":", 1)[1])][0]
    else:
        kind = "map" if isinstance(value, dict) else "seq" if isinstance(value, list) else None
        found = _last(indexes, path, kind or "scalar")
        key = found[0] if found is not None else None
    if key is None:
        key = Node("scalar", node.start, node.start, value=path[-1], raw=path[-1], style="plain")
    return key


def _last(
    indexes: list[dict[Path, tuple[Node | None, Node]]], path: Path, kind: str
) -> tuple[Node | None, Node] | None:
    """The (key, value) of the last layer that wrote `path` as a `kind`."""
    for index in reversed(indexes):
        found = index.get(path)
        if found is not None and found[1].deref().kind == kind:
            return found
    return None


def _nowhere() -> tuple[Any, Any]:
    from fp8lint.documents.tree import Pos

    return Pos(0, 0, 0), Pos(0, 0, 0)
