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
    # Megatron's `--te-precision-config-file` is YAML under any name (`te_quant.cfg`); a
    # `.cfg` that is not a YAML mapping (setup.cfg, INI) is not a config of ours, and silent
    ".cfg": "cfg",
}
# `#!/bin/bash`, `#!/usr/bin/env -S bash -e`: a script without an extension, read as shell
_SHELLS = frozenset({b"sh", b"bash", b"dash", b"ksh", b"zsh"})
HEAD_BYTES = 128  # what `kind_for` needs of an extensionless file to read its `#!` line


def kind_for(path: str, head: bytes | None = None) -> str | None:
    """The document kind for a path, or None when fp8lint does not read that kind of file.
    A name without an extension is a shell script when `head` (its first bytes) starts
    with a `#!` line that runs a shell."""
    ext = os.path.splitext(path)[1]
    if ext or head is None:
        return KINDS.get(ext.lower())
    return "shell" if is_shell_script(head) else None


def is_shell_script(head: bytes) -> bool:
    """Whether `head` starts with a `#!` line whose interpreter is a shell."""
    if not head.startswith(b"#!"):
        return False
    words = head[2:].split(b"\n", 1)[0].split()
    if words and os.path.basename(words[0]) == b"env":
        words = [w for w in words[1:] if not w.startswith(b"-")]
    return bool(words) and os.path.basename(words[0]) in _SHELLS
