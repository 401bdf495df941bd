"""Frameworks: one module per framework family, each with its key spellings, its defaults
(written once), a recognizer per document kind it appears in, and the writer that turns a
fix plan into edits in its own syntax.

`recognize` is the one entry the engine calls: a decoded file and its kind in, `Fp8Site`
records out.  Modules are imported only when a file of their kind needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fp8lint.documents.text import Reader, SourceFile
    from fp8lint.model import Fp8Site

# the module that recognizes each document kind (imported on first use)
RECOGNIZER_MODULES = {
    "yaml": "fp8lint.frameworks.dispatch",
    "json": "fp8lint.frameworks.dispatch",
    "toml": "fp8lint.frameworks.dispatch",
    "shell": "fp8lint.frameworks.dispatch",
    "python": "fp8lint.frameworks.python_sites",
}


def recognize(file: SourceFile, kind: str, reader: Reader) -> list[Fp8Site]:
    """Every FP8 site in `file`.  `reader` reads the files it pulls in (Hydra parents, the
    config a launch script names); a syntax error raises `ParseError`."""
    from fp8lint.frameworks import dispatch

    return dispatch.sites(file, kind, reader)
