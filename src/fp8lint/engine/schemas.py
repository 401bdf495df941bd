"""JSON Schemas that `fp8lint schema NAME` exports, for editors: Taplo / Even Better TOML for
fp8lint's configuration, the YAML language server (`# yaml-language-server: $schema=...`) for
framework configuration files.

Each schema is a pydantic model named by `module:attribute`, imported only when it is
exported, so that listing them costs nothing.  Each framework family's surface
(`Family.schema` in `fp8lint.frameworks.NAME`) is exported under the family's name, from its
`FILE` model: the whole file, with the keys spelled as users write them.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Any

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Schema:
    name: str
    model: str  # `module:attribute` of a pydantic model
    summary: str
    files: str  # the files (or table) it describes, for the listing


CONFIG = Schema(
    "config",
    "fp8lint.engine.config_model:ConfigFile",
    "fp8lint's configuration",
    "[tool.fp8lint] in pyproject.toml, .fp8lint.toml, fp8lint.toml",
)


def schemas() -> tuple[Schema, ...]:
    """fp8lint's own, then each family's (`Family.schema`, from the registry)."""
    from fp8lint.frameworks.registry import schemas as family_schemas

    return (
        CONFIG,
        *(Schema(n, model, summary, files) for n, summary, files, model in family_schemas()),
    )


class UnknownSchema(LookupError):
    def __init__(self, name: str, suggestion: str | None) -> None:
        hint = f" (did you mean `{suggestion}`?)" if suggestion else ""
        known = ", ".join(s.name for s in schemas())
        super().__init__(f"unknown schema `{name}`{hint}; known schemas: {known}")


def find(name: str) -> Schema:
    """The schema called `name`; UnknownSchema (with the closest name) otherwise."""
    for schema in schemas():
        if schema.name == name.lower():
            return schema
    import difflib

    close = difflib.get_close_matches(name.lower(), [s.name for s in schemas()], n=1, cutoff=0.5)
    raise UnknownSchema(name, close[0] if close else None)


def listing() -> str:
    """One line per schema: name, what it describes, where it applies."""
    width = max(len(s.name) for s in schemas())
    return "".join(f"{s.name:<{width}}  {s.summary}: {s.files}\n" for s in schemas())


def json_schema(schema: Schema) -> dict[str, Any]:
    """The model's JSON Schema with TOML/YAML spellings (aliases), marked with its dialect."""
    module_name, _, attribute = schema.model.partition(":")
    model = getattr(importlib.import_module(module_name), attribute)
    out: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT}
    out.update(model.model_json_schema(by_alias=True))
    return out


def export(name: str) -> str:
    """`fp8lint schema NAME`: the schema as JSON, keys sorted (the same bytes every time)."""
    return json.dumps(json_schema(find(name)), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
