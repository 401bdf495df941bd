"""Settings types shared by the engine, the configuration loader and the fix loop.

Plain frozen data and no imports beyond the standard library: every layer may read them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fp8lint.diagnostics import Severity
from fp8lint.records import field, record

FAIL_LEVELS = ("info", "warning", "error")  # `--fail-on` and `fail-on`, lowest first

TYPE_CHECKING = False  # typing's import is a tenth of a pre-commit call
if TYPE_CHECKING:
    from typing import Any

# Larger files are not read.  4 MiB is far above any real config or recipe file and bounds what
# one file can cost (`bench/hostile.py` times files over it).
DEFAULT_MAX_BYTES = 4 * 1024 * 1024
DEFAULT_FILE_TIMEOUT = 60.0  # seconds for one file's parse and rules; 0: no limit


@record(frozen=True)
class Selection:
    """Which rules run, ruff-style: `select` is the base, then `extend_select`, then `ignore`.

    Entries are codes, code prefixes (`FP81`), rule names, or `ALL`.
    """

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def enabled(self, code: str, name: str, default: bool) -> bool:
        def hit(patterns: Iterable[str]) -> bool:
            for p in patterns:
                p = p.strip()
                if p.upper() == "ALL" or code.startswith(p.upper()) or p.lower() == name:
                    return True
            return False

        on = hit(self.select) if self.select is not None else default
        if hit(self.extend_select):
            on = True
        if hit(self.ignore):
            on = False
        return on


@record
class RunSettings:
    selection: Selection = field(default_factory=Selection)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # code -> option -> value
    max_bytes: int = DEFAULT_MAX_BYTES
    severity: Mapping[str, Severity] = field(default_factory=dict)  # code -> overridden level
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    # the fields above that the command line set (`max_bytes`, `file_timeout`): they win over
    # the configuration files; otherwise each file's closest configuration decides
    command_line: frozenset[str] = frozenset()
    # whether each finding's fix is planned (its edits written out, `Diagnostic.fix`): not
    # when nothing in the run applies, shows or keeps one
    plan_fixes: bool = True


@record(frozen=True)
class PathRules:
    """Exclusions and per-file ignores given on the command line (patterns relative to the
    working directory).  As in ruff, `exclude` and `per_file_ignores` replace what the
    configuration says, `extend_exclude` adds to it; None: not given."""

    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None

    @property
    def given(self) -> bool:
        return (
            self.exclude is not None
            or bool(self.extend_exclude)
            or self.per_file_ignores is not None
        )


@record(frozen=True)
class FixMode:
    """`--fix` (write), `--diff` (write=False), with or without unsafe fixes."""

    unsafe: bool = False
    write: bool = True
