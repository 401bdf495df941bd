"""The edits fixes are made of: libcst transformations of one statement (a keyword replaced,
inserted or removed, a value replaced; libcst keeps commas, whitespace and comments), and the
smallest text edit between a statement's old and new code (`minimal_edit`)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst


def minimal_edit(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, content): replacing old[start:end] by content gives `new`.  The region
    is the smallest the common prefix and suffix allow, widened to whole words where it
    would split one (`1` -> `1024` replaces the number, not "inserts 024")."""
    limit = min(len(old), len(new))
    lo, hi = 0, limit
    while lo < hi:  # the longest common prefix, by halving (slices compare in C)
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, limit - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid :] == new[len(new) - mid :]:
            lo = mid
        else:
            hi = mid - 1
    suffix = lo

    def word(text: str, i: int) -> bool:
        return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")

    while prefix > 0 and word(old, prefix - 1) and (word(old, prefix) or word(new, prefix)):
        prefix -= 1
    while (
        suffix > 0
        and word(old, len(old) - suffix)
        and (word(old, len(old) - suffix - 1) or word(new, len(new) - suffix - 1))
    ):
        suffix -= 1
    return prefix, len(old) - suffix, new[prefix : len(new) - suffix]


# --------------------------------------------------------------------------- CST edits

Change = Callable[[cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel"]


class Rewrite(cst.CSTTransformer):
    """Apply `changes` (id of an original node -> what to make of its updated copy) in one
    pass over a statement."""

    def __init__(self, changes: dict[int, list[Change]]) -> None:
        super().__init__()
        self.changes = changes

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel:
        result: cst.CSTNode | cst.RemovalSentinel = updated_node
        for change in self.changes.get(id(original_node), ()):
            if isinstance(result, cst.RemovalSentinel):
                break
            result = change(result)
        return result


def expression(code: str) -> cst.BaseExpression:
    """A value for a fix, parsed by libcst (raises ValueError when it is not one)."""
    try:
        return cst.parse_expression(code)
    except cst.ParserSyntaxError as exc:
        raise ValueError(f"`{code}` is not a Python expression") from exc


def replaced(new: cst.BaseExpression) -> Change:
    """Replace an expression, keeping the parentheses written around the old one."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.BaseExpression)
        return new.with_changes(lpar=node.lpar, rpar=node.rpar)

    return change


def _no_space() -> cst.AssignEqual:
    return cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
    )


def keyword_added(key: str, value: cst.BaseExpression, indent: str | None) -> Change:
    """Add `key=value` as the last argument of a call: on a line of its own at `indent` (a
    call laid out one argument per line), or after a comma and a space.  The new argument
    takes over what followed the old last one (its trailing comma, a comment, the line
    break before the closing parenthesis)."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        new = cst.Arg(keyword=cst.Name(key), value=value, equal=_no_space())
        if not node.args:
            return node.with_changes(args=[new])
        last = node.args[-1]
        if indent is None:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        else:
            comma = cst.Comma(
                whitespace_after=cst.ParenthesizedWhitespace(
                    first_line=cst.TrailingWhitespace(),
                    indent=False,
                    last_line=cst.SimpleWhitespace(indent),
                )
            )
        new = new.with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)
        last = last.with_changes(comma=comma, whitespace_after_arg=cst.SimpleWhitespace(""))
        if indent is not None:  # a comment after the old last argument stays on its line
            new, line = _comment_taken(new)
            if line is not None:
                assert isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)
                ws = comma.whitespace_after.with_changes(first_line=line)
                last = last.with_changes(comma=comma.with_changes(whitespace_after=ws))
        return node.with_changes(args=[*node.args[:-1], last, new])

    return change


def _comment_taken(arg: cst.Arg) -> tuple[cst.Arg, cst.TrailingWhitespace | None]:
    """`arg` without the comment that ends its line, and that line's end (with the comment),
    or None when the line has no comment."""
    comma = arg.comma
    ws = comma.whitespace_after if isinstance(comma, cst.Comma) else arg.whitespace_after_arg
    if not isinstance(ws, cst.ParenthesizedWhitespace) or ws.first_line.comment is None:
        return arg, None
    bare = ws.with_changes(
        first_line=ws.first_line.with_changes(whitespace=cst.SimpleWhitespace(""), comment=None)
    )
    if isinstance(comma, cst.Comma):
        return arg.with_changes(comma=comma.with_changes(whitespace_after=bare)), ws.first_line
    return arg.with_changes(whitespace_after_arg=bare), ws.first_line


def argument_removed(index: int) -> Change:
    """Remove a call's argument; when it was the last one, the argument before it takes
    over what followed it (no comma, or its trailing comma and line break)."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args)
        gone = args.pop(index)
        if index == len(args) and args:
            args[-1] = args[-1].with_changes(
                comma=gone.comma, whitespace_after_arg=gone.whitespace_after_arg
            )
        return node.with_changes(args=args)

    return change


def keyword_renamed(index: int, new: str) -> Change:
    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Call)
        args = list(node.args)
        args[index] = args[index].with_changes(keyword=cst.Name(new))
        return node.with_changes(args=args)

    return change


def attribute_renamed(new: str) -> Change:
    """`p.old = v` -> `p.new = v` (the change is made on the assignment's target)."""

    def change(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Attribute)
        return node.with_changes(attr=cst.Name(new))

    return change


def statement_removed(position: int) -> Change:
    """Remove statement `position` of a line (`a = 1; p.x = 2`), or the whole line when it
    is the only one."""

    def change(node: cst.CSTNode) -> cst.CSTNode | cst.RemovalSentinel:
        assert isinstance(node, cst.SimpleStatementLine)
        body = [s for i, s in enumerate(node.body) if i != position]
        if not body:
            return cst.RemovalSentinel.REMOVE
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(body=body)

    return change
