"""A position-keeping tree for YAML and JSON documents.

Both formats load into the same `Node` type so that framework recognizers never care which
one they read.  YAML is read as libyaml *events* (never constructed into Python objects), so
aliases stay references: an alias bomb costs nothing, `!!python/object` tags are plain text,
and every alias use keeps its own position.  JSON is read by a small iterative scanner, since
the standard library keeps no positions.

This module must stay light: no pydantic.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from fp8lint.diagnostics import LocatedError

MAX_DEPTH = 1000
MAX_INT_CHARS = 4300  # Python's own limit for int(str); longer integers stay text

Kind = Literal["map", "seq", "scalar", "alias"]


@dataclass(frozen=True, slots=True)
class Pos:
    """0-based line and column, and a character index into the decoded text.  `origin` names
    the file the position belongs to when a tree mixes files (an effective config merged
    from a YAML file, its `defaults:` parents and a script's overrides)."""

    line: int
    column: int
    index: int
    origin: Any = field(default=None, compare=False)


@dataclass(slots=True)
class Node:
    kind: Kind
    start: Pos
    end: Pos
    value: Any = None  # scalar: the typed value; map: list of (key, value); seq: list of nodes
    raw: str | None = None  # scalar: the text as written (without quotes)
    tag: str | None = None
    style: str | None = None  # scalar quote style or "flow"/"block" for collections
    anchor: str | None = None
    target: Node | None = None  # for an alias: the node its anchor named
    doc_index: int = 0
    typed: bool = True  # False when a scalar's tag could not be read safely
    # an anchored node some alias refers to: its text is shared, an edit changes every use
    aliased: bool = False
    # a mapping merged into another with `<<: *it`: a template, not a configuration itself
    merged: bool = False
    # a mapping's entries by key, built on the first `get`: a tree is not changed once built,
    # and a scan per `get` made reading every key of a large mapping quadratic
    by_key: dict[Any, tuple[Node, Node]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    # -- navigation ---------------------------------------------------------------
    def deref(self) -> Node:
        node = self
        seen = 0
        while node.kind == "alias" and node.target is not None and seen < 64:
            node = node.target
            seen += 1
        return node

    def items(self, _depth: int = 0) -> Iterator[tuple[Node, Node]]:
        """Mapping entries, with YAML merge keys (`<<`) expanded after explicit keys."""
        node = self.deref()
        if node.kind != "map":
            return
        merged: list[Node] = []
        for k, v in node.value:
            if k.kind == "scalar" and k.raw == "<<" and k.tag == "tag:yaml.org,2002:merge":
                merged.append(v)
                continue
            yield k, v
        seen_keys = {k.raw for k, _ in node.value}
        for m in merged:
            sources = [m.deref()]
            if sources[0].kind == "seq":
                sources = [s.deref() for s in sources[0].value]
            for src in sources:
                if src is node or _depth > 32:
                    continue  # a mapping merged into itself: nothing new
                for k, v in src.items(_depth + 1):
                    if k.raw not in seen_keys:
                        seen_keys.add(k.raw)
                        yield k, v

    def get(self, key: str) -> tuple[Node, Node] | None:
        """The (key node, value node) pair for `key`; the last one wins, as in YAML loaders."""
        node = self.deref()
        if node.by_key is None:
            node.by_key = {k.raw: (k, v) for k, v in node.items() if k.kind == "scalar"}
        return node.by_key.get(key)

    def keys(self) -> list[str]:
        return [str(k.raw) for k, _ in self.items()]

    @property
    def is_map(self) -> bool:
        return self.deref().kind == "map"

    @property
    def is_seq(self) -> bool:
        return self.deref().kind == "seq"

    @property
    def is_scalar(self) -> bool:
        return self.deref().kind == "scalar"


@dataclass(slots=True)
class Document:
    root: Node | None
    index: int
    start: Pos
    anchors: dict[str, Node] = field(default_factory=dict)
    syntax: Literal["yaml", "json"] = "yaml"


class TreeError(LocatedError):
    """A YAML/JSON syntax error with a 1-based line and column."""


# ---------------------------------------------------------------------------------- YAML


def load_yaml(text: str, origin: Any = None) -> list[Document]:
    """Every document of a YAML stream, as position-keeping trees."""
    import yaml
    from yaml import events as ev
    from yaml.resolver import Resolver

    loader_cls: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolver = Resolver()
    docs: list[Document] = []
    stack: list[tuple[Node, list[Any], Node | None]] = []  # (node, children, pending key)
    anchors: dict[str, Node] = {}
    doc: Document | None = None

    # libyaml also breaks lines at NEL, LS and PS; spans count lines as every other source
    # does (CR, LF, CRLF), so with those characters present positions come from the index
    starts = line_starts(text) if _YAML_ONLY_BREAKS.search(text) else None

    def pos(mark: Any) -> Pos:
        if mark is None:
            return Pos(0, 0, 0, origin)
        if starts is not None:
            import bisect

            line = bisect.bisect_right(starts, mark.index) - 1
            return Pos(line, mark.index - starts[line], mark.index, origin)
        return Pos(mark.line, mark.column, mark.index, origin)

    def attach(node: Node) -> None:
        nonlocal doc
        if not stack:
            assert doc is not None
            doc.root = node
            return
        parent, children, pending = stack[-1]
        if parent.kind == "seq":
            children.append(node)
        elif pending is None:
            stack[-1] = (parent, children, node)
        else:
            children.append((pending, node))
            stack[-1] = (parent, children, None)

    try:
        for event in yaml.parse(text, Loader=loader_cls):
            if isinstance(event, ev.DocumentStartEvent):
                doc = Document(root=None, index=len(docs), start=pos(event.start_mark))
                anchors = doc.anchors
            elif isinstance(event, ev.DocumentEndEvent):
                if doc is not None:
                    docs.append(doc)
                doc = None
            elif isinstance(event, ev.ScalarEvent):
                node = _yaml_scalar(event, resolver, pos, len(docs))
                if event.anchor:
                    anchors[event.anchor] = node
                attach(node)
            elif isinstance(event, ev.AliasEvent):
                attach(_yaml_alias(event, anchors, stack, pos, len(docs)))
            elif isinstance(event, (ev.MappingStartEvent, ev.SequenceStartEvent)):
                if len(stack) >= MAX_DEPTH:
                    p = pos(event.start_mark)
                    raise TreeError(
                        f"nesting deeper than {MAX_DEPTH} levels", p.line + 1, p.column + 1
                    )
                kind: Kind = "map" if isinstance(event, ev.MappingStartEvent) else "seq"
                node = Node(
                    kind,
                    pos(event.start_mark),
                    pos(event.end_mark),
                    value=[],
                    tag=event.tag,
                    style="flow" if event.flow_style else "block",
                    anchor=event.anchor,
                    doc_index=len(docs),
                )
                if event.anchor:
                    anchors[event.anchor] = node
                attach(node)
                stack.append((node, node.value, None))
            elif isinstance(event, (ev.MappingEndEvent, ev.SequenceEndEvent)):
                node, _children, _pending = stack.pop()
                node.end = pos(event.end_mark)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        col = mark.column + 1 if mark else 1
        if mark is not None and starts is not None:
            line, col = _line_col(text, mark.index)
        problem = exc.problem or exc.context or "invalid YAML"
        line, col = _clamp(text, line, col)
        raise TreeError(f"YAML syntax error: {problem}", line, col) from None
    except yaml.YAMLError as exc:  # ReaderError and friends carry a position, not a mark
        line, col = _line_col(text, getattr(exc, "position", 0) or 0)
        reason = getattr(exc, "reason", None) or str(exc).splitlines()[0]
        raise TreeError(f"YAML error: {reason}", line, col) from None
    except RecursionError:
        raise TreeError("nesting too deep to read", 1, 1) from None
    return docs


def _yaml_alias(
    event: Any,
    anchors: dict[str, Node],
    stack: list[tuple[Node, list[Any], Node | None]],
    pos: Callable[[Any], Pos],
    doc_index: int,
) -> Node:
    """The node of an alias event; its target learns it is aliased, and merged when the
    alias is a merge key's value (`<<: *base`, `<<: [*a, *b]`)."""
    target = anchors.get(event.anchor or "")
    if target is None:
        p = pos(event.start_mark)
        raise TreeError(f"found undefined alias `*{event.anchor}`", p.line + 1, p.column + 1)
    target.aliased = True
    if stack and stack[-1][2] is not None and _is_merge_key(stack[-1][2]):
        target.merged = True  # `<<: *base`
    elif len(stack) >= 2 and stack[-1][0].kind == "seq":
        entries = stack[-2][1]  # the mapping that holds this sequence
        if stack[-2][0].kind == "map" and entries and _is_merge_key(entries[-1][0]):
            target.merged = True  # `<<: [*a, *b]`
    return Node(
        "alias",
        pos(event.start_mark),
        pos(event.end_mark),
        anchor=event.anchor,
        target=target,
        doc_index=doc_index,
    )


def _is_merge_key(node: Node) -> bool:
    return node.kind == "scalar" and node.raw == "<<" and node.tag == "tag:yaml.org,2002:merge"


_SCALAR_TYPES = {
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:bool": "bool",
    "tag:yaml.org,2002:int": "int",
    "tag:yaml.org,2002:float": "float",
    "tag:yaml.org,2002:str": "str",
    "tag:yaml.org,2002:merge": "merge",
}


def _yaml_scalar(event: Any, resolver: Any, pos: Any, doc_index: int) -> Node:
    from yaml.nodes import ScalarNode

    tag = event.tag
    if tag is None or tag == "!":
        tag = resolver.resolve(ScalarNode, event.value, event.implicit)
    typed = True
    value: Any
    kind = _SCALAR_TYPES.get(tag)
    if kind is None:
        value, typed = event.value, False  # a custom or unsafe tag: keep the text only
    else:
        value = _construct(kind, event.value)
    return Node(
        "scalar",
        pos(event.start_mark),
        pos(event.end_mark),
        value=value,
        raw=event.value,
        tag=tag,
        style=event.style or "plain",
        anchor=event.anchor,
        doc_index=doc_index,
        typed=typed,
    )


def _construct(kind: str, raw: str) -> Any:
    if kind == "null":
        return None
    if kind == "bool":
        return raw.lower() in ("yes", "true", "on", "y")
    if kind == "int":
        if len(raw) > MAX_INT_CHARS:
            return raw  # base-60 ints cost quadratic time; no setting is that long
        text = raw.replace("_", "")
        sign = -1 if text.startswith("-") else 1
        text = text.lstrip("+-")
        try:
            if text.startswith("0b"):
                return sign * int(text[2:], 2)
            if text.startswith("0x"):
                return sign * int(text[2:], 16)
            if text.startswith("0o"):
                return sign * int(text[2:], 8)
            if ":" in text:
                total = 0
                for part in text.split(":"):
                    total = total * 60 + int(part)
                return sign * total
            if len(text) > 1 and text.startswith("0"):
                return sign * int(text, 8)
            return sign * int(text)
        except ValueError:
            return raw
    if kind == "float":
        text = raw.replace("_", "").lower()
        if text in (".inf", "+.inf"):
            return float("inf")
        if text == "-.inf":
            return float("-inf")
        if text == ".nan":
            return float("nan")
        try:
            return float(text)
        except ValueError:
            return raw
    return raw


def _clamp(text: str, line: int, col: int) -> tuple[int, int]:
    """A position inside `text`: libyaml puts end-of-stream errors on a line after the last."""
    starts = line_starts(text)
    if line <= len(starts):
        return line, col
    return len(starts), len(text) - starts[-1] + 1


def _line_col(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of `index`, with lines as everywhere else (CR, LF, CRLF)."""
    import bisect

    index = max(0, min(index, len(text)))
    starts = line_starts(text)
    line = bisect.bisect_right(starts, index) - 1
    return line + 1, index - starts[line] + 1


# ---------------------------------------------------------------------------------- JSON

_JSON_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<str>"(?:[^"\\\x00-\x1f]|\\.)*")
  | (?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
  | (?P<lit>true|false|null|NaN|Infinity|-Infinity)
  | (?P<punct>[{}\[\]:,])
    """,
    re.VERBOSE,
)


_JSON_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "NaN": float("nan"),  # json.loads accepts these three, so the scanner must too
    "Infinity": float("inf"),
    "-Infinity": float("-inf"),
}

_BREAK = re.compile(r"\r\n|\r|\n")
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")


def line_starts(text: str) -> list[int]:
    """Character index of each line start; CRLF, lone CR and LF all end a line, as in YAML."""
    if "\r" not in text:
        starts = [0]
        find = text.find
        i = find("\n")
        while i != -1:
            starts.append(i + 1)
            i = find("\n", i + 1)
        return starts
    return [0] + [m.end() for m in _BREAK.finditer(text)]


def load_json(text: str) -> list[Document]:
    """A JSON document as a position-keeping tree (one `Document`)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        line, col = _line_col(text, exc.pos)  # json counts only LF as a line break
        raise TreeError(f"JSON syntax error: {exc.msg}", line, col) from None
    except RecursionError:
        raise TreeError("nesting too deep to read", 1, 1) from None
    except ValueError as exc:  # an integer longer than Python converts
        m = re.search(f"[0-9]{{{MAX_INT_CHARS}}}", text)
        line, col = _line_col(text, m.start() if m else 0)
        raise TreeError(f"JSON error: {str(exc).split(';')[0]}", line, col) from None
    starts = line_starts(text)

    import bisect

    def pos(index: int) -> Pos:
        line = bisect.bisect_right(starts, index) - 1
        return Pos(line, index - starts[line], index)

    doc = Document(root=None, index=0, start=Pos(0, 0, 0), syntax="json")
    stack: list[tuple[Node, Node | None]] = []

    def attach(node: Node) -> None:
        if not stack:
            doc.root = node
            return
        parent, pending = stack[-1]
        if parent.kind == "seq":
            parent.value.append(node)
        elif pending is None:
            stack[-1] = (parent, node)
        else:
            parent.value.append((pending, node))
            stack[-1] = (parent, None)

    index = 1 if text.startswith("\ufeff") else 0
    for m in _JSON_TOKEN.finditer(text, index):
        group = m.lastgroup
        start = m.start()
        if group == "ws":
            continue
        if group == "punct":
            ch = m.group()
            if ch in "{[":
                if len(stack) >= MAX_DEPTH:
                    p = pos(start)
                    raise TreeError(
                        f"nesting deeper than {MAX_DEPTH} levels", p.line + 1, p.column + 1
                    )
                node = Node(
                    "map" if ch == "{" else "seq", pos(start), pos(start), value=[], style="flow"
                )
                attach(node)
                stack.append((node, None))
            elif ch in "}]":
                node, _ = stack.pop()
                node.end = pos(m.end())
            continue
        raw = m.group()
        if group == "str":
            value: Any = json.loads(raw)
            if "\\u" in raw and not _encodable(value):
                value = value.encode("utf-8", "backslashreplace").decode("ascii", "replace")
            node = Node("scalar", pos(start), pos(m.end()), value=value, raw=value, style='"')
        elif group == "num":
            value = json.loads(raw)
            node = Node("scalar", pos(start), pos(m.end()), value=value, raw=raw, style="plain")
        else:
            value = _JSON_LITERALS[raw]
            node = Node("scalar", pos(start), pos(m.end()), value=value, raw=raw, style="plain")
        attach(node)
    return [doc]


def _encodable(text: str) -> bool:
    """False for a string with lone surrogates (`"\\ud800"` in JSON), which no output can
    print: such a string is kept as its escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk(node: Node, max_depth: int = MAX_DEPTH) -> Iterator[tuple[tuple[str, ...], Node]]:
    """Every mapping in a tree with its key path, breadth-first, without following aliases."""
    queue: deque[tuple[tuple[str, ...], Node]] = deque([((), node)])
    while queue:
        path, current = queue.popleft()
        if current.kind == "map":
            yield path, current
            if len(path) < max_depth:
                for k, v in current.value:
                    queue.append(((*path, str(k.raw)), v))
        elif current.kind == "seq" and len(path) < max_depth:
            for i, v in enumerate(current.value):
                queue.append(((*path, str(i)), v))
