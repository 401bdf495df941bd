"""Turn mapping entries of a YAML/JSON tree into `Arg`s, with OmegaConf interpolations resolved.

A value that is an interpolation (`${a.b}`, `${.x}`, `${multiply:4, ${.hidden_size}}`, ...) or
`???` is resolved by OmegaConf (`documents.omega`), with the resolvers NeMo and its launchers
register (`hydra.RESOLVERS`); a value OmegaConf cannot give (`${oc.env:X}`, a missing key, a
resolver fp8lint does not evaluate, a cycle) stays unknown with a note: never guessed.  The
entries of one mapping are resolved together, so a section costs one OmegaConf call, and only
files with such values load OmegaConf at all.  The recognizers keep reading `Node` trees; the
value comes from OmegaConf and the spans from the tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fp8lint.documents.omega import lookup, needs_omegaconf
from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, Node
from fp8lint.frameworks.shared.base import Arg
from fp8lint.model import EditInfo, Span

if TYPE_CHECKING:
    from fp8lint.documents.omega import Interpolations, Resolved

__all__ = ["args_of_map", "edit_info", "lookup"]

_cache: dict[int, tuple[Node, Interpolations]] = {}  # root id -> (root, its resolver)


def interpolations(root: Node) -> Interpolations:
    """The resolver of one tree, kept while its recognizers run (the root is held, so its id
    stays its own)."""
    found = _cache.get(id(root))
    if found is not None and found[0] is root:
        return found[1]
    from fp8lint.documents.omega import Interpolations
    from fp8lint.frameworks.shared.hydra import RESOLVERS

    made = Interpolations(root, RESOLVERS)
    if len(_cache) >= 4:
        _cache.pop(next(iter(_cache)))
    _cache[id(root)] = (root, made)
    return made


def arg_of(
    file: SourceFile,
    key: Node,
    value: Node,
    key_text: str,
    resolved: Resolved | None,
    root: Node,
    spans: dict[tuple[str, ...], Span | None],
) -> Arg:
    """One entry as an `Arg`; `spans` holds the span of each key a value came through,
    shared by the entries of one mapping (a chain of copies names the same keys again)."""
    via: list[Span] = []
    if value.kind == "alias":
        via.append(file.span_of(value.deref()))
    shown = value.deref()
    raw = shown.raw if shown.kind == "scalar" else None
    result: Any = shown.value
    known = True
    note: str | None = f"via alias `*{value.anchor}`" if value.kind == "alias" else None
    if shown.kind != "scalar":
        result, known, note = None, False, "not a single value"
    elif resolved is not None:
        result, known, note = resolved.value, resolved.known, resolved.note
        if not known:
            result = shown.value  # the text as written, for notes and fixes
        for path in resolved.via:
            if path not in spans:
                target = lookup(root, path)
                spans[path] = file.span_of(target.deref()) if target is not None else None
            span = spans[path]
            if span is not None:
                via.append(span)
    elif not shown.typed:
        result, known, note = shown.raw, False, f"custom tag `{shown.tag}`"
    return Arg(
        key=key_text,
        value=result,
        span=file.span(key.start, value.end),
        value_span=file.span_of(value),
        known=known,
        raw=raw,
        note=note,
        via=tuple(via),
    )


def args_of_map(
    file: SourceFile,
    root: Node,
    parent: tuple[str, ...],
    mapping: Node,
    spell: str = "{key}",
    interpolate: bool = True,
) -> dict[str, Arg]:
    """Scalar entries of `mapping` (found at `parent` in `root`) as Args keyed by their plain
    key.  `interpolate=False` leaves `${...}` as text, for files that are not OmegaConf's
    (Megatron's functional-test `MODEL_ARGS`, whose `${VAR}` the launcher's shell fills)."""
    node = mapping.deref()
    own = {id(k) for k, _ in node.value} if node.kind == "map" else set()
    entries: list[tuple[Node, Node]] = []
    for k, v in mapping.items():
        if k.kind != "scalar" or k.raw is None:
            continue
        if v.deref().kind != "scalar":
            continue
        entries.append((k, v))
    pending: list[tuple[str, ...]] = []
    if interpolate:
        pending = [(*parent, str(k.raw)) for k, v in entries if needs_omegaconf(v.deref())]
    resolved: dict[tuple[str, ...], Resolved] = {}
    if pending:
        resolved = interpolations(root).resolve(pending)
    out: dict[str, Arg] = {}
    spans: dict[tuple[str, ...], Span | None] = {}
    for k, v in entries:
        assert k.raw is not None
        found = resolved.get((*parent, k.raw))
        if found is not None:
            at = lookup(root, (*parent, k.raw))
            if at is None or at.deref() is not v.deref():
                found = _elsewhere(v)  # the entry is not where `parent` says: not resolved
        # not str.format: `spell` may hold a key written with braces (`a{b}:`)
        arg = arg_of(file, k, v, spell.replace("{key}", k.raw), found, root, spans)
        out[k.raw] = _shared(arg, merged=id(k) not in own, anchored=v.deref().aliased)
    return out


def _shared(arg: Arg, merged: bool, anchored: bool) -> Arg:
    """An entry merged in with `<<: *base`, or a value some alias refers to, is written once
    and read in several places: it carries its own span in `via`, so that findings name where
    it is defined and a fix of it is unsafe (every other use changes too)."""
    if not (merged or anchored) or arg.via:
        return arg
    from dataclasses import replace

    why = "merged in with `<<`" if merged else "anchored and used elsewhere through an alias"
    return replace(arg, via=(arg.value_span,), note=arg.note or why)


def _elsewhere(value: Node) -> Resolved:
    from fp8lint.documents.omega import Resolved

    return Resolved(None, False, f"`{value.deref().value}` could not be resolved here")


def edit_info(
    file: SourceFile, doc: Document, mapping: Node, keys: dict[str, str], after_fp8: bool = True
) -> EditInfo:
    """Where a fix inserts into `mapping`: after its last FP8 entry (`after_fp8`, for mixed
    sections such as `model:`), else after its last entry; with that entry's indentation and
    the mapping's flow or block style.  A mapping that an alias or a `<<:` merge key reads
    is shared: an edit in it changes those keys too, so no fix writes into it."""
    shared = None
    if mapping.kind == "alias" or mapping.deref().aliased:
        line = mapping.deref().start.line + 1
        how = "merged with `<<` into" if mapping.deref().merged else "read through an alias by"
        shared = f"the mapping at line {line} is {how} another key"
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
        read_only=shared,
    )


def submap(node: Node | None, *path: str) -> Node | None:
    """The mapping at `path` under `node` (aliases followed), or None where a step is missing
    or not a mapping."""
    for key in path:
        if node is None:
            return None
        pair = node.deref().get(key)
        node = pair[1].deref() if pair is not None and pair[1].is_map else None
    return node
