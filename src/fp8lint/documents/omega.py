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
- `merge` (`omega_merge`) merges layers with `OmegaConf.merge`, keeping which node won each
  value; the resolvers OmegaConf is given are `omega_resolvers`'.

OmegaConf is imported only inside functions: a file without `${`, `???` or layers to merge
never loads it.  This module knows no framework: which resolvers NeMo & co. register is the
caller's to say.  Callers import from here (the names of `omega_base`, `omega_resolvers` and
`omega_merge` they use are re-exported); `Interpolations` reads `PRUNE` here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fp8lint.documents.omega_base import MAX_NODES as MAX_NODES
from fp8lint.documents.omega_base import MISSING as MISSING
from fp8lint.documents.omega_base import Path as Path
from fp8lint.documents.omega_base import TooLarge
from fp8lint.documents.omega_base import lookup as lookup
from fp8lint.documents.omega_base import needs_omegaconf as needs_omegaconf
from fp8lint.documents.omega_merge import Edit as Edit
from fp8lint.documents.omega_merge import MergeError as MergeError
from fp8lint.documents.omega_merge import merge as merge
from fp8lint.documents.omega_resolvers import OC_UNKNOWN as OC_UNKNOWN
from fp8lint.documents.omega_resolvers import (
    UNKNOWN_RESOLVER,
    marker_notes,
    resolver_notes,
)
from fp8lint.documents.omega_resolvers import Resolver as Resolver
from fp8lint.documents.omega_resolvers import Unknown as Unknown
from fp8lint.documents.omega_resolvers import install as install
from fp8lint.documents.tree import Node

MAX_CHAIN = 32  # references followed from one key, one behind the other
MAX_EXPANSION = 100_000  # characters a resolved value may grow to
MAX_TEXT = 1_000  # an interpolation string longer than this is not parsed (real ones: < 200)
PRUNE = True  # hand OmegaConf only what the asked keys reference (tests compare both ways)


@dataclass(frozen=True)
class Resolved:
    """What OmegaConf makes of one key: its value, or unknown with a note; `via` names the
    keys it was built from (for provenance), nearest first."""

    value: Any
    known: bool
    note: str | None = None
    via: tuple[Path, ...] = ()


# ------------------------------------------------------------------------ reference graph


@dataclass
class _Info:
    """One key's place in the reference graph."""

    refs: tuple[Path, ...] = ()  # what it references, once per occurrence (`${a}${a}`: twice)
    children: tuple[Path, ...] = ()  # a section's entries
    own: int = 0  # characters of its own
    note: str | None = None  # why it cannot be resolved, found before OmegaConf runs
    copy_of: Path | None = None  # the value is `${that}` and nothing else: a copy of it


# `${key.path}` (relative dots allowed) and nothing else, in names the grammar reads as plain
# keys: the common case, whose reading needs no parse (OmegaConf parses it again to resolve)
_PLAIN = re.compile(r"\$\{(\.*)([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")


def _interpolation_refs(text: str, parent: Path) -> tuple[list[Path], int, str | None, bool]:
    """(paths referenced, resolver calls, problem, whether the text is one `${key}` and
    nothing else) of one interpolation string: read with OmegaConf's own grammar, except
    for one plain `${key}`, which reads the same either way (tests/documents/test_omega.py)."""
    plain = _PLAIN.fullmatch(text)
    if plain is not None:
        target = _target(parent, len(plain[1]), plain[2].split("."))
        return ([target] if target is not None else []), 0, None, target is not None
    return _grammar_refs(text, parent)


def _grammar_refs(text: str, parent: Path) -> tuple[list[Path], int, str | None, bool]:
    """`_interpolation_refs` by OmegaConf's grammar."""
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
        except (TooLarge, RecursionError):
            for path in batch:
                self._done[path] = Resolved(
                    None, False, "refers to too large a part of the configuration; not resolved"
                )
            return
        marker_notes[:] = markers
        try:
            for path in batch:
                self._done[path] = self._read(cfg, path)
        finally:
            marker_notes.clear()

    def _read(self, cfg: Any, path: Path) -> Resolved:
        from omegaconf import DictConfig, ListConfig
        from omegaconf import errors as oe

        node = self._node(path)
        raw = node.value if node is not None and isinstance(node.value, str) else ""
        via = self._via(path)
        del resolver_notes[:]
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
            note = (
                resolver_notes[-1]
                if resolver_notes
                else f"`{_short(raw)}` could not be resolved: {reason}"
            )
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


def _plain(node: Node, markers: list[str], budget: list[int], depth: int = 0) -> Any:
    """`node` as plain Python for OmegaConf: aliases and merge keys expanded, a value fp8lint
    cannot read (a custom tag, a recursive alias) as a stand-in that resolves to unknown."""
    budget[0] -= 1
    if budget[0] < 0:
        raise TooLarge
    node = node.deref()
    if depth > 100 or node.kind == "alias":
        markers.append("nested too deeply (a recursive alias?) to resolve")
        return f"${{{UNKNOWN_RESOLVER}:{len(markers) - 1}}}"
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
        return f"${{{UNKNOWN_RESOLVER}:{len(markers) - 1}}}"
    return node.value
