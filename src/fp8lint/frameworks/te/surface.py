"""Transformer Engine's surface: the keywords of its recipe classes, a model several families
share (`shared/te_surface.py`, where each class's keywords and defaults are written).

`SURFACES` names the model of each recipe class, for a site built from that class (its kind
names the class): `DelayedScaling` is the family's `SURFACE`, the others differ in defaults."""

from fp8lint.frameworks.shared.te_surface import RECIPES, DelayedScaling

SURFACE = DelayedScaling
FILE = DelayedScaling
SURFACES = RECIPES
