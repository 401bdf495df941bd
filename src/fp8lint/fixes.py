"""The verified fix loop that `--fix` and `--diff` run, and the atomic write.

A framework writer turns each finding's plan into text edits (`fp8lint.frameworks.writer`);
this loop applies the chosen edits, lints the result again with the engine's own lint
function (handed in, so nothing here imports the engine) and compares the normalized sites:
only the fields the fixes meant to change may differ, and no new finding may appear.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fp8lint.diagnostics import ANY_VALUE, Diagnostic, TextEdit

if TYPE_CHECKING:
    from fp8lint.documents.syntax import Entries
    from fp8lint.model import Fp8Site, Setting

MAX_ITERATIONS = 10
# lints one text: (diagnostics with planned fixes, the sites they came from)
Lint = Callable[[str], "tuple[list[Diagnostic], list[Fp8Site]]"]
# why a text does not parse as its file's syntax, or None
Parses = Callable[[str], "str | None"]
# every value of a text's parsed document by key path (None: a syntax without such a tree)
Shape = Callable[[str], "Entries | None"]


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    out: list[str] = []
    last = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        out.append(text[last : e.start])
        out.append(e.content)
        last = e.end
    out.append(text[last:])
    return "".join(out)


# --------------------------------------------------------------------------- the fix loop


@dataclass
class FixResult:
    text: str
    fixed: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    failure: str | None = None

    @property
    def changed(self) -> bool:
        return bool(self.fixed)


def fix_text(
    text: str,
    lint: Lint,
    unsafe: bool,
    parses: Parses | None = None,
    shape: Shape | None = None,
) -> FixResult:
    """Apply fixes until none is left (at most MAX_ITERATIONS rounds), verifying each round:
    the new text must parse (`parses`, the whole file), keep every value of the whole
    document but those whose own text an edit rewrote, none of them read through an alias
    (`shape`), and keep every site but the fields the fixes meant.  On any failed check the
    original text comes back, with the reason."""
    if shape is not None:
        shape = _remembered(shape)  # each round's fixed text is the next round's original
    current = text
    fixed: list[Diagnostic] = []
    diags, sites = lint(current)
    original = diags
    for _ in range(MAX_ITERATIONS):
        chosen: list[Diagnostic] = []
        taken: list[TextEdit] = []
        for d in diags:
            if d.fix is None or not d.fix.applies(unsafe):
                continue
            assert d.fix is not None
            if any(_overlaps(e, t) for e in d.fix.edits for t in taken):
                continue  # the next round picks it up
            chosen.append(d)
            taken.extend(d.fix.edits)
        if not chosen:
            return FixResult(current, fixed, diags)
        new = apply_edits(current, taken)
        broken = parses(new) if parses is not None else None
        if broken is not None:
            return _unchanged(text, original, unsafe, f"the fixed file no longer parses ({broken})")
        why = same_document(current, new, taken, shape) if shape is not None else None
        if why is not None:
            return _unchanged(text, original, unsafe, why)
        new_diags, new_sites = lint(new)
        why = verify(sites, new_sites, diags, new_diags, chosen)
        if why is not None:
            return _unchanged(text, original, unsafe, why)
        current, diags, sites = new, new_diags, new_sites
        fixed.extend(chosen)
    return _unchanged(text, original, unsafe, f"fixes did not settle after {MAX_ITERATIONS} rounds")


def _unchanged(text: str, original: list[Diagnostic], unsafe: bool, why: str) -> FixResult:
    """The loop gave up: the original text, its findings with their fixes refused, and why."""
    return FixResult(
        text, [], refused(original, unsafe, why), f"fix not applied: {why}; the file is unchanged"
    )


def same_document(old: str, new: str, edits: list[TextEdit], shape: Shape) -> str | None:
    """Why `new` (`old` with `edits`) changes more of its document than the edited text, or
    None.  Every value that differs must have its own `key: value` text inside an edit,
    before (a removed or rewritten value) and after (an added or rewritten one), and must not
    lie under an anchor that an alias or merge key reads: such a value shares its text with
    another key (`ablation: *base`), which the fix would change too."""
    from fp8lint.documents.syntax import Unverifiable

    try:
        before, after = shape(old), shape(new)
    except Unverifiable as exc:
        return f"the document is too large to compare after the fix ({exc})"
    if before is None or after is None:
        return None
    spans_old = [(e.start, e.end) for e in edits]
    spans_new, shift = [], 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        spans_new.append((e.start + shift, e.start + shift + len(e.content)))
        shift += len(e.content) - (e.end - e.start)
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key), after.get(key)
        if a is not None and b is not None and a.value == b.value:
            continue
        name = ".".join(key[1]) or "the document"
        for entry, spans in ((a, spans_old), (b, spans_new)):
            if entry is None:
                continue
            if entry.shared is not None:  # the keys that read it would change too
                return f"`{name}` is shared: {entry.shared}"
            if not any(_within(entry.start, entry.end, s, t) for s, t in spans):
                return f"`{name}` would change although no fix meant to change it"
    return None


def _remembered(shape: Shape) -> Shape:
    seen: dict[str, Entries | None] = {}

    def remembered(text: str) -> Entries | None:
        if text not in seen:
            seen.clear()
            seen[text] = shape(text)
        return seen[text]

    return remembered


def _within(start: int, end: int, s: int, t: int) -> bool:
    """Whether the text [start, end) meets the edited text [s, t).  An insertion meets it
    inside or at its end, not at its start: text put before a key does not write it."""
    if s == t:
        return start < s <= end
    return start < t and s < end


def _overlaps(a: TextEdit, b: TextEdit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True
    return a.start < b.end and b.start < a.end


def verify(
    before: list[Fp8Site],
    after: list[Fp8Site],
    old: list[Diagnostic],
    new: list[Diagnostic],
    chosen: list[Diagnostic],
) -> str | None:
    """Why the fixed text is not acceptable, or None."""
    from fp8lint.model import SETTING_FIELDS

    if any(d.code == "FP8001" for d in new):
        return "the fixed file no longer parses"
    if len(before) != len(after):
        return "the fixed file has a different number of FP8 sites"
    intents: dict[int, dict[str, object]] = {}
    for d in chosen:
        assert d.fix is not None
        intents.setdefault(d.fix.site, {}).update(dict(d.fix.intent))
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        intent = intents.get(i, {})
        for name in SETTING_FIELDS:
            x, y = getattr(a, name), getattr(b, name)
            if name in intent:
                if intent[name] != ANY_VALUE and y.value != intent[name]:
                    return f"`{name}` did not become {intent[name]!r}"
                continue
            if (x.value, x.known) != (y.value, y.known):
                return _unintended(name, x, chosen)
        dropped = {k[1:] for k in intent if k.startswith("-")}
        notes_a = Counter(
            n.message
            for n in a.notes
            if n.key.rsplit(".", 1)[-1] not in dropped and n.key not in dropped
        )
        notes_b = Counter(n.message for n in b.notes)
        if notes_b - notes_a:
            return "the fix added a new note about the file"
    before_codes, after_codes = Counter(d.code for d in old), Counter(d.code for d in new)
    grown = [c for c in after_codes if after_codes[c] > before_codes[c]]
    if grown:
        return f"the fix would add a new {grown[0]} finding"
    return None


def _unintended(name: str, setting: Setting[Any], chosen: list[Diagnostic]) -> str:
    """Why a field changed that no fix meant to change.  When a chosen edit rewrote the place
    its value is defined (a YAML anchor an alias reads, a `<<: *base` template), that shared
    definition is the cause: name it and the key that reads it, not just the field."""
    key = f"`{setting.key}`" if setting.key else f"`{name}`"
    if setting.via:
        at = setting.via[-1]
        for d in chosen:
            assert d.fix is not None
            if any(e.start < at.end_offset and at.start_offset < e.end for e in d.fix.edits):
                how = f" ({setting.note})" if setting.note else ""
                return f"{key} would change too: it shares the value defined at line {at.line}{how}"
    return f"{key} changed although no fix meant to change it"


def refused(diags: list[Diagnostic], unsafe: bool, why: str) -> list[Diagnostic]:
    """`diags` after the fix loop gave up on the file: the fixes it would have applied are
    kept as advice without edits (not counted as fixable, no `[*]`), saying why."""
    from fp8lint.records import replace as _replace

    out = []
    for d in diags:
        if d.fix is not None and d.fix.applies(unsafe):
            fix = _replace(d.fix, message=f"{d.fix.message} (not applied: {why})", edits=())
            d = _replace(d, fix=fix)
        out.append(d)
    return out


class FileChanged(Exception):
    """The file's bytes are no longer the ones the fixes were computed from."""


