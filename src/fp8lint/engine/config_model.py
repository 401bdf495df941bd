"""fp8lint's own configuration as pydantic models: what `[tool.fp8lint]` (or `.fp8lint.toml`)
may hold, validated, and exported as JSON Schema by `fp8lint schema config`.

- `ConfigFile` is one file's table, keys spelled as in TOML (aliases), unknown keys forbidden,
  strict types (TOML has real booleans, integers and strings: nothing is coerced).  Sizes and
  durations go through `parse_size` / `parse_seconds`, rule selectors and severity keys are
  checked against the rule pages (which import no rule).
- `rule_options_model()` is built from the options the rules declare (`rule.Option`): the
  `[options]` table and `--option NAME=VALUE` are validated by it, and it is what the schema
  shows under `options`.
- `validate` turns a table into the plain, JSON-able form the loader builds its `Config` from
  (and that the loader remembers for a valid file, so that an unchanged configuration needs no
  pydantic on the next run); problems come back as `Invalid`, one line per problem, naming the
  key (dotted for nested tables) and suggesting the closest known key.

Importing this module imports pydantic: the loader imports it only to validate a file.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    ValidationError,
    WithJsonSchema,
    create_model,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from fp8lint.engine.units import SIZE_PATTERN, parse_seconds, parse_size

LEVELS = ("error", "warning", "info")
Level = Literal["error", "warning", "info"]


class Invalid(Exception):
    """A configuration that does not validate: one message per problem, without the file."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class Problem(ValueError):
    """A validator's verdict, read after the key: "`ignore` names an unknown rule `X`"."""


# --------------------------------------------------------------------------- rule names


@lru_cache(maxsize=1)
def _rule_titles() -> dict[str, str]:
    """Code -> name of every rule, from the rule pages (no rule module imported)."""
    from fp8lint.rules import page_titles

    return page_titles()


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _selector(value: str) -> str:
    """A rule code, a code prefix (`FP81`), a rule name, or `ALL`."""
    titles = _rule_titles()
    stripped = value.strip()
    if stripped and (
        stripped.upper() == "ALL"
        or stripped.lower() in titles.values()
        or any(code.startswith(stripped.upper()) for code in titles)
    ):
        return value
    raise Problem(
        f"names an unknown rule `{value}`"
        + _suggest(value, sorted(titles) + sorted(titles.values()))
    )


def _severity_key(value: str) -> str:
    """A rule code or name, as the rule's code."""
    titles = _rule_titles()
    by_name = {name: code for code, name in titles.items()}
    code = by_name.get(value.lower(), value.upper())
    if code not in titles:
        raise Problem(
            f"names an unknown rule `{value}`"
            + _suggest(value, sorted(titles) + sorted(titles.values()))
        )
    return code


def _non_empty(value: str) -> str:
    if not value.strip():
        raise Problem("must be a non-empty path")
    return value


def _framework(value: str) -> str:
    from fp8lint.settings import TARGETS

    if value not in TARGETS:
        raise Problem(f"names an unknown framework `{value}`" + _suggest(value, sorted(TARGETS)))
    return value


def _version(value: str) -> str:
    from fp8lint.settings import version_tuple

    try:
        version_tuple(value)
    except ValueError:
        raise Problem(f"`{value}` is not a version (`2.20`, `0.19.2` or `main`)") from None
    return value


Framework = Annotated[str, AfterValidator(_framework)]
Version = Annotated[
    str,
    AfterValidator(_version),
    WithJsonSchema({"type": "string", "pattern": r"^(main|\d+(\.\d+){0,2})$"}),
]
Selector = Annotated[str, AfterValidator(_selector)]
Selectors = list[Selector]
Size = Annotated[
    int,
    BeforeValidator(parse_size),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1},
                {"type": "string", "pattern": SIZE_PATTERN},
            ]
        }
    ),
]
Seconds = Annotated[
    float, BeforeValidator(parse_seconds), WithJsonSchema({"type": "number", "minimum": 0})
]


# --------------------------------------------------------------------------- rule options


class Declared(BaseModel):
    """Which rule declares an option (the loader keeps options per rule code)."""

    code: str
    name: str
    type: str


