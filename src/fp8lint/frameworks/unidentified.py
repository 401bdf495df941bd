"""YAML/JSON files with FP8-looking keys that no known family claims.

No framework's meaning is guessed for them: the file gets one record of the keys (framework
`UNIDENTIFIED`, nothing enabled, no `edit`), which only FP8406 reads; the engine runs no other
rule on it, and no fix can touch it.
"""

from __future__ import annotations

import re

from fp8lint.documents.text import SourceFile
from fp8lint.documents.tree import Document, walk
from fp8lint.frameworks.te import debug as te_debug
from fp8lint.model import Fp8Site, Framework, Setting, SourceNote

# a key that names FP8 (`fp8`, `use_fp8_kv_cache`, `DisableFP8GEMM`, `float8`, `enable_float8`)
FP8_KEY = re.compile(r"fp8|float8", re.IGNORECASE)
OFF = frozenset({"none", "null", "~", "", "false", "off", "no"})  # YAML/JSON spellings of "off"
MAX_KEYS = 64  # keys recorded per file (the finding lists a few of them)


def from_docs(file: SourceFile, docs: list[Document]) -> list[Fp8Site]:
    """One record of every FP8-looking key in the file's documents, or none when there is no
    such key."""
    notes: list[SourceNote] = []
    for doc in docs:
        if doc.root is None or te_debug.is_debug_config(doc):
            continue
        for path, mapping in walk(doc.root):
            for k, v in mapping.value:
                if k.kind != "scalar" or k.raw is None or not FP8_KEY.search(str(k.raw)):
                    continue
                if v.kind == "scalar" and str(v.raw).lower() in OFF:
                    continue  # a key that turns nothing on is no FP8 setting to report
                dotted = ".".join((*path, str(k.raw)))
                notes.append(
                    SourceNote.model_construct(
                        kind="unidentified",
                        key=dotted,
                        span=file.span_of(k),  # the key: its value may be missing
                        message=f"`{dotted}` belongs to no config family fp8lint knows",
                    )
                )
                if len(notes) >= MAX_KEYS:
                    break
    if not notes:
        return []
    notes.sort(key=lambda n: (n.span.line, n.span.column))
    first = notes[0].span
    return [
        Fp8Site.model_construct(
            path=file.path,
            framework=Framework.UNIDENTIFIED,
            kind="unidentified config",
            span=first,
            enabled=Setting[bool].model_construct(
                known=False, note="the file belongs to no config family fp8lint knows"
            ),
            notes=notes,
        )
    ]
