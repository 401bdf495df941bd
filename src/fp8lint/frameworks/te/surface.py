"""Transformer Engine's surface: the keywords of its recipe classes, a model several families
share (`shared/te_surface.py`, where each class's keywords and defaults are written)."""

from fp8lint.frameworks.shared.te_surface import DelayedScaling

SURFACE = DelayedScaling
FILE = DelayedScaling