@lru_cache(maxsize=1)
def rule_options_model() -> tuple[type[BaseModel], dict[str, Declared]]:
    """A model with one field per option the rules declare (alias: the option's name, its
    declared type and default, the help as description), and who declares each.  Imports
    every rule, so it is built only for a configuration or command line that sets options."""
    from fp8lint.rules import all_rules

    fields: dict[str, Any] = {}
    owners: dict[str, Declared] = {}
    for rule in all_rules():
        for option in rule.options:
            owners[option.name] = Declared(
                code=rule.code, name=rule.name, type=option.type.__name__
            )
            # field names are positional: option names are kebab-case and could shadow
            # BaseModel attributes; the alias is what TOML and the schema show
            fields[f"option_{len(fields)}"] = (
                option.type,
                Field(
                    default=option.default,
                    alias=option.name,
                    description=f"{option.help} ({rule.code} {rule.name})",
                ),
            )
    model = create_model(
        "RuleOptions",
        __config__=ConfigDict(
            extra="forbid",
            strict=True,
            title="Rule options",
            json_schema_extra={"description": "Options the rules declare (`fp8lint rule CODE`)."},
        ),
        **fields,
    )
    return model, owners


def _option_problems(
    exc: ValidationError, given: dict[str, Any], owners: dict[str, Declared], raw: bool
) -> list[str]:
    known = ", ".join(sorted(owners))
    out: list[str] = []
    for err in exc.errors():
        name = str(err["loc"][0]) if err["loc"] else "?"
        if err["type"] == "extra_forbidden":
            line = (
                f"unknown rule option `{name}`{_suggest(name, sorted(owners))} "
                f"(known options: {known})"
            )
        elif raw:
            line = f"rule option `{name}` expects {owners[name].type}, got `{given[name]}`"
        else:
            line = f"rule option `{name}` must be {owners[name].type}, got {given[name]!r}"
        if line not in out:
            out.append(line)
    return out


def validate_options(given: dict[str, Any], raw: bool = False) -> dict[str, dict[str, Any]]:
    """Rule options by rule code: `[options]` values (strict: TOML types) or, with `raw`, the
    strings of `--option NAME=VALUE` (converted to the declared type).  Invalid otherwise."""
    if not given:
        return {}
    model, owners = rule_options_model()
    try:
        values = model.model_validate(given, strict=not raw)
    except ValidationError as exc:
        raise Invalid(_option_problems(exc, given, owners, raw)) from None
    dumped = values.model_dump(by_alias=True, exclude_unset=True)
    out: dict[str, dict[str, Any]] = {}
    for name, value in dumped.items():
        out.setdefault(owners[name].code, {})[name] = value
    return out


class _OptionsSchema:
    """The `[options]` table's JSON Schema is the rule options model's; its values are
    validated by that model in a second step (`validate`), so that a configuration without
    options imports no rule."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        model, _ = rule_options_model()
        return handler(model.__pydantic_core_schema__)


# --------------------------------------------------------------------------- the file


def _tidy(schema: dict[str, Any]) -> None:
    """TOML has no null: an optional key is one that may be left out, not one that may be
    null, so `X | None` shows as X, without a null default."""
    for prop in schema.get("properties", {}).values():
        variants = prop.get("anyOf")
        if isinstance(variants, list) and {"type": "null"} in variants:
            rest = [v for v in variants if v != {"type": "null"}]
            del prop["anyOf"]
            if len(rest) == 1:
                prop.update(rest[0])
            else:
                prop["anyOf"] = rest
        if prop.get("default", 0) is None:
            del prop["default"]


class ConfigFile(BaseModel):
    """`[tool.fp8lint]` in pyproject.toml, or the top level of `.fp8lint.toml` /
    `fp8lint.toml`."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        title="fp8lint configuration",
        json_schema_extra=_tidy,
    )

    extend: str | None = Field(
        None, description="Another configuration file to inherit (relative to this one)."
    )
    select: Selectors | None = Field(
        None,
        description="Rules to run: codes, code prefixes (FP81), names, or ALL (default: the "
        "rules that are on by default).",
    )
    extend_select: Selectors | None = Field(
        None, alias="extend-select", description="Rules to add (e.g. rules off by default)."
    )
    ignore: Selectors | None = Field(None, description="Rules to skip.")
    per_file_ignores: dict[str, Selectors] | None = Field(
        None,
        alias="per-file-ignores",
        description="Glob (gitignore-style, relative to this file) -> rules to skip there.",
    )
    exclude: list[str] | None = Field(
        None, description="Paths to skip (gitignore-style, relative to this file)."
    )
    extend_exclude: list[str] | None = Field(
        None, alias="extend-exclude", description="More paths to skip, added to `exclude`."
    )
    severity: dict[Annotated[str, AfterValidator(_severity_key)], Level] | None = Field(
        None, description="Rule code or name -> the level its findings are reported at."
    )
    options: Annotated[dict[str, Any], _OptionsSchema()] | None = Field(
        None, description="Rule options (declared by the rules, type-checked)."
    )
    fail_on: Level | None = Field(
        None, alias="fail-on", description="Lowest severity that fails the run (default warning)."
    )
    rule_url_base: str | None = Field(
        None,
        alias="rule-url-base",
        description="Where rule pages are published (URL + code), for SARIF and Markdown.",
    )
    max_file_size: Size | None = Field(
        None,
        alias="max-file-size",
        description="Larger files are an FP8001 finding, not read: bytes, or e.g. 512KiB, "
        "16MiB, 2MB (default 4MiB).",
    )
    file_timeout: Seconds | None = Field(
        None,
        alias="file-timeout",
        description="Seconds one file's checks may take (default 60; 0: no limit).",
    )
    cache: bool | None = Field(
        None, description="false: neither read nor write the cache (as --no-cache)."
    )
    target_versions: dict[Framework, Version] | None = Field(
        None,
        alias="target-versions",
        description="Framework -> the release the checks assume (transformer-engine, "
        "megatron-core, megatron-bridge, ms-swift; default: each one's newest release; `main`: its "
        "unreleased branch).",
    )
    cache_dir: Annotated[str, AfterValidator(_non_empty)] | None = Field(
        None,
        alias="cache-dir",
        description="Where the cache lives (relative to this file; default .fp8lint_cache).",
    )


