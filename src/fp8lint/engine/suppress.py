"""Inline suppressions: `# fp8lint: ignore[FP8101]` and `# fp8lint: ignore-file[FP8101]`.

A line comment covers findings on its own line; a comment alone on a line also covers the
line below (ruff's `ruff: ignore` and yamllint's `disable-line` work the same way).
`ignore-file` covers the whole file.  A suppression is a comment in the file's own syntax
(`documents.comments`): the same text inside a string literal or a quoted scalar is data and
suppresses nothing.  There is no blanket form: codes are required, and a
comment without codes is itself reported.  A suppression that suppresses nothing is
`FP8002 unused-suppression`, with a safe fix that removes it (or just its unused codes).
JSON has no comments: use the configuration or a baseline there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Severity, TextEdit

if TYPE_CHECKING:
    from fp8lint.documents.text import SourceFile
    from fp8lint.settings import Selection

UNUSED = ("FP8002", "unused-suppression")
COMMENT = re.compile(
    r"(?:(?<=\s)|^)#\s*fp8lint:\s*(?P<kind>ignore-file|ignore)\b(?:\[(?P<codes>[^\]\n]*)\])?",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass
class Suppression:
    line: int  # 1-based
    whole_file: bool
    codes: tuple[str, ...]
    own_line: bool
    start: int  # index of `#`
    end: int  # end of the matched comment
    codes_start: int
    codes_end: int
    used: set[str] = field(default_factory=set)

    def covers(self, d: Diagnostic) -> str | None:
        """The code or name in this comment that matches `d`, if any."""
        if not (
            self.whole_file or d.line == self.line or (self.own_line and d.line == self.line + 1)
        ):
            return None
        for code in self.codes:
            if code.upper() == d.code or code.lower() == d.name:
                return code
        return None


def find(file: SourceFile, kind: str) -> list[Suppression]:
    """The suppression comments of `file`, read as `kind`."""
    text = file.text
    out: list[Suppression] = []
    matches = list(COMMENT.finditer(text))
    if not matches:
        return out
    from fp8lint.documents.comments import comment_spans, inside

    spans = comment_spans(text, kind)
    for m in matches:
        if not inside(spans, m.start()):
            continue
        pos = file.pos_of_index(m.start())
        line_start = file.line_starts[pos.line]
        raw = m.group("codes")
        codes = tuple(c.strip() for c in re.split(r"[,\s]+", raw or "") if c.strip())
        out.append(
            Suppression(
                line=pos.line + 1,
                whole_file=m.group("kind").lower() == "ignore-file",
                codes=codes,
                own_line=text[line_start : m.start()].strip() == "",
                start=m.start(),
                end=m.end(),
                codes_start=m.start("codes") if raw is not None else m.end(),
                codes_end=m.end("codes") if raw is not None else m.end(),
            )
        )
    return out


def apply(
    file: SourceFile, diags: list[Diagnostic], selection: Selection, kind: str
) -> list[Diagnostic]:
    """`diags` without the suppressed ones, plus FP8002 for suppressions that did nothing."""
    if kind == "json":
        return diags
    marks = find(file, kind)
    if not marks:
        return diags
    kept = []
    for d in diags:
        hit = None
        for s in marks:
            code = s.covers(d)
            if code is not None:
                s.used.add(code)
                hit = code
        if hit is None:
            kept.append(d)
    if selection.enabled(UNUSED[0], UNUSED[1], True):
        kept.extend(_unused(file, s, selection) for s in marks if _is_unused(s, selection))
    return kept


def _is_unused(s: Suppression, selection: Selection) -> bool:
    if not s.codes:
        return True
    return any(c not in s.used and _enabled(c, selection) for c in s.codes)


def _enabled(code: str, selection: Selection) -> bool:
    """Only codes that run here can be called unused (another config may enable them)."""
    from fp8lint.rules import page_titles

    titles = page_titles()
    name = titles.get(code.upper())
    if name is None:
        for c, n in titles.items():
            if n == code.lower():
                code, name = c, n
                break
    if name is None:
        return True  # an unknown code suppresses nothing anywhere
    return selection.enabled(code.upper(), name, default_on(code.upper()))


def default_on(code: str) -> bool:
    return code not in ("FP8106", "FP8405")


def _unused(file: SourceFile, s: Suppression, selection: Selection) -> Diagnostic:
    pos = file.pos_of_index(s.start)
    end = file.pos_of_index(s.end)
    line_text = file.line_text(s.line)
    if not s.codes:
        message = (
            "`# fp8lint: ignore` without codes suppresses nothing: name the findings, e.g. "
            "`# fp8lint: ignore[FP8101]` (fp8lint has no blanket suppression)"
        )
        fix = None
    else:
        unused = [c for c in s.codes if c not in s.used and _enabled(c, selection)]
        kept = [c for c in s.codes if c not in unused]
        message = (
            f"unused suppression: {', '.join(unused)} "
            f"{'does' if len(unused) == 1 else 'do'} not fire here"
        )
        if kept:
            start, stop, content = s.codes_start, s.codes_end, ", ".join(kept)
            what = f"remove {', '.join(unused)} from the suppression"
        else:
            start, stop, content = _comment_range(file, s)
            what = "remove the suppression comment"
        a, b = file.pos_of_index(start), file.pos_of_index(stop)
        edit = TextEdit(content, a.line + 1, a.column + 1, b.line + 1, b.column + 1, start, stop)
        fix = Fix(Applicability.SAFE, what, (edit,))
    return Diagnostic(
        code=UNUSED[0],
        name=UNUSED[1],
        severity=Severity.WARNING,
        message=message,
        path=file.path,
        line=pos.line + 1,
        column=pos.column + 1,
        end_line=end.line + 1,
        end_column=end.column + 1,
        fix=fix,
        source_line=line_text,
        key=" ".join(file.text[s.start : s.end].split()),
    )


def _comment_range(file: SourceFile, s: Suppression) -> tuple[int, int, str]:
    """The whole comment (to the end of its line); the whole line for an own-line comment."""
    text = file.text
    line_start = file.line_starts[s.line - 1]
    next_start = file.line_starts[s.line] if s.line < len(file.line_starts) else len(text)
    line_end = next_start
    while line_end > line_start and text[line_end - 1] in "\r\n":
        line_end -= 1
    if s.own_line:
        return line_start, next_start, ""
    start = s.start
    while start > line_start and text[start - 1] in " \t":
        start -= 1
    return start, line_end, ""
