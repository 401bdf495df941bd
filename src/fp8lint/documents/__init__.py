"""Documents: the position-keeping trees fp8lint reads files into, one module per syntax.

`tree` (YAML events and a JSON scanner), `toml` (tomllib values with a position scan), `shell`
(a lexer for launch scripts) and `python` (libcst; its parts are the `py*` modules), with
`omega` (OmegaConf over trees; parts `omega_*`).  Each keeps where every value is written,
so that findings point at the text and fixes edit it in place.  Nothing here knows a
framework.  `kind_for` picks the syntax by file name; importing this package costs nothing.
"""

from __future__ import annotations

import os

KINDS: dict[str, str] = {
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".py": "python",
    ".toml": "toml",
    ".sh": "shell",
    ".bash": "shell",
    ".slurm": "shell",
    ".sbatch": "shell",
}


def kind_for(path: str) -> str | None:
    """The document kind for a path, or None when fp8lint does not read that kind of file."""
    return KINDS.get(os.path.splitext(path)[1].lower())
