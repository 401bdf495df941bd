"""OmegaConf over position-keeping trees: interpolations (`${...}`, `???`) and layer merges.

fp8lint reads YAML into `tree.Node`s, which know where every value is written; OmegaConf
knows what `${a.b}`, `${.x}`, `${multiply:...}`, `???` and a merge of Hydra layers mean.  This
module hands OmegaConf plain containers built from the trees and maps its answers back:

- `Interpolations` resolves the keys a recognizer reads.  OmegaConf gets only the part of the
  document those keys need: the keys and what they reference, transitively (a referenced
  section whole).  Before OmegaConf sees anything the reference graph is walked once, with
  bounds: cycles, chains deeper than `MAX_CHAIN`, strings that would expand past
  `MAX_EXPANSION` characters (`${a}${a}` doubling) and computed key names (`${${a}}`) stay
  unknown with a note, and are never handed to OmegaConf.
- `merge` merges layers (Hydra `defaults:`, command-line overrides) with `OmegaConf.merge`
  and item assignment, on *tokens*: every scalar is replaced by a token naming the (key, value)
  nodes that wrote it, so the merged result says which node won each value (OmegaConf's rules:
  later layers win, `???` does not replace a value, lists are replaced whole).  The merged
  `Node` tree is rebuilt from those nodes; positions and provenance stay fp8lint's own.

OmegaConf is imported only inside these functions: a file without `${`, `???` or layers to
merge never loads it.  Its resolver registry is process-global; `Interpolations` installs the
resolvers it is given (and fp8lint's stand-ins for OmegaConf's own `oc.*`) with
`replace=True`, once, and again only if someone else changed them.  Nothing user-written runs:
`oc.env` never reads the environment, `oc.create`, `oc.decode`, `oc.deprecated`, `oc.coerce`
and `oc.dict.*` leave the value unknown, and `oc.select` (a pure look-up with a default) is
OmegaConf's own.

This module knows no framework: which resolvers NeMo & co. register is the caller's to say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fp8lint.diagnostics import LocatedError
from fp8lint.documents.tree import Kind, Node

Path = tuple[str, ...]

MISSING = "???"  # OmegaConf's mandatory-value marker
MAX_CHAIN = 32  # references followed from one key, one behind the other
MAX_EXPANSION = 100_000  # characters a resolved value may grow to
MAX_NODES = 50_000  # values one resolution or one merge may hand to OmegaConf
MAX_TEXT = 1_000  # an interpolation string longer than this is not parsed (real ones: < 200)
PRUNE = True  # hand OmegaConf only what the asked keys reference (tests compare both ways)

_UNKNOWN_RESOLVER = "fp8lint.unknown"  # stands for a value fp8lint cannot read (custom tag)


def needs_omegaconf(node: Node) -> bool:
    """True for a scalar whose value only OmegaConf can say: an interpolation or `???`."""
    value = node.value
    return node.kind == "scalar" and isinstance(value, str) and ("${" in value or value == MISSING)


class Unknown(Exception):
    """Raised by a resolver whose result fp8lint does not know; `note` says why."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


class MergeError(LocatedError):
    """Layers OmegaConf cannot merge (a mapping over a list, a value too large to merge)."""


@dataclass(frozen=True)
class Resolved:
    """What OmegaConf makes of one key: its value, or unknown with a note; `via` names the
    keys it was built from (for provenance), nearest first."""

    value: Any
    known: bool
    note: str | None = None
    via: tuple[Path, ...] = ()


Resolver = Callable[..., Any]


# ------------------------------------------------------------------------------ navigation


def lookup(root: Node, parts: Sequence[str]) -> Node | None:
    """The node at `parts` below `root` (aliases and merge keys followed), or None."""
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


# ------------------------------------------------------------------------------- resolvers

_notes: list[str] = []  # what the last failing fp8lint resolver said (OmegaConf keeps only text)
_markers: list[str] = []  # notes of the unknown values in the config being resolved
_installed: dict[str, Any] = {}  # name -> the object OmegaConf holds for it after our install
_installed_from: list[Mapping[str, Resolver | str]] = []


def _stub(name: str, note: str) -> Resolver:
    def unknown(*args: Any) -> Any:
        shown = ",".join(str(a) for a in args)[:80]
        _notes.append(note.format(name=name, args=shown))
        raise Unknown(note)

    return unknown


