"""Whether a statement of a Python file can run, and under what condition: the `if` tests
around a call, read as launch options (argparse flags, config keys) or as switches that no
code in the file ever turns on.

Used for recompute (FP8501): a checkpoint call behind `if args.grad_checkpoint:` runs when
the user passes `--grad_checkpoint`; one behind `if self.use_checkpoint:`, where
`use_checkpoint` is only ever its `False` default (MS-AMP's CIFAR-10 example), never runs.

Nothing is executed.  The file's text is scanned for the switch's assignments (including
code the parse left out), so an assignment anywhere that may set it true keeps the code
reachable: "never runs" is said only when every value the file gives the switch is falsy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from fp8lint.documents.python import children, literal, short

if TYPE_CHECKING:
    from fp8lint.frameworks.shared.python_args import Context
    from fp8lint.model import Span

FALSY = frozenset({"False", "None", "0", "''", '""'})


@dataclass(frozen=True)
class Condition:
    """The condition a statement runs under, in words (None: always), and whether it can
    run at all (False: no value in the file makes it true; None: not known, assumed)."""

    phrase: str | None = None
    reachable: bool | None = None
    span: Span | None = None


def tests_around(ctx: Context, node: cst.CSTNode) -> list[tuple[cst.BaseExpression, bool]]:
    """The `if` / `while` / ternary tests that enclose `node`, outermost first, each with the
    branch `node` is in (True: the body)."""
    doc = ctx.doc
    try:
        top = doc.module.body[doc.statement_of(node)]
    except (LookupError, IndexError):
        return []
    stack: list[tuple[cst.CSTNode, tuple[tuple[cst.BaseExpression, bool], ...]]] = [(top, ())]
    while stack:
        current, path = stack.pop()
        if current is node:
            return list(path)
        if isinstance(current, (cst.If, cst.While)):
            stack.append((current.test, path))
            stack.append((current.body, (*path, (current.test, True))))
            if current.orelse is not None:
                stack.append((current.orelse, (*path, (current.test, False))))
            continue
        if isinstance(current, cst.IfExp):
            stack.append((current.test, path))
            stack.append((current.body, (*path, (current.test, True))))
            stack.append((current.orelse, (*path, (current.test, False))))
            continue
        stack.extend((child, path) for child in children(current))
    return []


def condition(ctx: Context, node: cst.CSTNode) -> Condition:
    """The condition `node` runs under, from the tests around it."""
    phrases: list[str] = []
    reachable: bool | None = True
    span: Span | None = None
    for test, branch in tests_around(ctx, node):
        if _main_guard(ctx, test):
            continue  # `if __name__ == "__main__":` runs whenever the script is launched
        ok, value = literal(test)
        if ok:
            if bool(value) == branch:
                continue  # `while True:`
            return Condition(f"never (the test is `{ctx.text(test)}`)", False, ctx.span(test))
        phrase, can = _read(ctx, test, branch)
        phrases.append(phrase)
        span = span or ctx.span(test)
        if can is False:
            reachable = False
        elif can is None and reachable is True:
            reachable = None
    if not phrases:
        return Condition()
    return Condition(" and ".join(phrases), reachable, span)


def _main_guard(ctx: Context, test: cst.BaseExpression) -> bool:
    return " ".join(ctx.text(test).replace("'", '"').split()) == '__name__ == "__main__"'


def switch_phrase(ctx: Context, expr: cst.BaseExpression) -> Condition:
    """A value that switches something on (`gradient_checkpointing=args.gc`), as a condition."""
    phrase, can = _read(ctx, expr, True)
    return Condition(phrase, can, ctx.span(expr))


def _read(ctx: Context, test: cst.BaseExpression, branch: bool) -> tuple[str, bool | None]:
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, branch = test.expression, not branch
    text = short(ctx.text(test))
    name = _subject(test)
    if name is not None:
        flag = _argparse_flag(ctx.file.text, name)
        if flag is not None:
            given = "is given" if flag[1] else "is set"
            return (f"when `{flag[0]}` {given}" if branch else f"unless `{flag[0]}` {given}"), True
        if _never_true(ctx.file.text, name):
            if branch:
                return (
                    f"only when `{text}` is true, which nothing in this file sets (its only "
                    "value is a false default)",
                    False,
                )
            return f"unless `{text}`", True
    return (f"when `{text}` is true" if branch else f"unless `{text}` is true"), None


def _subject(test: cst.BaseExpression) -> str | None:
    """The name a test reads: `x`, `self.x`, `args.x`, `cfg["x"]`, `cfg.get("x")`,
    `getattr(args, "x", ...)`."""
    if isinstance(test, cst.Name):
        return test.value
    if isinstance(test, cst.Attribute):
        return test.attr.value
    if isinstance(test, cst.Subscript) and len(test.slice) == 1:
        element = test.slice[0].slice
        if isinstance(element, cst.Index):
            ok, value = literal(element.value)
            return value if ok and isinstance(value, str) else None
    if isinstance(test, cst.Call):
        func = test.func
        args = [a for a in test.args if a.keyword is None]
        index = None
        if isinstance(func, cst.Name) and func.value == "getattr" and len(args) >= 2:
            index = 1
        elif isinstance(func, cst.Attribute) and func.attr.value == "get" and args:
            index = 0
        if index is not None:
            ok, value = literal(args[index].value)
            return value if ok and isinstance(value, str) else None
    return None


_ADD_ARGUMENT = re.compile(r"add_argument\s*\(")
_QUOTED = re.compile(r"""(['"])(-{1,2}[A-Za-z0-9][\w-]*)\1""")
_DEST = re.compile(r"""dest\s*=\s*(['"])(\w+)\1""")


def _argparse_flag(text: str, name: str) -> tuple[str, bool] | None:
    """The command-line flag whose argparse destination is `name`, and whether it is a
    switch (`store_true`) rather than a flag that takes a value."""
    for m in _ADD_ARGUMENT.finditer(text):
        call = _balanced(text, m.end() - 1)
        flags = [q.group(2) for q in _QUOTED.finditer(call)]
        longs = [f for f in flags if f.startswith("--")] or flags
        if not longs:
            continue
        dest = _DEST.search(call)
        target = dest.group(2) if dest else longs[0].lstrip("-").replace("-", "_")
        if target == name:
            return longs[0], "store_true" in call
    return None


def _balanced(text: str, open_at: int) -> str:
    """The text inside the parentheses that open at `open_at` (bounded)."""
    depth = 0
    end = min(len(text), open_at + 4000)
    for i in range(open_at, end):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i]
    return text[open_at + 1 : end]


def _never_true(text: str, name: str) -> bool:
    """Whether every value the file gives `name` (as a variable, an attribute, a keyword
    argument or a parameter default) is falsy, and it is given at least one.  A parameter
    passed through (`self.x = x`) counts only while no call can pass it positionally."""
    pattern = re.compile(rf"(?<![\w]){re.escape(name)}\s*(?::[^=\n(),]*)?=(?!=)\s*")
    values = 0
    through = False
    keyed = re.compile(rf"""(['"]){re.escape(name)}\1\s*:\s*""")  # `{"name": value}`
    found = [m.end() for m in pattern.finditer(text)] + [m.end() for m in keyed.finditer(text)]
    for at in found:  # `name = v`, `obj.name = v`, `f(name=v)`, `def f(name=v)`, `{"name": v}`
        value = _expression_at(text, at)
        values += 1
        if value in FALSY:
            continue
        if value == name:
            through = True
            continue
        return False
    if re.search(rf"""setattr\s*\([^)]*['"]{re.escape(name)}['"]""", text):
        return False
    if values == 0:
        return False
    return not (through and _positional_reach(text, name))


def _expression_at(text: str, start: int) -> str:
    """The expression that starts at `start`, up to a top-level comma, closing bracket,
    colon at line end or newline."""
    depth = 0
    i = start
    while i < len(text) and i - start < 400:
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch in ",\n#" and depth == 0:
            break
        i += 1
    return text[start:i].strip()


_DEF = re.compile(r"\bdef\s+(\w+)\s*\(")
_CLASS = re.compile(r"^\s*class\s+(\w+)", re.MULTILINE)


def _positional_reach(text: str, name: str) -> bool:
    """Whether a call in the file may pass parameter `name` other than by its keyword: a
    call of the function (or, for `__init__`, the class) with that many positional
    arguments, or a `*args` / `**kwargs` splat."""
    for m in _DEF.finditer(text):
        params = _split(_balanced(text, m.end() - 1))
        names = [p.split(":")[0].split("=")[0].strip() for p in params]
        if name not in names:
            continue
        positional = [n for n in names if n not in ("self", "cls")]
        cut = next((i for i, n in enumerate(positional) if n.startswith("*")), None)
        if cut is not None and positional.index(name) > cut:
            continue  # keyword-only
        index = positional.index(name)
        callee = m.group(1)
        if callee == "__init__":
            classes = [c for c in _CLASS.finditer(text) if c.start() < m.start()]
            if not classes:
                return True
            callee = classes[-1].group(1)
        for call in re.finditer(rf"(?<![\w.]){re.escape(callee)}\s*\(", text):
            if text[max(0, call.start() - 4) : call.start()].endswith("def "):
                continue
            args = _split(_balanced(text, call.end() - 1))
            if any(a.startswith("*") for a in args):
                return True  # `*args` / `**kwargs` may carry it
            plain = [a for a in args if not re.match(r"^\*\*|^\w+\s*=(?!=)", a)]
            if len(plain) > index:
                return True
    return False


def _split(inner: str) -> list[str]:
    """Top-level comma-separated parts of an argument or parameter list."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in inner:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    if tail:
        parts.append(tail)
    return [p for p in parts if p]
