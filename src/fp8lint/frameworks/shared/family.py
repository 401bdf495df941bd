"""A framework family's descriptor: everything the registry needs to route files to it.

Each family package (`fp8lint.frameworks.NAME`) exports one `FAMILY = Family(...)` in its
`__init__.py`.  The descriptor holds data and references only (`".reader:from_tree"`, relative
to the family's package), so importing every family's `__init__` to build the registry loads
none of their readers: a reader module is imported the first time a file needs it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PythonReader:
    """A Python entry point: `read(ctx)` runs when the file's text contains one of `needles`.

    `words` is a regular-expression alternation of what the family's sites start from; a file
    that matches no family's words (and none of the core recipe names) is not parsed at all.
    `ctx.targets` holds the calls the core recipe pass found (TE autocasts among them)."""

    words: str
    needles: tuple[str, ...]
    read: str
    order: int = 50  # among Python readers (sites at one position keep this order)


@dataclass(frozen=True)
class Schema:
    """What `fp8lint schema NAME` exports: the family's `FILE` model (the whole file, keys as
    users spell them) and the listing's two columns."""

    summary: str
    files: str
    model: str = ".surface:FILE"


@dataclass(frozen=True)
class Family:
    """One framework family.

    `name` is the package name, the `fp8lint schema` name and, for sites that carry this
    family's semantics, `Fp8Site.framework`.  Tree recognizers and shell command readers carry
    an order: the registry asks them lowest first, and the first that answers wins (mind it
    only for files that look like two things)."""

    name: str
    label: str
    summary: str  # one line: what the family reads (docs/frameworks.md, `fp8lint rule` pages)
    surface: str | None = ".surface"  # module with `SURFACE` (validated) and `FILE` (exported)
    schema: Schema | None = None
    trees: tuple[tuple[int, str], ...] = ()  # (order, "module:function(file, doc)")
    toml: str | None = None  # "module:function(file, doc)" for TOML job configs
    python: tuple[PythonReader, ...] = ()
    commands: tuple[tuple[int, str], ...] = ()  # (order, "module:function(file, words, script)")
    scripts: tuple[tuple[int, str], ...] = ()  # (order, "module:function(file, script, sites,
    # reader)"): a script's variables (a sourced config script's exports)
    prefilter: tuple[str, ...] = ()  # words beyond `fp8`/`float8` its files set FP8 with
    writers: dict[str, str] = field(default_factory=dict)  # model field -> field writer
    upper_case_format: bool = False  # spells format members HYBRID / E4M3

    def module(self, ref: str) -> str:
        """The absolute module of a reference (`.reader` is the family's own)."""
        return f"fp8lint.frameworks.{self.name}{ref}" if ref.startswith(".") else ref

    def resolve(self, ref: str) -> Any:
        """The object a reference names, its module imported on first use."""
        module, _, attribute = ref.partition(":")
        return getattr(importlib.import_module(self.module(module)), attribute)