def _guarded(name: str, fn: Resolver) -> Resolver:
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except Unknown as exc:
            _notes.append(exc.note)
            raise
        except Exception as exc:
            _notes.append(f"`{name}` cannot compute it from these arguments ({exc})")
            raise Unknown(str(exc)) from None

    return call


def _marker(*args: Any) -> Any:
    index = int(args[0]) if args and str(args[0]).isdigit() else -1
    note = _markers[index] if 0 <= index < len(_markers) else "a value fp8lint cannot read"
    _notes.append(note)
    raise Unknown(note)


OC_UNKNOWN = {
    "oc.env": "`${{oc.env:{args}}}` comes from the environment at launch; "
    "fp8lint never reads the environment",
    "oc.create": "`oc.create` builds a configuration at run time; fp8lint does not evaluate it",
    "oc.decode": "`oc.decode` parses text at run time; fp8lint does not evaluate it",
    "oc.deprecated": "`oc.deprecated` redirects to another key with a warning; fp8lint does "
    "not follow it",
    "oc.coerce": "`oc.coerce` converts at run time; fp8lint does not evaluate it",
    "oc.dict.keys": "`oc.dict.keys` lists a section's keys, not a single value",
    "oc.dict.values": "`oc.dict.values` lists a section's values, not a single value",
}


def _table(resolvers: Mapping[str, Resolver | str]) -> dict[str, Resolver]:
    from omegaconf.resolvers import oc

    table: dict[str, Resolver] = {name: _stub(name, note) for name, note in OC_UNKNOWN.items()}
    table["oc.select"] = oc.select  # a pure look-up with a default: OmegaConf's own
    table[_UNKNOWN_RESOLVER] = _marker
    for name, fn in resolvers.items():
        table[name] = _stub(name, fn) if isinstance(fn, str) else _guarded(name, fn)
    return table


def _registry() -> dict[str, Any] | None:
    from omegaconf.basecontainer import BaseContainer

    found = getattr(BaseContainer, "_resolvers", None)
    return found if isinstance(found, dict) else None


def install(resolvers: Mapping[str, Resolver | str]) -> None:
    """Register fp8lint's resolvers with OmegaConf (replace=True), unless they already are."""
    registry = _registry()
    if (
        _installed_from
        and _installed_from[0] is resolvers
        and registry is not None
        and all(registry.get(name) is held for name, held in _installed.items())
    ):
        return
    import inspect

    from omegaconf import OmegaConf

    # 2.4 registers with `register_resolver` (and deprecates `register_new_resolver`); in 2.3
    # `register_resolver` is the legacy, text-only API without `replace`
    modern = "annotation_validation" in inspect.signature(OmegaConf.register_resolver).parameters
    for name, fn in _table(resolvers).items():
        if modern:
            OmegaConf.register_resolver(name, fn, replace=True, annotation_validation="off")
        else:  # 2.3: register_new_resolver (2.3's register_resolver is the legacy one)
            OmegaConf.register_new_resolver(name, fn, replace=True)
    registry = _registry()
    _installed.clear()
    if registry is not None:
        _installed.update({name: registry.get(name) for name in _table(resolvers)})
    _installed_from[:] = [resolvers]


# ------------------------------------------------------------------------ reference graph


@dataclass
class _Info:
    """One key's place in the reference graph."""

    refs: tuple[Path, ...] = ()  # what it references, once per occurrence (`${a}${a}`: twice)
    children: tuple[Path, ...] = ()  # a section's entries
    own: int = 0  # characters of its own
    note: str | None = None  # why it cannot be resolved, found before OmegaConf runs
    copy_of: Path | None = None  # the value is `${that}` and nothing else: a copy of it


