"""The rule catalog: every `fp8NNN_*.py` module here defines one rule class.

Discovery is by module name, so adding a rule means adding one module and its page
`FP8NNN.md` in this folder; the meta-tests check that every rule has a page and every page a
rule.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing the package (e.g. to read pages) must stay cheap
    from fp8lint.rules.base import Rule


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    from fp8lint.rules.base import Rule

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
