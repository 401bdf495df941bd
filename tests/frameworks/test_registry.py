"""The registry: every family package is found by its `FAMILY` descriptor, and every table the
engine uses (recognizers, readers, prefilter words, schemas, writers) follows from them."""

from __future__ import annotations

import re
from enum import Enum
from importlib import import_module

import grimp
import pytest
from pydantic import BaseModel

from fp8lint.documents import kind_for
from fp8lint.engine import lint_text
from fp8lint.engine.files import mentions_fp8
from fp8lint.engine.schemas import schemas
from fp8lint.frameworks import registry
from fp8lint.frameworks.shared import surfaces
from fp8lint.model import SETTING_FIELDS, Fp8Site
from fp8lint.rules import all_rules
from fp8lint.settings import RunSettings

from ..conftest import CORPUS, ROOT

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


def _surface_of(site: Fp8Site, family: registry.Family | None = None) -> type[BaseModel] | None:
    """The surface model of `family` (default: the one that built `site`), class-specific
    where the surface module names one for the site's kind (TE's recipe classes)."""
    family = family or registry.family(site.family or site.framework)
    if family is None or family.surface is None:
        return None
    module = import_module(family.module(family.surface))
    for name, model in getattr(module, "SURFACES", {}).items():
        if name in site.kind.split(" ")[-1]:
            return model  # type: ignore[no-any-return]
    return module.SURFACE  # type: ignore[no-any-return]


def _owner(site: Fp8Site, default_of: str | None) -> type[BaseModel] | None:
    """Whose default a setting is: a family its `default_of` names (Accelerate leaves the
    algorithm to TE; NeMo 1.x's Megatron-Core path takes Megatron's), else the site's."""
    for family in FAMILIES:
        if default_of and default_of.startswith(family.label):
            return _surface_of(site, family)
    return _surface_of(site)


def tie(site: Fp8Site) -> tuple[int, list[str]]:
    """How many defaults of `site` were compared with a surface, and the ones that differ:
    each default the site shows for a key that its fixes would write (`EditInfo.keys`) and
    that the owning family's surface names is compared with that field's default."""
    if site.edit is None:
        return 0, []
    compared, out = 0, []
    for field in SETTING_FIELDS:
        setting = getattr(site, field)
        model = _owner(site, setting.default_of) if setting.provenance == "default" else None
        if model is None:
            continue
        fields = model.model_fields
        names = {n: n for n in fields} | {f.alias: n for n, f in fields.items() if f.alias}
        name = names.get(site.edit.keys.get(field, ""))
        defaults = surfaces.defaults_of(model)
        if name not in defaults:
            continue
        compared += 1
        value = setting.value.value if isinstance(setting.value, Enum) else setting.value
        if str(value).lower() != str(defaults[name]).lower():
            out.append(f"{site.kind}: {field} {value!r} is not {model.__name__}.{name}'s")
    return compared, out


def _configs() -> list[tuple[str, str]]:
    out = [(e.filename, e.text) for r in all_rules() for e in (*r.valid, *r.invalid)]
    for folder in (ROOT / "examples", CORPUS):
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if path.is_file() and kind_for(path.name):
                out.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
    return out


def test_every_site_default_is_its_surface_default() -> None:
    """Defaults are written once, in the surface: every default a site shows for a key of its
    family's surface is that field's default (over every rule example, `examples/` and, where
    present, the corpus)."""
    checked, wrong = 0, []
    for name, text in _configs():
        kind = kind_for(name)
        assert kind is not None
        _, sites = lint_text(name, text, kind, RunSettings())
        for site in sites:
            compared, differ = tie(site)
            checked += compared
            wrong += differ
    assert checked > 1000 and not wrong, wrong


def test_a_default_that_disagrees_with_its_surface_is_caught() -> None:
    (site,) = lint_text("t.yaml", "MODEL_ARGS:\n  --fp8-format: hybrid\n", "yaml", RunSettings())[1]
    assert tie(site)[1] == []
    wrong = site.margin.model_copy(update={"value": 3})
    assert tie(site.model_copy(update={"margin": wrong}))[1] == [
        "Megatron `MODEL_ARGS` block: margin 3 is not MegatronArgs.fp8_margin's"
    ]


@pytest.mark.parametrize("family", FAMILIES, ids=NAMES)
def test_every_family_has_its_own_test_file(family: registry.Family) -> None:
    assert (ROOT / "tests" / "frameworks" / f"test_{family.name}.py").is_file()
