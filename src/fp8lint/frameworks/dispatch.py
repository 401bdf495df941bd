"""Which readers read which document kind: each kind's document is parsed once and handed
to the families' readers the registry lists (`registry`), in their order.

Tree recognizers see the format-neutral `tree.Node`, so Accelerate or DeepSpeed configs read
the same whether written as YAML or JSON.  Each YAML document is its own set of sites.
"""

from __future__ import annotations

import re

from fp8lint.documents.text import ParseError, Reader, SourceFile
from fp8lint.documents.tree import Document, Node, TreeError, load_json, load_yaml, walk
from fp8lint.frameworks import unidentified
from fp8lint.frameworks.trees import sites_of
from fp8lint.model import Fp8Site, SourceNote

SCRIPT_KEYS = ("script", "run", "command", "cmd", "before_script", "entrypoint")
_LAUNCH = re.compile(
    r"pretrain_\w+\.py|train\.py|--config-name|training="
    # the families of `shell_families`: ms-swift, MaxText, Megatron-Bridge, NVIDIA perf
    r"|megatron (sft|pt|rlhf)\b|MaxText\.train|pre_train\.train|run_recipe\.py|performance[/.]"
)


def script_snippets(file: SourceFile, docs: list[Document], reader: Reader) -> list[Fp8Site]:
    """Launch commands written inside YAML (CI `run:`/`script:` fields, job specs): the
    snippet is read as shell, at its own position in the file."""
    found: list[Node] = []
    for doc in docs:
        if doc.root is None:
            continue
        for _, mapping in walk(doc.root, max_depth=12):
            for k, v in mapping.value:
                if k.raw not in SCRIPT_KEYS:
                    continue
                items = v.value if v.kind == "seq" else [v]
                found.extend(
                    n
                    for n in items
                    if n.kind == "scalar" and isinstance(n.value, str) and _LAUNCH.search(n.value)
                )
    if not found:
        return []
    from fp8lint.frameworks.launch import sites_in

    text = file.text
    virtual = ["\n" if ch == "\n" else " " for ch in text]
    for node in found:
        start, end = node.start.index, node.end.index
        if node.style in ("|", ">"):
            start = text.find("\n", start) + 1  # the content starts on the next line
        for i in range(start, min(end, len(text))):
            ch = text[i]
            if node.style in ("'", '"') and i in (node.start.index, end - 1):
                continue  # the quotes themselves
            virtual[i] = " " if (ch == "\n" and node.style == ">") else ch
    return sites_in(file, "".join(virtual), reader)


def parse_yaml(file: SourceFile, reader: Reader) -> list[Fp8Site]:
    """Each document, merged over the parents its `defaults:` names (see `hydra`)."""
    from fp8lint.frameworks.shared.hydra import effective_root

    try:
        docs = load_yaml(file.text)
    except TreeError as exc:
        raise ParseError(exc.message, exc.line, exc.column) from None
    sites: list[Fp8Site] = []
    for doc in docs:
        missing: list[tuple[str, Node]] = []
        outside: list[tuple[str, Node]] = []
        unread: list[str] = []
        root, layers = effective_root(file, doc, reader, missing, outside, unread)
        if len(layers) == 1:
            found = sites_of(file, [doc])
        else:
            merged = Document(root=root, index=doc.index, start=doc.start, syntax=doc.syntax)
            found = [s.model_copy(update={"layers": layers}) for s in sites_of(file, [merged])]
        notes = [_missing_parent(file, name, node) for name, node in missing]
        notes += [_outside_parent(file, name, node) for name, node in outside]
        if notes:
            found = [s.model_copy(update={"notes": [*s.notes, *notes]}) for s in found]
        if unread:
            from fp8lint.frameworks.shared.hydra import unread_layers

            found = [unread_layers(s, list(dict.fromkeys(unread))) for s in found]
        sites.extend(found)
    sites += script_snippets(file, docs, reader)
    return sites or unidentified.from_docs(file, docs)


def _missing_parent(file: SourceFile, name: str, node: Node) -> SourceNote:
    """A `defaults:` parent that is not next to the file (a typo, or a config that lives on
    a search path fp8lint does not know): its settings are not in the effective config."""
    return SourceNote.model_construct(
        kind="missing-parent",
        key=name,
        span=file.span(node.start, node.end),
        message=f"`defaults:` names `{name}`, which is not found next to this file; "
        "its settings are left out of the effective config",
    )


def _outside_parent(file: SourceFile, name: str, node: Node) -> SourceNote:
    """A `defaults:` parent that resolves outside the repository root (`paths`): fp8lint
    does not read it, so its settings are not in the effective config."""
    return SourceNote.model_construct(
        kind="parent-outside-repository",
        key=name,
        span=file.span(node.start, node.end),
        message=f"`defaults:` names `{name}`, which lies outside the repository root; "
        "it is not read, so its settings are left out of the effective config",
    )


def parse_json(file: SourceFile) -> list[Fp8Site]:
    try:
        docs = load_json(file.text)
    except TreeError as exc:
        raise ParseError(exc.message, exc.line, exc.column) from None
    return sites_of(file, docs) or unidentified.from_docs(file, docs)


def parse_toml(file: SourceFile) -> list[Fp8Site]:
    from fp8lint.documents.toml import load
    from fp8lint.frameworks.registry import attributed, toml_readers

    doc = load(file)
    return [site for family, read in toml_readers() for site in attributed(family, read(file, doc))]


def sites(file: SourceFile, kind: str, reader: Reader) -> list[Fp8Site]:
    """The sites of one file of `kind` (see `fp8lint.frameworks.recognize`)."""
    if kind == "yaml":
        return parse_yaml(file, reader)
    if kind == "json":
        return parse_json(file)
    if kind == "toml":
        return parse_toml(file)
    if kind == "shell":
        from fp8lint.frameworks.launch import sites_in

        return sites_in(file, file.text, reader)
    from fp8lint.frameworks.python_sites import parse_python

    return parse_python(file)
