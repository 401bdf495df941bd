"""What every Python recognizer shares: a parsed file (`documents.python.PyModule`) seen as
calls, their arguments as `Arg`s, and what each call builds.

A value is read only when it is a literal, or a name (or `obj.attr`) that libcst's scope
analysis finds bound exactly once, in the scope the use sees, to a literal; anything else is
an unknown setting with a note saying why.  `p.field = value` after `p = Cls(...)` (in the
scope `p` is bound in, bound once) overrides the keyword.

Everything here runs on the thread `documents.python.deep` provides.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import libcst as cst

from fp8lint.documents.python import PyModule, dotted, last_name, literal, short
from fp8lint.frameworks.shared.base import Arg
from fp8lint.model import EditInfo, Setting

if TYPE_CHECKING:
    from fp8lint.model import Span

# `run.Config(Cls, ...)` / `fdl.Partial(Cls, ...)` (NeMo-Run, Fiddle): the keywords are Cls's
CONFIG_WRAPPERS = frozenset({"Config", "Partial"})


@dataclass(frozen=True)
class Val:
    """A read argument, and the expression it resolved to (after following names)."""

    arg: Arg
    node: cst.CSTNode


@dataclass(frozen=True)
class Target:
    """What a call builds: the class, function or preset name, the expression that names it,
    and its dotted origin through the file's imports (for telling Bridge presets apart)."""

    name: str
    callee: cst.BaseExpression
    origin: str
    call: cst.Call


@dataclass(frozen=True)
class CallArg:
    """One argument of a call, in the order written: `key=value`, `*x`, `**x` or a value."""

    node: cst.Arg  # the whole argument, `key=` and stars included
    value: cst.BaseExpression
    keyword: str | None
    star: str  # "", "*" or "**"


def call_args(call: cst.Call) -> list[CallArg]:
    return [
        CallArg(a, a.value, a.keyword.value if a.keyword is not None else None, a.star)
        for a in call.args
    ]


def positional(call: cst.Call) -> list[CallArg]:
    return [a for a in call_args(call) if a.keyword is None and not a.star]


# Node checks are written as `isinstance` tests: `libcst.matchers` costs a cold recipe check
# a large share of its start-up (issue 23), for what a test of one or two nodes decides.


def is_function(node: cst.CSTNode) -> bool:
    """A function or a lambda: what a filter or a custom amax algorithm is written as."""
    return isinstance(node, (cst.Lambda, cst.FunctionDef))


def names(node: cst.CSTNode, name: str) -> bool:
    """`name` or `anything.name`."""
    if isinstance(node, cst.Attribute):
        node = node.attr
    return isinstance(node, cst.Name) and node.value == name


def is_member_of(node: cst.CSTNode, owner: str) -> bool:
    """`owner.MEMBER` or `module.owner.MEMBER` (an enum member: `Format.E4M3`)."""
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.attr, cst.Name)
        and names(node.value, owner)
    )


def canonical_text(value: Any) -> str:
    """A literal as lower-case text with normalized spaces: `(false, false, true)`."""
    return " ".join(repr(value).split()).lower()


