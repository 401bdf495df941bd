"""How a model value is spelled in a site's file: the family's spelling of an enum member
(`registry.upper_case_format`: TE and Accelerate write HYBRID), then the document's literal
(`documents.editing`: quotes, YAML scalars, shell words, Python expressions).  Shared by the
text writer and the Python writer, so neither calls back into the other."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from fp8lint.documents.editing import editor_for
from fp8lint.frameworks import registry

if TYPE_CHECKING:
    from fp8lint.documents.text import SourceFile
    from fp8lint.model import EditInfo, Fp8Site


def spell_value(site: Fp8Site, name: str, value: Any) -> Any:
    """A model value as the site's family writes it."""
    if isinstance(value, Enum):
        value = value.value
        if name == "fmt" and registry.upper_case_format(site.framework):
            value = str(value).upper()
    return value


def render(
    site: Fp8Site, edit: EditInfo, name: str, value: Any, existing: str | None, file: SourceFile
) -> str:
    """`value` for field `name` as the site's file writes it (`existing`: the text it
    replaces, whose quoting is kept)."""
    editor = editor_for(file, edit)
    return editor.literal(spell_value(site, name, value), existing, isinstance(value, Enum))
