"""YAML/JSON documents to sites: each document is handed to the families' tree recognizers
(`registry.tree_recognizers`, lowest order first); the first that answers wins."""

from __future__ import annotations

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document
from fp8lint.model import Fp8Site


def sites_of(file: SourceFile, docs: list[Document]) -> list[Fp8Site]:
    """Each document's sites from the first tree recognizer that answers for it."""
    from fp8lint.frameworks.registry import attributed, tree_recognizers

    sites: list[Fp8Site] = []
    for doc in docs:
        for family, recognize in tree_recognizers():
            found = recognize(file, doc)
            if found:
                sites.extend(attributed(family, found))
                break
    return sites