class Context:
    """One parsed file, as the recognizers of every framework read it."""

    def __init__(self, doc: PyModule) -> None:
        self.doc = doc
        self.file = doc.file
        self.facts = doc.facts
        self.moe: bool | None = None  # whether the file names a mixture-of-experts part
        # the calls the core recipe pass found, in source order (TE autocasts among them)
        self.targets: list[Target] = []

    # -- text and spans ------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> Span:
        return self.doc.span(node)

    def text(self, node: cst.CSTNode) -> str:
        return self.doc.source(node)

    def literal(self, node: cst.CSTNode) -> tuple[bool, Any]:
        return literal(node)

    # -- names ---------------------------------------------------------------------------
    def origin(self, node: cst.CSTNode) -> str:
        """The dotted name of `node` through the file's imports, or as written."""
        imported = self.doc.imported_names(node) if dotted(node) else ()
        if imported:
            return imported[0]
        parts = dotted(node)
        return ".".join(parts) if parts else ""

    def imported_from(self, callee: cst.CSTNode) -> str | None:
        """The dotted origin of a callee named through an import (or a full module chain);
        None when the file defines its first name itself or it is not a plain dotted name."""
        if dotted(callee) is None:
            return None
        base = callee
        while isinstance(base, cst.Attribute):
            base = base.value
        assert isinstance(base, cst.Name)
        if self.doc.defines_locally(base):
            return None
        return self.origin(callee)

    def first_name_imported(self, callee: cst.CSTNode) -> bool:
        base = callee
        while isinstance(base, cst.Attribute):
            base = base.value
        return bool(self.doc.imported_names(base))

    def target(
        self,
        call: cst.Call,
        names: Collection[str],
        wrapped: Collection[str],
        requires: Mapping[str, Callable[[str], bool]],
    ) -> Target | None:
        """What `call` builds when it is one of `names` (`wrapped`: the classes a
        `run.Config(Cls, ...)` may wrap).  A bare name counts unless the file defines it;
        names in `requires` must also be imported from a module the predicate accepts (or
        star-imported from one)."""
        callee: cst.BaseExpression = call.func
        name = last_name(callee)
        if name is None:
            return None
        wrapper = name in CONFIG_WRAPPERS or (
            isinstance(callee, cst.Name)
            and any(
                q.rsplit(".", 1)[-1] in CONFIG_WRAPPERS for q in self.doc.imported_names(callee)
            )
        )
        if wrapper:
            first = next(iter(positional(call)), None)
            if first is None:
                return None
            callee = first.value
            name = last_name(callee)
            if name is None:
                return None
            found = self._named(call, callee, name, names, requires)
            return found if found is not None and found.name in wrapped else None
        return self._named(call, callee, name, names, requires)

    def _named(
        self,
        call: cst.Call,
        callee: cst.BaseExpression,
        name: str,
        names: Collection[str],
        requires: Mapping[str, Callable[[str], bool]],
    ) -> Target | None:
        origin = self.origin(callee)
        if isinstance(callee, cst.Name):
            if self.doc.defines_locally(callee):
                return None  # the file defines it: not the framework's
            imported = self.doc.imported_names(callee)
            reals = [q.rsplit(".", 1)[-1] for q in imported]
            real = next((r for r in reals if r in names), reals[0] if reals else name)
            need = requires.get(real)
            if need is not None:
                if imported:
                    ok = any(need(q.rsplit(".", 1)[0]) for q in imported if q.endswith(real))
                else:
                    ok = any(need(module) for module in self.facts.star_modules)
                if not ok:
                    return None
            name = real
        elif name in self.facts.defined and name in requires and not requires[name](origin):
            return None  # `self.convert_to_float8_training(...)`: the file's own method
        if name in names:
            return Target(name, callee, origin, call)
        return None

    # -- values --------------------------------------------------------------------------
    def value_of(
        self, key: str, whole: cst.CSTNode, value: cst.CSTNode, span: Span | None = None
    ) -> Val:
        """An `Arg` for `key=value` (whole is the text that wrote it), following names."""
        raw = self.text(value)
        followed = self.doc.follow(value)
        via = tuple(self.span(v) for v in followed.via)
        ok, parsed = literal(followed.node)
        return Val(
            Arg(
                key=key,
                value=parsed if ok else None,
                span=span or self.span(whole),
                value_span=self.span(value),
                known=ok,
                raw=raw,
                note=None
                if ok
                else followed.why or f"`{short(raw)}` is not a literal fp8lint can read",
                via=via,
            ),
            followed.node,
        )

    def keywords(self, call: cst.Call) -> dict[str, Val]:
        out: dict[str, Val] = {}
        for a in call.args:
            if a.keyword is None:
                continue  # positional arguments and `**kwargs` splats are not read
            out[a.keyword.value] = self.value_of(a.keyword.value, a, a.value)
        return out

    def overrides(self, call: cst.Call) -> list[tuple[str, Val]]:
        """`p.field = value` after `p = <call>`, in the scope `p` was bound in (bound once)."""
        found = self.facts.assigned_to.get(id(call))
        if found is None:
            return []
        key, target = found
        if not self.doc.bound_once_where(target):
            return []
        sets = self.doc.attr_sets(key, target)
        counts: dict[str, int] = {}
        for s in sets:
            counts[s.name] = counts.get(s.name, 0) + 1
        out: dict[str, Val] = {}
        for s in sets:
            name = f"{key}.{s.name}"
            val = self.value_of(
                name, s.target, s.value, span=self.doc.span_between(s.target, s.value)
            )
            if counts[s.name] > 1:
                val = Val(
                    replace(
                        val.arg,
                        known=False,
                        value=None,
                        note=f"`{name}` is set {counts[s.name]} times; fp8lint "
                        "does not guess which one applies",
                    ),
                    val.node,
                )
            out[s.name] = val
        return list(out.items())

    def unreadable(self, arg: Arg) -> Setting[Any]:
        return Setting[Any].model_construct(
            known=False, span=arg.value_span, key=arg.key, raw=arg.raw
        )

    # -- fixes ---------------------------------------------------------------------------
    def _indent(self, at: Span) -> str:
        """The whitespace before `at` on its line, as written (tabs stay tabs), or as many
        spaces as its column when something else stands before it."""
        text = self.file.text
        start = at.start_offset - (at.column - 1)
        before = text[start : at.start_offset]
        return before if not before.strip(" \t") else " " * (at.column - 1)

    def edit_info(self, call: cst.Call, keys: dict[str, str]) -> EditInfo:
        """Where a fix adds a keyword to `call`: after its last argument, one per line when
        the call is laid out that way, or inside the parentheses of an empty call."""
        args = call.args
        values = {a.keyword.value: self.span(a.value) for a in args if a.keyword is not None}
        if not args:
            close = self.doc.end(call)
            at = self.file.pos_of_index(max(close.index - 1, 0))
            return EditInfo.model_construct(
                syntax="python", flow=True, insert_into=self.file.span(at, at), keys=keys
            )
        after = self.span(args[-1])
        opening_line = self.doc.end(call.func).line + 1
        multiline = after.line != opening_line
        return EditInfo.model_construct(
            syntax="python",
            flow=not multiline,
            insert_after=after,
            indent=self._indent(after) if multiline else "",
            keys=keys,
            values=values,
        )