def _interpolation_refs(text: str, parent: Path) -> tuple[list[Path], int, str | None, bool]:
    """(paths referenced, resolver calls, problem, whether the text is one `${key}` and
    nothing else) of one interpolation string, read with OmegaConf's own grammar."""
    from omegaconf.errors import GrammarParseError
    from omegaconf.grammar.gen.OmegaConfGrammarParser import OmegaConfGrammarParser as G
    from omegaconf.grammar_parser import parse

    try:
        tree = parse(text)
    except GrammarParseError:
        return [], 0, f"`{_short(text)}` is not a valid OmegaConf interpolation", False
    except RecursionError:
        return [], 0, f"`{_short(text)}` nests too deeply to read", False
    refs: list[Path] = []
    calls = 0
    stack: list[Any] = [tree]
    while stack:
        ctx = stack.pop()
        if isinstance(ctx, G.InterpolationNodeContext):
            dots = 0
            keys: list[str] = []
            for child in ctx.getChildren():
                if isinstance(child, G.ConfigKeyContext):
                    key_ctx: Any = child
                    if key_ctx.interpolation() is not None:
                        return (
                            [],
                            0,
                            f"`{_short(text)}` computes a key name; fp8lint does not",
                            False,
                        )
                    keys.append(child.getText())
                elif child.getText() == "." and not keys:
                    dots += 1
            target = _target(parent, dots, keys)
            if target is not None:
                refs.append(target)
            continue  # a node interpolation holds nothing else to follow
        if isinstance(ctx, G.InterpolationResolverContext):
            calls += 1
            call: Any = ctx
            name = call.resolverName().getText() if call.resolverName() is not None else ""
            seq = call.sequence()
            if name == "oc.select" and seq is not None and seq.element():
                key_arg = seq.element()[0]
                if _has_interpolation(key_arg, G):
                    return [], 0, f"`{_short(text)}` computes a key name; fp8lint does not", False
                key_text = key_arg.getText().strip()
                dots = len(key_text) - len(key_text.lstrip("."))
                target = _target(parent, dots, [k for k in key_text[dots:].split(".") if k])
                if target is not None:
                    refs.append(target)
        children = ctx.getChildren() if hasattr(ctx, "getChildren") else ()
        stack.extend(reversed(list(children)))
    whole: Any = tree
    pure = calls == 0 and len(refs) == 1 and whole.text().getChildCount() == 1
    return refs, calls, None, pure


def _has_interpolation(ctx: Any, grammar: Any) -> bool:
    stack = [ctx]
    while stack:
        c = stack.pop()
        if isinstance(c, grammar.InterpolationContext):
            return True
        if hasattr(c, "getChildren"):
            stack.extend(c.getChildren())
    return False


def _target(parent: Path, dots: int, keys: list[str]) -> Path | None:
    """The absolute path of a reference written in the value at `parent + (key,)`."""
    if dots == 0:
        return tuple(keys)
    up = dots - 1
    if up > len(parent):
        return None  # above the document: OmegaConf reports it
    return (*parent[: len(parent) - up], *keys)


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


# ------------------------------------------------------------------------- interpolations


