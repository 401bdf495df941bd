"""Sources: one per file format.  `source_for` picks one by file name; nothing is imported
until a file needs it, so a run over files without FP8 settings stays cheap."""

from __future__ import annotations

import os

SOURCES: dict[str, str] = {
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


def source_for(path: str) -> str | None:
    """The source name for a path, or None when fp8lint does not read that kind of file."""
    return SOURCES.get(os.path.splitext(path)[1].lower())
