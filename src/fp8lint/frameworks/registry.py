"""Every framework family, found by package, and every table built from their descriptors.

A family is a package `fp8lint.frameworks.NAME` whose `__init__` exports `FAMILY` (see
`shared.family`).  Nothing else registers it: the framework labels, the tree recognizers in
order, the TOML, Python and shell readers, the prefilter words, `fp8lint schema` and the fix
writers' per-family spellings all come from here.  Building the list imports each family's
`__init__` only (data and references, no reader).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from fp8lint.frameworks.shared.family import Family, PythonReader

if TYPE_CHECKING:
    from fp8lint.documents.text import SourceFile
    from fp8lint.documents.tree import Document
    from fp8lint.model import Fp8Site

PACKAGE = "fp8lint.frameworks"
NOT_FAMILIES = frozenset({"shared"})  # packages under frameworks/ that are machinery
UNIDENTIFIED_LABEL = "unidentified family"  # sites of FP8 keys no family claims

TreeRecognizer = Callable[["SourceFile", "Document"], "list[Fp8Site]"]


class RegistryError(RuntimeError):
    """A family package without a valid descriptor: a programming error, reported as such."""


@cache
def families() -> tuple[Family, ...]:
    """Every family, by name."""
    found: list[Family] = []
    for info in pkgutil.iter_modules([os.path.dirname(__file__)]):  # no import of the package
        if not info.ispkg or info.name in NOT_FAMILIES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        family = getattr(module, "FAMILY", None)
        if not isinstance(family, Family):
            raise RegistryError(f"{module.__name__} exports no `FAMILY = Family(...)`")
        if family.name != info.name:
            raise RegistryError(f"{module.__name__}: FAMILY.name is {family.name!r}")
        found.append(family)
    return tuple(sorted(found, key=lambda f: f.name))


def family(name: str) -> Family | None:
    for fam in families():
        if fam.name == name:
            return fam
    return None


def label(name: str) -> str:
    """How `fp8lint show` and `simulate` name a site's framework."""
    fam = family(name)
    return fam.label if fam is not None else UNIDENTIFIED_LABEL


class _Deferred:
    """A reader whose module is imported the first time it is called: the first recognizer
    that answers wins, so a NeMo config never loads the twenty readers ordered after NeMo's."""

    __slots__ = ("_family", "_read", "_ref")

    def __init__(self, family: Family, ref: str) -> None:
        self._family, self._ref = family, ref
        self._read: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        if self._read is None:
            self._read = self._family.resolve(self._ref)
        return self._read(*args)


def _ordered(pick: Callable[[Family], tuple[tuple[int, str], ...]]) -> list[tuple[str, Any]]:
    """(family name, reader) lowest order first."""
    entries = [(order, fam.name, ref, fam) for fam in families() for order, ref in pick(fam)]
    return [
        (fam.name, _Deferred(fam, ref)) for _, _, ref, fam in sorted(entries, key=lambda e: e[:3])
    ]


@cache
def tree_recognizers() -> tuple[tuple[str, TreeRecognizer], ...]:
    """(family, recognizer) for YAML/JSON, lowest order first (the first that answers for a
    document wins)."""
    return tuple(_ordered(lambda f: f.trees))


@cache
def command_readers() -> tuple[tuple[str, Any], ...]:
    """Shell command readers, asked before Megatron's and Hydra's own (first claim wins)."""
    return tuple(_ordered(lambda f: f.commands))


@cache
def script_readers() -> tuple[tuple[str, Any], ...]:
    """Readers of a script's variables (a sourced config script's exports)."""
    return tuple(_ordered(lambda f: f.scripts))


@cache
def toml_readers() -> tuple[tuple[str, Any], ...]:
    return tuple((fam.name, fam.resolve(fam.toml)) for fam in families() if fam.toml)


def attributed(family: str, sites: list[Fp8Site]) -> list[Fp8Site]:
    """`sites` as built by `family`'s reader (`Fp8Site.family`)."""
    return [s if s.family else s.model_copy(update={"family": family}) for s in sites]


@cache
def python_readers() -> tuple[tuple[Family, PythonReader], ...]:
    """Python readers beyond the core recipe pass (`python_sites`), in their order."""
    pairs = [(fam, reader) for fam in families() for reader in fam.python]
    return tuple(sorted(pairs, key=lambda p: (p[1].order, p[0].name)))


def python_words() -> str:
    """What a Python file must name for any family reader to run (an alternation)."""
    return "|".join(reader.words for _, reader in python_readers())


def prefilter_words() -> frozenset[str]:
    """Words beyond `fp8`/`float8` with which some family's files set FP8 (the engine's
    byte prefilter must match each: `tests/frameworks/test_registry.py`)."""
    return frozenset(word for fam in families() for word in fam.prefilter)


def field_writer(framework: str, name: str) -> Any | None:
    """A family's own writer for one model field (NeMo 1.x spells the format as two flags)."""
    fam = family(framework)
    ref = fam.writers.get(name) if fam is not None else None
    return fam.resolve(ref) if fam is not None and ref is not None else None


def upper_case_format(framework: str) -> bool:
    fam = family(framework)
    return fam is not None and fam.upper_case_format


def schemas() -> list[tuple[str, str, str, str]]:
    """(name, summary, files, `module:attribute`) of every family schema."""
    return [
        (fam.name, fam.schema.summary, fam.schema.files, fam.module(fam.schema.model))
        for fam in families()
        if fam.schema is not None
    ]