# what tells one version of a file from the next without reading it: inode, size, mtime
Stamp = tuple[int, int, int]


def stamp(info: os.stat_result) -> Stamp:
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def write_atomic(
    path: str,
    text: str,
    encoding: str,
    bom: bytes,
    expected: bytes | None = None,
    read_as: Stamp | None = None,
) -> None:
    """Replace `path` by a temporary file in the same folder, keeping its permissions.  A
    symbolic link stays a link: the file it points to is the one replaced.  With `expected`
    (the bytes the fixes were computed from) and `read_as` (the file's stamp when they were
    read), an edit made meanwhile (by an editor, another hook) is never overwritten: once the
    temporary file is written, the file must still hold those bytes under that stamp, and its
    stamp is taken again right before the rename; on any difference nothing is written and
    `FileChanged` is raised.  (The rename itself cannot be made conditional: a save in the
    microseconds between that last look and the rename is the one gap left.)"""
    path = os.path.realpath(path)
    if not os.access(path, os.W_OK):
        raise PermissionError(f"{path} is read-only")
    data = bom + text.encode(encoding)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".fp8lint-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if expected is not None:
            seen = unchanged_since(path, expected, read_as)
            if stamp(os.stat(path)) != seen:  # saved between that check and now
                raise FileChanged(path)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def unchanged_since(path: str, expected: bytes, read_as: Stamp | None) -> Stamp:
    """The file's stamp, after checking that it still holds `expected` (and, given
    `read_as`, the stamp it had when those bytes were read); else `FileChanged`."""
    with open(path, "rb") as current:
        now = stamp(os.fstat(current.fileno()))
        if (read_as is not None and now != read_as) or current.read(len(expected) + 1) != expected:
            raise FileChanged(path)
    return now