KEYS = sorted(f.alias or name for name, f in ConfigFile.model_fields.items())

# what a key must be, for type errors (pydantic's own words name Python types)
_EXPECTED = {
    "extend": "must be a path (a string)",
    "select": "must be a list of strings",
    "extend-select": "must be a list of strings",
    "ignore": "must be a list of strings",
    "exclude": "must be a list of strings",
    "extend-exclude": "must be a list of strings",
    "per-file-ignores": "must be a table of glob = [codes]",
    "target-versions": 'must be a table of framework = "version"',
    "severity": "must be a table of CODE = level",
    "options": "must be a table of option = value",
    "fail-on": f"must be one of {', '.join(LEVELS)}",
    "rule-url-base": "must be a string",
    "cache": "must be true or false",
    "cache-dir": "must be a non-empty path",
}
_EXPECTED_INSIDE = {  # for a value inside a table key
    "per-file-ignores": "must be a list of strings",
    "severity": f"must be one of {', '.join(LEVELS)}",
}
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def dotted(parts: list[str]) -> str:
    """A key path as TOML writes it: `per-file-ignores."legacy/*.yaml"`."""
    return ".".join(p if _BARE_KEY.match(p) else '"' + p.replace('"', '\\"') + '"' for p in parts)


def _problem(err: Any) -> str:
    parts = [p for p in err["loc"] if isinstance(p, str) and p != "[key]"]
    key = dotted(parts)
    if err["type"] == "extra_forbidden":
        return f"unknown key `{key}`{_suggest(parts[-1], KEYS)}"
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, Problem):
        return f"`{key}` {cause}"
    if isinstance(cause, ValueError):  # parse_size, parse_seconds
        return f"`{key}`: {cause}"
    expected = _EXPECTED_INSIDE.get(parts[0]) if len(parts) > 1 else _EXPECTED.get(parts[0])
    return f"`{key}` {expected or 'has the wrong type'}"


def validate(table: dict[str, Any]) -> dict[str, Any]:
    """One file's table, validated, as plain JSON data (what `config.from_validated` reads):
    snake-case keys, severities and options by rule code, `written` listing the keys the
    file sets (a child's key wins over its parent's only when written)."""
    problems: list[str] = []
    try:
        cfg = ConfigFile.model_validate(table)
    except ValidationError as exc:
        for err in exc.errors():
            line = _problem(err)
            if line not in problems:
                problems.append(line)
        cfg = None
    options: dict[str, dict[str, Any]] = {}
    given = table.get("options")
    if isinstance(given, dict):
        try:
            options = validate_options(given)
        except Invalid as exc:
            problems += exc.problems
    if problems or cfg is None:
        raise Invalid(problems)
    fields = ConfigFile.model_fields
    return {
        "written": sorted(fields[name].alias or name for name in cfg.model_fields_set),
        "extend": cfg.extend,
        "select": cfg.select,
        "extend_select": cfg.extend_select or [],
        "ignore": cfg.ignore or [],
        "per_file_ignores": [[p, codes] for p, codes in (cfg.per_file_ignores or {}).items()],
        "exclude": cfg.exclude or [],
        "extend_exclude": cfg.extend_exclude or [],
        "severity": dict(cfg.severity or {}),
        "options": options,
        "fail_on": cfg.fail_on,
        "rule_url_base": cfg.rule_url_base,
        "max_file_size": cfg.max_file_size,
        "file_timeout": cfg.file_timeout,
        "cache": cfg.cache,
        "cache_dir": cfg.cache_dir,
        "target_versions": dict(cfg.target_versions or {}),
    }
