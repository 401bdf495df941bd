"""Frameworks: one package per framework family (`NAME/`: its `FAMILY` descriptor, readers and
surface model, where its spellings and defaults are written once), `shared/` for what
families share, and the modules that route a document to the families (`registry`,
`dispatch`, `trees`, `launch`, `python_sites`, `shell_families`) and write fixes (`writer`,
`python_writer`, `spelling`).

`recognize` is the one entry the engine calls: a decoded file and its kind in, `Fp8Site`
records out.  Modules are imported only when a file of their kind needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fp8lint.documents.text import Reader, SourceFile
    from fp8lint.model import Fp8Site


def recognize(file: SourceFile, kind: str, reader: Reader) -> list[Fp8Site]:
    """Every FP8 site in `file`.  `reader` reads the files it pulls in (Hydra parents, the
    config a launch script names); a syntax error raises `ParseError`."""
    from fp8lint.frameworks import dispatch

    return dispatch.sites(file, kind, reader)
