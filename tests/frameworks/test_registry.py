"""The registry: every family package is found by its `FAMILY` descriptor, and every table the
engine uses (recognizers, readers, prefilter words, schemas, writers) follows from them."""

from __future__ import annotations

import re
from importlib import import_module

import grimp
import pytest
from pydantic import BaseModel

from fp8lint.engine.files import mentions_fp8
from fp8lint.engine.schemas import schemas
from fp8lint.frameworks import registry

from ..conftest import ROOT

FAMILIES = registry.families()
NAMES = [f.name for f in FAMILIES]


def test_every_family_package_is_registered() -> None:
    packages = {
        p.parent.name
        for p in (ROOT / "src" / "fp8lint" / "frameworks").glob("*/__init__.py")
        if p.parent.name not in registry.NOT_FAMILIES
    }
    assert set(NAMES) == packages
    assert all(f.label and f.summary for f in FAMILIES)


@pytest.mark.parametrize("family", FAMILIES, ids=NAMES)
def test_every_family_has_a_surface(family: registry.Family) -> None:
    """The surface is where a family's spellings, types, choices and defaults are written."""
    assert family.surface is not None, f"{family.name} has no surface model"
    module = import_module(family.module(family.surface))
    assert issubclass(module.SURFACE, BaseModel) and issubclass(module.FILE, BaseModel)


@pytest.mark.parametrize("family", FAMILIES, ids=NAMES)
def test_every_reference_resolves(family: registry.Family) -> None:
    refs = [ref for _, ref in (*family.trees, *family.commands, *family.scripts)]
    refs += [r.read for r in family.python] + list(family.writers.values())
    refs += [family.toml] if family.toml else []
    for ref in refs:
        assert callable(family.resolve(ref)), ref
    for reader in family.python:
        re.compile(reader.words)
        assert reader.needles


def test_tree_recognizer_orders_are_distinct() -> None:
    orders = [order for f in FAMILIES for order, _ in f.trees]
    assert len(orders) == len(set(orders))
    commands = [order for f in FAMILIES for order, _ in f.commands]
    assert len(commands) == len(set(commands))


@pytest.mark.parametrize("word", sorted(registry.prefilter_words()))
def test_the_prefilter_lets_every_family_word_through(word: str) -> None:
    """A family whose files set FP8 without `fp8`/`float8` declares the word; the byte
    prefilter (`engine/files.py`, written out for speed) must pass it."""
    assert mentions_fp8(f"x = {word}\n".encode())


def test_the_schema_listing_is_the_registry() -> None:
    listed = [s.name for s in schemas()]
    assert listed[0] == "config"
    assert listed[1:] == [f.name for f in FAMILIES if f.schema is not None]


def test_labels_come_from_the_families() -> None:
    assert registry.label("megatron") == "Megatron-LM"
    assert registry.label("unidentified") == registry.UNIDENTIFIED_LABEL


GRAPH = grimp.build_graph("fp8lint")


@pytest.mark.parametrize("family", FAMILIES, ids=NAMES)
def test_families_do_not_import_each_other(family: registry.Family) -> None:
    """Only `fp8lint.frameworks.shared` is shared between families; knowledge two families
    need lives there.  (Generated per family, so a new family needs no contract edit.)"""
    importer = f"fp8lint.frameworks.{family.name}"
    for other in NAMES:
        if other == family.name:
            continue
        chain = GRAPH.find_shortest_chain(
            importer=importer, imported=f"fp8lint.frameworks.{other}", as_packages=True
        )
        assert chain is None, " -> ".join(chain or ())


def test_shared_imports_no_family_and_no_dispatch() -> None:
    shared = "fp8lint.frameworks.shared"
    above = [f"fp8lint.frameworks.{n}" for n in NAMES]
    above += [
        m for m in GRAPH.find_children("fp8lint.frameworks") if m != shared and m not in above
    ]
    for module in above:
        chain = GRAPH.find_shortest_chain(importer=shared, imported=module, as_packages=True)
        assert chain is None, " -> ".join(chain or ())
