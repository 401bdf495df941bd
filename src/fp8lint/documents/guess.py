"""The kind of a text that comes without a name (`fp8lint check -` without
`--stdin-filename`), guessed from its content: a `#!` line that runs a shell, JSON, TOML,
Python, a YAML mapping or list, else a command line (shell).  Each guess is a full parse of
the text, tried from the strictest syntax to the loosest; a text none of them reads is None.
"""

from __future__ import annotations

import re
import sys

from fp8lint.documents import HEAD_BYTES, is_shell_script

# a command with an option: `torchrun ... --fp8-format hybrid`, `X=1 python train.py -c f`
_COMMAND = re.compile(r"^\s*(?:\w+=\S*\s+)*[\w./-]+(?:\s+\S+)*?\s+--?[A-Za-z]", re.MULTILINE)


def guess_kind(data: bytes) -> str | None:
    """The document kind of `data`, or None when no syntax fp8lint reads fits it."""
    if is_shell_script(data[:HEAD_BYTES]):
        return "shell"
    text = data.decode("utf-8-sig", errors="replace")
    if not text.strip():
        return None
    if text.lstrip()[:1] in ("{", "[") and _parses_json(text):
        return "json"
    if _parses_toml(text):
        return "toml"
    if _is_python(text):
        return "python"
    loaded = _yaml(text)
    if isinstance(loaded, (dict, list)):
        return "yaml"
    if _COMMAND.search(text):
        return "shell"
    return None


def _parses_json(text: str) -> bool:
    import json

    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _parses_toml(text: str) -> bool:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        return bool(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        return False


def _is_python(text: str) -> bool:
    """Python with a statement YAML cannot be: `key: value` parses as an annotation, so
    only imports, definitions, assignments and calls count."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    kinds = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign, ast.With)
    return any(
        isinstance(node, kinds) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))
        for node in tree.body
    )


def _yaml(text: str) -> object:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None
