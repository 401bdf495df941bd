"""Turn mapping entries of a YAML/JSON tree into `Arg`s, resolving OmegaConf interpolations.

`${a.b}` (absolute) and `${.x}` / `${..x}` (relative) are followed inside the same document,
through aliases, up to a bounded depth.  Anything else (`${oc.env:X}`, `${multiply:...}`, a
missing key, text around the interpolation) leaves the value unknown: never guessed.
"""

from __future__ import annotations

import re
from typing import Any

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.base import Arg
from fp8lint.model import EditInfo, Span

_WHOLE = re.compile(r"^\$\{([^${}]*)\}$")
MAX_HOPS = 16


def lookup(root: Node, parts: list[str]) -> Node | None:
    node: Node | None = root
    for part in parts:
        if node is None:
            return None
        node = node.deref()
        if node.kind == "map":
            pair = node.get(part)
            node = pair[1] if pair else None
        elif node.kind == "seq" and _is_index(part) and int(part) < len(node.value):
            node = node.value[int(part)]
        else:
            return None
    return node


def _is_index(part: str) -> bool:
    """A plain list index (`"²"` is a digit but not a number; 5,000 digits are no index)."""
    return part.isascii() and part.isdigit() and len(part) < 20


def resolve(
    file: SourceFile, root: Node, parent: tuple[str, ...], node: Node
) -> tuple[Any, bool, tuple[Span, ...], str | None]:
    """(value, known, via spans, note) for a scalar that may be an interpolation."""
    via: list[Span] = []
    if node.kind == "alias":
        via.append(file.span_of(node.deref()))
    node = node.deref()
    for _ in range(MAX_HOPS):
        if node.kind != "scalar":
            return None, False, tuple(via), "not a single value"
        value = node.value
        if not isinstance(value, str) or "${" not in value:
            if not node.typed:
                return node.raw, False, tuple(via), f"custom tag `{node.tag}`"
            return value, True, tuple(via), None
        m = _WHOLE.match(value.strip())
        if not m:
            return value, False, tuple(via), f"`{value}` is built from interpolations"
        expr = m.group(1).strip()
        if ":" in expr:
            return value, False, tuple(via), f"`{value}` uses a resolver fp8lint does not evaluate"
        if expr.startswith("."):
            dots = len(expr) - len(expr.lstrip("."))
            base = list(parent[: max(0, len(parent) - (dots - 1))])
            if dots - 1 > len(parent):
                return value, False, tuple(via), f"`{value}` points above the document"
            parts = base + [p for p in expr[dots:].split(".") if p]
        else:
            parts = [p for p in expr.split(".") if p]
        target = lookup(root, parts)
        if target is None:
            return value, False, tuple(via), f"`{value}` names a key that is not in this file"
        target = target.deref()
        via.append(file.span_of(target))
        parent = tuple(parts[:-1])
        node = target
    return None, False, tuple(via), "interpolation chain too long"


def arg_of(
    file: SourceFile, root: Node, parent: tuple[str, ...], key: Node, value: Node, key_text: str
) -> Arg:
    resolved, known, via, why = resolve(file, root, parent, value)
    shown = value.deref()
    raw = shown.raw if shown.kind == "scalar" else None
    return Arg(
        key=key_text,
        value=resolved,
        span=file.span(key.start, value.end),
        value_span=file.span_of(value),
        known=known,
        raw=raw,
        note=why
        if not known
        else (f"via alias `*{value.anchor}`" if value.kind == "alias" else None),
        via=via,
    )


def args_of_map(
    file: SourceFile,
    root: Node,
    parent: tuple[str, ...],
    mapping: Node,
    spell: str = "{key}",
) -> dict[str, Arg]:
    """Scalar entries of `mapping` as Args keyed by their plain key."""
    out: dict[str, Arg] = {}
    for k, v in mapping.items():
        if k.kind != "scalar" or k.raw is None:
            continue
        if v.deref().kind != "scalar":
            continue
        # not str.format: `spell` may hold a key written with braces (`a{b}:`)
        out[k.raw] = arg_of(file, root, parent, k, v, spell.replace("{key}", k.raw))
    return out


def edit_info(
    file: SourceFile, doc: Document, mapping: Node, keys: dict[str, str], after_fp8: bool = True
) -> EditInfo:
    """Where a fix inserts into `mapping`: after its last FP8 entry (`after_fp8`, for mixed
    sections such as `model:`), else after its last entry; with that entry's indentation and
    the mapping's flow or block style."""
    mapping = mapping.deref()
    values: dict[str, Span] = {}
    anchor: tuple[Node, Node] | None = None
    fp8_anchor: tuple[Node, Node] | None = None
    lines: set[int] = {mapping.start.line}
    for k, v in mapping.value if mapping.kind == "map" else ():
        lines.add(k.start.line)
        if k.kind != "scalar" or k.raw is None:
            continue
        if v.kind in ("scalar", "alias"):
            values[k.raw] = file.span_of(v)
        anchor = (k, v)
        if "fp8" in k.raw.lower():
            fp8_anchor = (k, v)
    chosen = (fp8_anchor if after_fp8 else None) or anchor
    flow = mapping.style == "flow" and (doc.syntax == "yaml" or len(lines) == 1)
    insert_into = None
    if chosen is None and mapping.style == "flow":
        after_brace = file.pos_of_index(mapping.start.index + 1)
        insert_into = file.span(after_brace, after_brace)
    return EditInfo.model_construct(
        syntax=doc.syntax,
        flow=flow,
        insert_after=file.span(chosen[0].start, chosen[1].end) if chosen else None,
        insert_into=insert_into,
        indent=" " * chosen[0].start.column if chosen else "",
        keys=keys,
        values=values,
    )
