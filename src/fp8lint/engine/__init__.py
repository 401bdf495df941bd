"""The engine: everything that orchestrates a run, on top of the lower layers.

- `files`: discovery, bounded reads, decoding, the byte-level prefilter;
- `lint`: one decoded file through recognizers, rules, fix writers and suppressions;
- `runner`: the whole run (cache, worker processes, fixing);
- `limits`: the per-file time limit and the guards around a file;
- `config`, `per_file`, `cache`, `baseline`, `suppress`.

Importing this package is light: each module imports pydantic, the frameworks and the rules
only when a file has passed the prefilter.
"""

from __future__ import annotations

from fp8lint.engine.files import (
    PREFILTER_ANY_CASE,
    PREFILTER_EXACT,
    Decoded,
    DisplayPaths,
    FileProblem,
    decode,
    discover,
    display_path,
    human_size,
    mentions_fp8,
    mentions_fp8_text,
    read_bytes,
    read_file,
    read_text,
)
from fp8lint.engine.lint import apply_rules, fix_text, lint_text, parse_file
from fp8lint.engine.runner import POOL_MIN_FILES, READ_POOL_MIN_FILES, RunResult, run
from fp8lint.settings import FixMode, RunSettings, Selection

__all__ = [
    "POOL_MIN_FILES",
    "PREFILTER_ANY_CASE",
    "PREFILTER_EXACT",
    "READ_POOL_MIN_FILES",
    "Decoded",
    "DisplayPaths",
    "FileProblem",
    "FixMode",
    "RunResult",
    "RunSettings",
    "Selection",
    "apply_rules",
    "decode",
    "discover",
    "display_path",
    "fix_text",
    "human_size",
    "lint_text",
    "mentions_fp8",
    "mentions_fp8_text",
    "parse_file",
    "read_bytes",
    "read_file",
    "read_text",
    "run",
]
