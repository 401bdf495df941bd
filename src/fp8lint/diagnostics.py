"""What the engine hands to renderers: plain frozen records, no rule objects, no pydantic."""

from __future__ import annotations

from enum import Enum
from functools import lru_cache

from fp8lint.records import field, record

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    import re


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@record(frozen=True)
class Related:
    """A second place a finding points at: where FP8 was enabled, an anchor, a default."""

    path: str
    line: int
    column: int
    message: str


class Applicability(str, Enum):
    """As in ruff: `--fix` applies safe fixes, `--unsafe-fixes` adds unsafe ones,
    display-only fixes are advice that is never applied."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@record(frozen=True)
class TextEdit:
    """Replace characters `start`..`end` of the decoded text with `content`.
    Lines and columns are 1-based; the end is exclusive."""

    content: str
    line: int
    column: int
    end_line: int
    end_column: int
    start: int
    end: int


# a fix's intent for a field that may change, to whatever the fixed file then says
ANY_VALUE = "<any value>"


@record(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[TextEdit, ...] = ()
    # what the fix means to change, for verification: site index, field -> intended value
    site: int = 0
    intent: tuple[tuple[str, object], ...] = ()

    def applies(self, unsafe: bool) -> bool:
        """Whether `--fix` writes it: safe fixes always, unsafe ones with `--unsafe-fixes`;
        display-only advice never."""
        if not self.edits:
            return False
        return self.applicability is Applicability.SAFE or (
            unsafe and self.applicability is Applicability.UNSAFE
        )


@record(frozen=True)
class Diagnostic:
    code: str
    name: str
    severity: Severity
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    related: tuple[Related, ...] = field(default=())
    headroom_binades: float | None = None
    fix: Fix | None = None
    # the text of the finding's first line, for renderers that show source
    source_line: str = ""
    # a stable identity for baselines and fingerprints: the config key, flag or call the
    # finding is about (never a line number, so moving lines does not change it)
    key: str = ""
    # why it matters, in one short line (the rule page has the evidence): shown by the full
    # text format as `= note:`, kept out of the one-line message
    note: str = ""

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.column, self.code, self.message)


def posix_path(path: str) -> str:
    """`path` with forward slashes (a no-op where `/` is the only separator)."""
    import os

    for sep in (os.sep, os.altsep):
        if sep and sep != "/":
            path = path.replace(sep, "/")
    return path


@lru_cache(maxsize=1)
def _unprintable() -> re.Pattern[str]:
    import re  # only for text that is not printable: `re` is not on the start-up path

    # C0 and C1 controls, line and paragraph separators, the bidi controls (marks, embeddings,
    # overrides, isolates) and lone surrogates (undecodable bytes of a file name)
    return re.compile(
        "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
    )


def printable(text: str) -> str:
    """`text` for a line of terminal or CI-log output: control characters, line separators and
    bidi controls escaped (`\\n`, `\\x1b`, `\\u2028`, `\\u202e`), so that a file name or a key
    holding a newline cannot start a line of its own (in a GitHub Actions log, a line starting
    with `::error` is a workflow command), an ESC sequence cannot reach the terminal, and a
    right-to-left override cannot make the line read other than it is.  Every output format
    that writes lines for people uses it."""
    if text.isprintable():
        return text
    return _unprintable().sub(lambda m: repr(m.group())[1:-1], text)


def fingerprint(d: Diagnostic) -> str:
    """A finding's identity across runs: the SHA-256 of its code, POSIX path and key (never a
    line number, so it survives lines moving).  SARIF's `partialFingerprints` and the review
    bot's comment markers both use it."""
    import hashlib

    text = f"{d.code}\0{posix_path(d.path)}\0{d.key}"
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


PARSE_ERROR = ("FP8001", "parse-error")


class LocatedError(Exception):
    """An input problem with a 1-based line and column: becomes an FP8001 diagnostic."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
