"""Python recipe code: every FP8 site a file builds, from its libcst tree.

The file is parsed, never imported or run (`fp8lint.documents.python`), and only when it
names something a recognizer reads (`SITE_NAMES`; libcst is imported only then).  Each
family's module recognizes its own calls: `te` (recipes, autocasts, amax groups, the TE
output head, torch checkpoint recompute), `nemo2` (`MegatronMixedPrecision`, presets,
`MegatronStrategy` topology), `bridge` (`MixedPrecisionConfig`, Bridge's presets, preset
names as strings), `accelerate` (`FP8RecipeKwargs`, `TERecipeKwargs`) and `torchao`
(`convert_to_float8_training`).  This module finds the calls they read, in source order,
and hands each to its family.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fp8lint.documents.text import ParseError, SourceFile
from fp8lint.frameworks.registry import attributed, python_readers, python_words

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from fp8lint.documents.python import PyModule
    from fp8lint.frameworks.shared.python_args import Context, Target
    from fp8lint.model import Fp8Site

# Every site this source builds starts from one of these names; a file that mentions FP8 only
# in passing (a comment, a log line, a dtype) is not worth a parse.
SITE_NAMES = re.compile(
    r"DelayedScaling|Float8CurrentScaling|MXFP8BlockScaling|Float8BlockScaling|"
    r"NVFP4BlockScaling|CustomRecipe|MegatronMixedPrecision|MixedPrecisionConfig|RecipeKwargs|"
    r"convert_to_float8_training|_mixed\b|" + python_words()
)
# What a top-level definition must mention to matter to any recognizer: the site names, the
# calls read around them (autocasts, checkpoints, TE linears, the strategy, torchao's config).
# Definitions that mention none of these are left out of the parse (`documents.python.prune`).
RELEVANT = re.compile(
    SITE_NAMES.pattern + r"|\b(?:fp8_autocast|autocast|checkpoint|checkpoint_sequential|Linear|"
    r"gradient_checkpointing|gradient_checkpointing_enable|"
    r"LayerNormLinear|MegatronStrategy|Float8LinearConfig)\b"
)


def parse_python(file: SourceFile) -> list[Fp8Site]:
    """Every FP8 site of a Python file: one per recipe, plugin, preset or handler built."""
    if not SITE_NAMES.search(file.text):
        return []
    from fp8lint.documents.python import deep

    try:
        return deep(lambda: _sites(file))
    except RecursionError:
        raise ParseError("nesting too deep to read", 1, 1) from None


def load(file: SourceFile) -> PyModule:
    """The file's parsed module as the recognizers read it (cached per file: the fix writer
    reuses the recognizers' parse).  Call inside `documents.python.deep`."""
    from fp8lint.documents.python import parse

    return parse(file, RELEVANT)


