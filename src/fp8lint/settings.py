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


# `[tool.fp8lint] target-versions`: the framework releases the checks assume, as ruff's
# `target-version` does for Python.  The default is each framework's newest release when this
# fp8lint was made; `main` is the unreleased branch (checks that exist only there are off
# unless a target names it).  A finding of a version-gated check names the version it assumes.
TARGETS: dict[str, str] = {
    "transformer-engine": "2.20",
    "megatron-core": "0.19",
    "megatron-bridge": "0.6",
    "ms-swift": "4.5",
}
MAIN = (10_000,)  # `main`: newer than any release


def version_tuple(text: str) -> tuple[int, ...]:
    """`0.19` -> (0, 19); `main` -> MAIN.  ValueError for anything else."""
    if text == "main":
        return MAIN
    parts = text.split(".")
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and len(p) <= 4 for p in parts):
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(p) for p in parts)


# the key under which a rule's options carry the run's `Targets` (no rule option can be named
# so: option names are identifiers)
TARGETS_OPTION = "@targets"


@record(frozen=True)
class Targets:
    """The framework versions a run assumes (`target-versions`, over `TARGETS`)."""

    versions: Mapping[str, str] = field(default_factory=dict)  # given; the rest: TARGETS

    def version(self, framework: str) -> str:
        return self.versions.get(framework, TARGETS[framework])

    def at_least(self, framework: str, release: str) -> bool:
        """Whether the target of `framework` is `release` or newer."""
        return version_tuple(self.version(framework)) >= version_tuple(release)

    def has(self, since: str | None) -> bool:
        """Whether the target has a check that came with `since` (`transformer-engine 2.15`;
        None: every release)."""
        if since is None:
            return True
        framework, _, release = since.partition(" ")
        return framework not in TARGETS or self.at_least(framework, release)

    def assumed(self, since: str) -> str:
        """The version a gated finding assumes, in its note: `transformer-engine 2.20`."""
        return self.label(since.partition(" ")[0])

    def resolved(self) -> dict[str, str]:
        """Every framework's target, the defaults filled in (`--show-settings`)."""
        return {name: self.version(name) for name in sorted(TARGETS)}

    def label(self, framework: str) -> str:
        """How a finding names the version it assumes: `megatron-core 0.19`."""
        return f"{framework} {self.version(framework)}"


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
    targets: Targets = field(default_factory=Targets)


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
