"""What OmegaConf resolution (`omega`) and layer merges (`omega_merge`) share: key paths,
`???`, the size bound, and the look-up of a key in a tree.  No OmegaConf here."""

from __future__ import annotations

from collections.abc import Sequence

from fp8lint.documents.tree import Node

Path = tuple[str, ...]

MISSING = "???"  # OmegaConf's mandatory-value marker
MAX_NODES = 50_000  # values one resolution or one merge may hand to OmegaConf


class TooLarge(Exception):
    """More than `MAX_NODES` values (aliases expanded) would reach OmegaConf."""


def needs_omegaconf(node: Node) -> bool:
    """True for a scalar whose value only OmegaConf can say: an interpolation or `???`."""
    value = node.value
    return node.kind == "scalar" and isinstance(value, str) and ("${" in value or value == MISSING)


# ------------------------------------------------------------------------------ navigation


def lookup(root: Node, parts: Sequence[str]) -> Node | None:
    """The node at `parts` below `root` (aliases and merge keys followed), or None."""
    node: Node | None = root
    for part in parts:
        if node is None:
            return None
        node = node.deref()
        if node.kind == "map":
            pair = node.get(part)
            node = pair[1] if pair else None
        elif node.kind == "seq" and _is_index(part) and int(part) < len(node.value):
            node = node.value[int(part)]
        else:
            return None
    return node


def _is_index(part: str) -> bool:
    """A plain list index (`"²"` is a digit but not a number; 5,000 digits are no index)."""
    return part.isascii() and part.isdigit() and len(part) < 20