class Interpolations:
    """Resolves keys of one document (or one merged tree) through OmegaConf."""

    def __init__(
        self, root: Node, resolvers: Mapping[str, Resolver | str], prune: bool | None = None
    ) -> None:
        self.root = root
        self.resolvers = resolvers
        self.prune = PRUNE if prune is None else prune
        self._done: dict[Path, Resolved] = {}
        self._info: dict[Path, _Info] = {}

    # -- the graph ---------------------------------------------------------------------
    def _node(self, path: Path) -> Node | None:
        node = lookup(self.root, path)
        return node.deref() if node is not None else None

    def _info_of(self, path: Path) -> _Info:
        found = self._info.get(path)
        if found is None:
            found = self._info[path] = self._compute_info(path)
        return found

    def _compute_info(self, path: Path) -> _Info:
        node = self._node(path)
        if node is None:
            # a reference through a value that is itself an interpolation (`a: ${b}`, `${a.x}`)
            for cut in range(len(path) - 1, 0, -1):
                above = self._node(path[:cut])
                if above is not None:
                    if needs_omegaconf(above):
                        return _Info(refs=(path[:cut],))
                    break
            return _Info()
        if node.kind == "map":
            children = tuple((*path, str(k.raw)) for k, _ in node.items() if k.kind == "scalar")
            return _Info(children=children, own=2 + 4 * len(children))
        if node.kind == "seq":
            children = tuple((*path, str(i)) for i in range(len(node.value)))
            return _Info(children=children, own=2 + 2 * len(children))
        if node.kind != "scalar":
            return _Info()
        value = node.value
        if not isinstance(value, str) or "${" not in value:
            return _Info(own=len(node.raw or "") + 2)
        if len(value) > MAX_TEXT:
            return _Info(note=f"an interpolation of {len(value)} characters is not resolved")
        refs, calls, problem, pure = _interpolation_refs(value, path[:-1])
        if problem:
            return _Info(note=problem)
        # a resolver's numeric result is short; its text arguments are counted in `own`
        return _Info(
            refs=tuple(refs), own=len(value) + 80 * calls, copy_of=refs[0] if pure else None
        )

    def _section_size(self, path: Path) -> int | str:
        """Characters of a section as written (a section a value refers to is handed over
        as it is; OmegaConf resolves nothing inside it to return it), or why it is too big."""
        total = 0
        count = 0
        stack: list[tuple[Path, int, frozenset[int]]] = [(path, 0, frozenset())]
        while stack:
            here, depth, above = stack.pop()
            node = self._node(here)
            count += 1
            if count > MAX_NODES or depth > 100:
                return "refers to too large a part of the configuration; not resolved"
            if node is not None and node.kind in ("map", "seq"):
                if id(node) in above:
                    return "refers to a section that contains itself (a recursive alias)"
                inner = above | {id(node)}
                stack.extend((c, depth + 1, inner) for c in self._info_of(here).children)
            total += self._info_of(here).own
        return total

    def _walk(self, start: Path) -> tuple[set[Path], str | None]:
        """Everything `start` needs, or why it cannot be resolved (cycle, depth, size).

        Only references can make OmegaConf recurse, so cycles and depth are checked along
        them; the sections they reach are then added whole, with what those reference."""
        bound: dict[Path, int] = {}
        on_path: list[Path] = []
        on_set: set[Path] = set()
        stack: list[tuple[Path, bool]] = [(start, False)]
        while stack:
            path, leaving = stack.pop()
            info = self._info_of(path)
            if leaving:
                on_path.pop()
                on_set.discard(path)
                if info.children:
                    size = self._section_size(path)
                    if isinstance(size, str):
                        return set(), size
                    total = size
                else:
                    total = info.own + sum(bound.get(r, 0) for r in info.refs)
                if total > MAX_EXPANSION:
                    return set(), f"expands to more than {MAX_EXPANSION:,} characters; not resolved"
                bound[path] = total
                continue
            if path in bound:
                continue
            if path in on_set:
                names = [".".join(p) for p in on_path[on_path.index(path) :]]
                return set(), f"interpolation cycle: {' -> '.join([*names, '.'.join(path)])}"
            if info.note is not None:
                return set(), info.note
            if len(on_path) >= MAX_CHAIN:
                return set(), f"interpolation chain deeper than {MAX_CHAIN}; not resolved"
            on_path.append(path)
            on_set.add(path)
            stack.append((path, True))
            stack.extend((r, False) for r in reversed(info.refs) if r not in bound)
        # the closure: what was referenced, the sections it reached, and their references
        needed: set[Path] = set()
        queue = list(bound)
        while queue:
            path = queue.pop()
            if path in needed:
                continue
            needed.add(path)
            if len(needed) > MAX_NODES:
                return set(), "refers to too large a part of the configuration; not resolved"
            info = self._info_of(path)
            queue.extend(info.children)
            queue.extend(info.refs)
        return needed, None

    def _via(self, start: Path) -> tuple[Path, ...]:
        """Where a copied value comes from: each `${key}` hop, up to the key that holds the
        value itself (a literal, or a computation), nearest first; empty when `start`
        computes its value (a resolver, text around an interpolation)."""
        chain: list[Path] = []
        here = start
        while len(chain) <= MAX_CHAIN:
            there = self._info_of(here).copy_of
            if there is None or there == start or there in chain or self._node(there) is None:
                break
            chain.append(there)
            here = there
        return tuple(chain)

    def _computed_from(self, start: Path) -> str | None:
        """For a computed value: a note naming the keys it is computed from."""
        info = self._info_of(start)
        if info.copy_of is not None:
            return None
        names = list(dict.fromkeys(".".join(r) for r in info.refs))
        shown = ", ".join(f"`{n}`" for n in names[:4]) + (", ..." if len(names) > 4 else "")
        return f"computed by OmegaConf from {shown}" if names else "computed by OmegaConf"

    # -- OmegaConf -----------------------------------------------------------------------
    def resolve(self, paths: Sequence[Path]) -> dict[Path, Resolved]:
        """Each path's value as OmegaConf resolves it (unknown with a note when it cannot)."""
        batch: list[Path] = []
        keep: set[Path] = set()
        for path in paths:
            if path in self._done or path in batch:
                continue
            needed, problem = self._walk(path)
            if problem is not None:
                self._done[path] = Resolved(None, False, problem, self._via(path))
                continue
            batch.append(path)
            keep |= needed
        if batch:
            self._run(batch, keep)
        return {p: self._done[p] for p in paths}

    def _run(self, batch: list[Path], keep: set[Path]) -> None:
        from omegaconf import OmegaConf

        install(self.resolvers)
        markers: list[str] = []
        try:
            data = self._skeleton(keep, markers) if self.prune else self._plain_root(markers)
            cfg = OmegaConf.create(data)
        except (_TooLarge, RecursionError):
            for path in batch:
                self._done[path] = Resolved(
                    None, False, "refers to too large a part of the configuration; not resolved"
                )
            return
        _markers[:] = markers
        try:
            for path in batch:
                self._done[path] = self._read(cfg, path)
        finally:
            _markers.clear()

    def _read(self, cfg: Any, path: Path) -> Resolved:
        from omegaconf import DictConfig, ListConfig
        from omegaconf import errors as oe

        node = self._node(path)
        raw = node.value if node is not None and isinstance(node.value, str) else ""
        via = self._via(path)
        del _notes[:]
        note: str
        try:
            current: Any = cfg
            for part in path:
                current = current[int(part)] if isinstance(current, ListConfig) else current[part]
        except oe.InterpolationToMissingValueError:
            note = f"`{_short(raw)}` refers to a mandatory value (`???`) given at launch"
        except oe.MissingMandatoryValue:
            note = "`???`: a mandatory value that must be given at launch"
        except oe.InterpolationKeyError:
            note = f"`{_short(raw)}` names a key that this configuration does not have"
        except oe.UnsupportedInterpolationType as exc:
            name = str(exc).split("\n")[0].rsplit(" ", 1)[-1]
            note = f"`{_short(raw)}` uses the resolver `{name}`, which fp8lint does not evaluate"
        except oe.GrammarParseError:
            note = f"`{_short(raw)}` is not a valid OmegaConf interpolation"
        except RecursionError:
            note = f"`{_short(raw)}`: interpolation chain too long; not resolved"
        except (
            oe.OmegaConfBaseException,
            Unknown,
            ValueError,
            TypeError,
            KeyError,
            IndexError,
        ) as exc:
            reason = str(exc).split("\n")[0][:80]
            note = _notes[-1] if _notes else f"`{_short(raw)}` could not be resolved: {reason}"
        else:
            if isinstance(current, (DictConfig, ListConfig)):
                return Resolved(None, False, f"`{_short(raw)}` is a section, not a value", via)
            return Resolved(current, True, self._computed_from(path), via)
        return Resolved(None, False, note, via)

    # -- plain containers for OmegaConf ---------------------------------------------------
    def _skeleton(self, keep: set[Path], markers: list[str]) -> Any:
        """The document with only the kept keys (and the mappings that hold them)."""
        prefixes: set[Path] = set()
        for path in keep:
            for cut in range(len(path)):
                prefixes.add(path[:cut])
        budget = [MAX_NODES]

        def build(node: Node, path: Path) -> Any:
            node = node.deref()
            if path in keep or node.kind != "map":
                return _plain(node, markers, budget)
            out: dict[str, Any] = {}
            for k, v in node.items():
                if k.kind != "scalar" or k.raw is None:
                    continue
                child = (*path, k.raw)
                if child in keep or child in prefixes:
                    out[k.raw] = build(v, child)
            return out

        return build(self.root, ())

    def _plain_root(self, markers: list[str]) -> Any:
        return _plain(self.root, markers, [MAX_NODES])


class _TooLarge(Exception):
    pass


def _plain(node: Node, markers: list[str], budget: list[int], depth: int = 0) -> Any:
    """`node` as plain Python for OmegaConf: aliases and merge keys expanded, a value fp8lint
    cannot read (a custom tag, a recursive alias) as a stand-in that resolves to unknown."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    node = node.deref()
    if depth > 100 or node.kind == "alias":
        markers.append("nested too deeply (a recursive alias?) to resolve")
        return f"${{{_UNKNOWN_RESOLVER}:{len(markers) - 1}}}"
    if node.kind == "map":
        return {
            k.raw: _plain(v, markers, budget, depth + 1)
            for k, v in node.items()
            if k.kind == "scalar" and k.raw is not None
        }
    if node.kind == "seq":
        return [_plain(v, markers, budget, depth + 1) for v in node.value]
    if not node.typed:
        markers.append(f"custom tag `{node.tag}`")
        return f"${{{_UNKNOWN_RESOLVER}:{len(markers) - 1}}}"
    return node.value


# ---------------------------------------------------------------------------------- merge


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
        except _TooLarge:
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
        raise _TooLarge
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
