"""The tree recognizers (YAML and JSON documents, and effective configs merged from them), in
the order they are asked: the first that answers for a document wins."""

from __future__ import annotations

from collections.abc import Callable

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.frameworks import (
    accelerate,
    automodel,
    deepspeed,
    levanter,
    llamafactory,
    maxtext,
    megatron,
    nanotron,
    nemo1,
    nemo_rl,
    primus,
    te_debug,
)
from fp8lint.model import Fp8Site

Recognizer = Callable[[SourceFile, Document], list[Fp8Site]]

# Order matters only for files that look like two things; the first that answers wins.
RECOGNIZERS: tuple[Recognizer, ...] = (
    megatron.from_model_args,
    nemo1.from_tree,
    llamafactory.from_tree,
    accelerate.from_tree,
    automodel.from_tree,
    levanter.from_tree,
    primus.from_tree,
    nemo_rl.from_tree,
    nanotron.from_tree,
    maxtext.from_tree,
    te_debug.from_tree,
    te_debug.from_precision_config,
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