def _sites(file: SourceFile) -> list[Fp8Site]:
    from fp8lint.frameworks.accelerate import reader as accelerate
    from fp8lint.frameworks.bridge import python as bridge
    from fp8lint.frameworks.nemo2 import python as nemo2
    from fp8lint.frameworks.shared.python_args import Context
    from fp8lint.frameworks.te import python as te
    from fp8lint.frameworks.torchao import reader as torchao

    ctx = Context(load(file))
    names = (
        te.CALL_NAMES
        | frozenset(nemo2.PRESETS)
        | {nemo2.NEMO2_CLASS, nemo2.STRATEGY_CLASS, bridge.BRIDGE_CLASS, torchao.CONVERT}
        | accelerate.CLASSES
    )
    wrapped = (
        frozenset(te.CLASSES)
        | {nemo2.NEMO2_CLASS, bridge.BRIDGE_CLASS, nemo2.STRATEGY_CLASS}
        | accelerate.CLASSES
    )
    requires = {name: te.imported_from_te for name in te.CLASSES}
    requires[torchao.CONVERT] = torchao.imported_from_torchao
    targets = _targets(ctx, names, wrapped, requires)

    topology = nemo2.topology(ctx, [t for t in targets if t.name == nemo2.STRATEGY_CLASS])
    recipes = {id(t.call): t for t in targets if t.name in te.CLASSES}
    autocasts = [t for t in targets if t.name in te.AUTOCASTS]
    links, unlinked = te.autocast_links(ctx, autocasts, recipes)
    switched_off = te.autocast_switches(ctx, autocasts, recipes)
    out: list[Fp8Site] = []
    for tgt in targets:
        if tgt.name in te.CLASSES:
            site = te.recipe_site(ctx, tgt)
            scope = te.amax_scope(ctx, tgt.call, links.get(id(tgt.call), []), unlinked)
            update: dict[str, object] = {"amax_scope": scope}
            off = switched_off.get(id(tgt.call))
            if off is not None:  # every autocast with this recipe is `enabled=False`
                update.update(enabled=off, enable_span=off.span)
            out.append(site.model_copy(update=update))
        elif tgt.name == nemo2.NEMO2_CLASS:
            out.append(nemo2.mixed_precision_site(ctx, tgt, nemo2.NEMO2_PROFILE, topology))
        elif tgt.name == bridge.BRIDGE_CLASS:
            out.append(nemo2.mixed_precision_site(ctx, tgt, bridge.BRIDGE_PROFILE, topology))
        elif tgt.name in nemo2.PRESETS:
            written_as = ctx.text(tgt.call.func)
            overrides = ctx.overrides(tgt.call)
            if bridge.is_bridge_preset(tgt.name, tgt.origin):
                site = bridge.preset_site(ctx, tgt.name, written_as, tgt.call, topology, overrides)
            else:
                site = nemo2.nemo2_preset_site(
                    ctx, tgt.name, written_as, tgt.call, topology, overrides
                )
            out.append(site)
        elif tgt.name in accelerate.CLASSES:
            out.append(accelerate.from_python(ctx, tgt))
        elif tgt.name == torchao.CONVERT:
            out.append(torchao.site(ctx, tgt))
    for node in ctx.facts.strings:
        ok, value = ctx.literal(node)
        if not ok or not isinstance(value, str):
            continue
        name = value.strip().replace("-", "_")
        if name in nemo2.PRESETS:  # a preset named as a string: Bridge looks it up
            out.append(bridge.preset_site(ctx, name, value, node, topology, []))
    ctx.targets = targets
    text = file.text
    for family, reader in python_readers():  # the other families, each on its own words
        if any(needle in text for needle in reader.needles):
            out.extend(attributed(family.name, family.resolve(reader.read)(ctx)))
    te_autocast = any(t.name in te.AUTOCASTS and te.is_te_autocast(t) for t in targets)
    sites = te.module_facts(ctx, out, te_autocast)
    return sorted(
        sites, key=lambda s: (s.span.line, s.span.column, s.span.end_line, s.span.end_column)
    )


def _targets(
    ctx: Context,
    names: frozenset[str],
    wrapped: frozenset[str],
    requires: Mapping[str, Callable[[str], bool]],
) -> list[Target]:
    """The calls that build something a recognizer reads, in source order.  Only calls
    spelled with a known name, an import alias of one, or a config wrapper are looked at."""
    from fp8lint.frameworks.shared.python_args import CONFIG_WRAPPERS
    from fp8lint.frameworks.te import python as te

    facts = ctx.facts
    spelled = set(names) | CONFIG_WRAPPERS | te.OTHER_NAMES
    spelled |= {alias for alias, real in facts.aliases.items() if real in spelled}
    # scope questions are asked about these calls (and what their arguments name)
    ctx.doc.focus({facts.statement[id(c)] for n in spelled for c in facts.calls.get(n, ())})
    found: list[Target] = []
    for name in spelled:
        for call in facts.calls.get(name, ()):
            tgt = ctx.target(call, names, wrapped, requires)
            if tgt is not None:
                found.append(tgt)
    found.sort(key=lambda t: ctx.doc.where(t.call))
    return found
