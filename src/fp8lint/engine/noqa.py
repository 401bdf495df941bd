"""`check --add-noqa`: a suppression comment for every finding, as ruff's `--add-noqa`
(adopting the linter on a large repository without fixing everything first; the other way
is a baseline).

For each flagged line it appends `# fp8lint: ignore[CODE, ...]` (the comment
`engine.suppress` reads, in Python, YAML, TOML and shell alike) or adds the codes to the
fp8lint comment already on that line.  Nothing else changes: the new text must differ from
the old on those lines alone, each new line must be the old one with one insertion (the
comment at its end, or the codes; the line ending stays), and linting the new text must
report no finding the old one did not, and none of the ones suppressed.  A line where a
comment cannot go (one continued with a backslash, inside a block scalar or a string, a
heredoc) is left as it is and listed.  The file is written as `--fix` writes it
(`fixes.write_atomic`: a temporary file renamed over it, permissions, encoding and BOM
kept, never over an edit made meanwhile).  JSON has no comments: its files are skipped with a note.
"""

from __future__ import annotations

from collections import defaultdict

from fp8lint.diagnostics import Diagnostic
from fp8lint.documents.text import SourceFile
from fp8lint.engine.suppress import find
from fp8lint.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from fp8lint.engine.per_file import SettingsCache

# the engine's own codes: a file that does not parse has no comment to add to, and an
# unused suppression is removed, not suppressed
NOT_SUPPRESSED = ("FP8001", "FP8002")


@record
class NoqaResult:
    added: int = 0  # lines that gained a comment or codes
    files: int = 0  # files written
    notes: list[str] = field(default_factory=list)  # a file or line left as it was, and why


def add_noqa(diagnostics: list[Diagnostic], settings: SettingsCache) -> NoqaResult:
    """Suppression comments for `diagnostics`, written into their files."""
    result = NoqaResult()
    by_file: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for d in diagnostics:
        if d.code not in NOT_SUPPRESSED and d.code not in by_file[d.path][d.line]:
            by_file[d.path][d.line].append(d.code)
    for path in sorted(by_file):
        lines = {n: codes for n, codes in by_file[path].items() if codes}
        if lines:
            _one_file(path, lines, settings, result)
    return result


def _one_file(
    path: str, lines: dict[int, list[str]], settings: SettingsCache, result: NoqaResult
) -> None:
    from fp8lint.engine.files import FileProblem, decode, file_kind, read_bytes
    from fp8lint.engine.lint import cfg_kind
    from fp8lint.fixes import FileChanged, stamp, write_atomic

    kind = file_kind(path)
    if kind == "json":
        result.notes.append(f"{path}: JSON has no comments: no noqa added (use a baseline)")
        return
    try:
        data, info = read_bytes(path, settings.settings(path).max_bytes)
        decoded = decode(data)
    except FileProblem as exc:
        result.notes.append(f"{path}: {exc.message}: no noqa added")
        return
    if kind == "cfg" and decoded is not None:
        kind = cfg_kind(decoded.text)
    if kind is None or decoded is None:
        return
    file = SourceFile(path, decoded.text)
    text, added, refused = _edited(file, kind, lines)
    if refused:
        where = ", ".join(str(n) for n in refused)
        result.notes.append(
            f"{path}: no comment can go on line(s) {where} (continued, or inside a string): "
            "left as they are (use a baseline there)"
        )
    if not added:
        return
    why = _verify(path, decoded.text, text, kind, added, settings)
    if why is not None:
        result.notes.append(f"{path}: {why}: nothing written")
        return
    try:
        write_atomic(path, text, decoded.encoding, decoded.bom, data, stamp(info))
    except (OSError, FileChanged) as exc:
        changed = isinstance(exc, FileChanged)
        why = "the file changed meanwhile" if changed else f"cannot write it: {exc}"
        result.notes.append(f"{path}: {why}: nothing written")
        return
    result.added += len(added)
    result.files += 1


def _edited(
    file: SourceFile, kind: str, lines: dict[int, list[str]]
) -> tuple[str, dict[int, list[str]], list[int]]:
    """The text with the comments added, the lines changed (with their new codes), and the
    lines refused (a continued line, or one whose end is not outside every string)."""
    from fp8lint.documents.comments import comment_spans, inside

    text = file.text
    starts = file.line_starts
    marks = {s.line: s for s in find(file, kind) if not s.whole_file and not s.own_line}
    edits: list[tuple[int, int, str]] = []
    added: dict[int, list[str]] = {}
    refused: list[int] = []
    for n in sorted(lines):
        if n > len(starts):
            continue
        begin = starts[n - 1]
        end = starts[n] if n < len(starts) else len(text)
        body = text[begin:end].rstrip("\r\n")
        mark = marks.get(n)
        if mark is not None:  # merge into the fp8lint comment on the line
            have = {c.upper() for c in mark.codes}
            new = [c for c in lines[n] if c not in have]
            if not new:
                continue
            if mark.codes_start == mark.codes_end == mark.end:  # `# fp8lint: ignore`
                edits.append((mark.end, mark.end, f"[{', '.join(new)}]"))
            else:
                edits.append((mark.codes_end, mark.codes_end, ", " + ", ".join(new)))
            added[n] = new
            continue
        if not body.strip() or body.rstrip().endswith("\\"):
            refused.append(n)
            continue
        at = begin + len(body)
        gap = "" if body.endswith((" ", "\t")) else "  "
        probe = text[:at] + gap + "# x" + text[at:]
        if not inside(comment_spans(probe, kind), at + len(gap)):
            refused.append(n)
            continue
        edits.append((at, at, f"{gap}# fp8lint: ignore[{', '.join(lines[n])}]"))
        added[n] = list(lines[n])
    for start, stop, content in sorted(edits, reverse=True):
        text = text[:start] + content + text[stop:]
    return text, added, refused


def _verify(
    path: str, old: str, new: str, kind: str, added: dict[int, list[str]], cache: SettingsCache
) -> str | None:
    """None when only the `added` lines changed, each by a suffix, and linting the new text
    suppresses their codes there and reports nothing new; else what went wrong."""
    from fp8lint.engine.lint import lint_text

    before, after = SourceFile(path, old), SourceFile(path, new)
    if len(before.line_starts) != len(after.line_starts):
        return "the edit would change the number of lines"
    for n in range(1, len(before.line_starts) + 1):
        a, b = before.line_text(n), after.line_text(n)
        if a != b and (n not in added or not _one_insertion(a, b)):
            return f"the edit would change line {n} beyond the comment"
    settings = cache.settings(path)
    old_found = {(d.code, d.line) for d in lint_text(path, old, kind, settings)[0]}
    new_found = {(d.code, d.line) for d in lint_text(path, new, kind, settings)[0]}
    suppressed = {(c, n) for n, codes in added.items() for c in codes}
    if new_found & suppressed:
        return "the comment would not suppress the finding"
    if new_found - old_found:
        return "the edit would add a finding"
    return None


def _one_insertion(old: str, new: str) -> bool:
    """Whether `new` is `old` with one piece of text inserted (a comment, or codes)."""
    extra = len(new) - len(old)
    if extra <= 0:
        return False
    i = 0
    while i < len(old) and old[i] == new[i]:
        i += 1
    return new[i + extra :] == old[i:]


def summary(result: NoqaResult) -> str:
    n = result.added
    return f"Added {n} noqa directive{'s' if n != 1 else ''}."
