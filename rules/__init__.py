"""The rule catalog: every `fp8NNN_*.py` module here defines one rule class, and its page
`FP8NNN.md` sits beside it.

This folder is `rules/` at the top of the repository and is installed as the package
`fp8lint.rules` (a setuptools `package-dir` mapping), pages included as package data.
Discovery is by module name, so adding a rule means adding one module and its page; the
meta-tests check that every rule has a page and every page a rule (or an engine code, below).
Importing this package imports no rule: reading pages stays cheap.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from fp8lint.diagnostics import Applicability, Severity

if TYPE_CHECKING:
    from fp8lint.rule import Rule


@dataclass(frozen=True)
class EngineCode:
    """A code the engine reports itself, with no rule class: it has a page here all the same,
    and these attributes (the same names as a rule class's) feed the generated docs."""

    code: str
    name: str
    severity: Severity
    summary: str
    fix: Applicability | None
    severity_note: str = ""
    default_enabled: bool = True


# FP8001 comes from reading and parsing (engine/lint.py, engine/files.py), FP8002 from the
# suppression pass (engine/suppress.py); the page tests check both against what the engine emits
ENGINE_CODES: tuple[EngineCode, ...] = (
    EngineCode(
        "FP8001", "parse-error", Severity.ERROR, "A file that cannot be read or parsed", None
    ),
    EngineCode(
        "FP8002",
        "unused-suppression",
        Severity.WARNING,
        "A suppression comment that suppresses nothing",
        Applicability.SAFE,
    ),
)


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    from fp8lint.rule import Rule

    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not (info.name.startswith("fp8") and info.name[3:6].isdigit()):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                found.append(value)
    return tuple(sorted(found, key=lambda r: r.code))


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code.upper() or rule.name == code.lower():
            return rule
    return None


# -- pages: `FP8xxx.md`, shipped in the wheel and printed by `fp8lint rule` ------------------


def rule_page(code: str) -> str:
    return resources.files(__name__).joinpath(f"{code}.md").read_text(encoding="utf-8")


def page_codes() -> list[str]:
    return sorted(
        p.name[:-3]
        for p in resources.files(__name__).iterdir()
        if p.name.startswith("FP8") and p.name.endswith(".md")
    )


def page_titles() -> dict[str, str]:
    """Code -> rule name, from each page's first line (`# FP8101 zero-headroom`)."""
    titles: dict[str, str] = {}
    for p in resources.files(__name__).iterdir():
        if p.name.startswith("FP8") and p.name.endswith(".md"):
            first = p.read_text(encoding="utf-8").split("\n", 1)[0].split()
            if len(first) >= 3:
                titles[first[1]] = first[2]
    return titles
