"""Transformer Engine's `common` package without its CUDA library: only `recipe` (TE's own
file, copied next to this one by the oracle's setup)."""

from . import recipe

__all__ = ["recipe"]
