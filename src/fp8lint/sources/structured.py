"""YAML and JSON sources: load a position-keeping tree, then ask each framework recognizer.

Recognizers see the format-neutral `tree.Node`, so Accelerate or DeepSpeed configs read the
same whether written as YAML or JSON.  Each YAML document is its own set of sites.
"""

from __future__ import annotations

from collections.abc import Callable

from fp8lint.frameworks import accelerate, deepspeed, megatron, nemo1
from fp8lint.model import Fp8Site
from fp8lint.sources.base import ParseError, SourceFile
from fp8lint.tree import Document, TreeError, load_json, load_yaml

Recognizer = Callable[[SourceFile, Document], list[Fp8Site]]

# Order matters only for files that look like two things; the first that answers wins.
RECOGNIZERS: tuple[Recognizer, ...] = (
    megatron.from_model_args,
    nemo1.from_tree,
    accelerate.from_tree,
    deepspeed.from_tree,
    megatron.from_transformer_config,
)


def sites_of(file: SourceFile, docs: list[Document]) -> list[Fp8Site]:
    sites: list[Fp8Site] = []
    for doc in docs:
        for recognize in RECOGNIZERS:
            found = recognize(file, doc)
            if found:
                sites.extend(found)
                break
    return sites


def parse_yaml(file: SourceFile) -> list[Fp8Site]:
    """Each document, merged over the parents its `defaults:` names (see `hydra`)."""
    from fp8lint.sources.hydra import effective_root

    try:
        docs = load_yaml(file.text)
    except TreeError as exc:
        raise ParseError(exc.message, exc.line, exc.column) from None
    sites: list[Fp8Site] = []
    for doc in docs:
        root, layers = effective_root(file, doc)
        if len(layers) == 1:
            sites.extend(sites_of(file, [doc]))
            continue
        merged = Document(root=root, index=doc.index, start=doc.start, syntax=doc.syntax)
        sites.extend(s.model_copy(update={"layers": layers}) for s in sites_of(file, [merged]))
    return sites


def parse_json(file: SourceFile) -> list[Fp8Site]:
    try:
        docs = load_json(file.text)
    except TreeError as exc:
        raise ParseError(exc.message, exc.line, exc.column) from None
    return sites_of(file, docs)
