"""Regenerate the docs that restate the rule classes, so that they cannot drift:

- the status line under each page's title (`rules/FP8xxx.md`, line 3):
  `**Default severity:** info (warning with delayed scaling) · **Fix:** safe · **Selected by
  default:** yes`, from `severity`, `severity_note`, `fix` and `default_enabled`;
- the rule table in README.md, between the two `<!-- rule table ... -->` markers.

Engine-level codes (FP8001, FP8002) have no rule class: `fp8lint.rules.ENGINE_CODES` describes
them with the same attributes.  `python scripts/gen_docs.py` rewrites the files in place;
`--check` only lists the ones that are out of date (exit 1), as tests/rules/test_generated_docs.py
does.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fp8lint.diagnostics import Applicability
from fp8lint.rules import ENGINE_CODES, all_rules

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = ROOT / "rules"
COMMAND = "python scripts/gen_docs.py"
TABLE_BEGIN = "<!-- rule table: generated from the rule classes by scripts/gen_docs.py -->"
TABLE_END = "<!-- end of rule table -->"
STATUS_PREFIX = "**Default severity:**"

FIX_WORDS = {
    Applicability.SAFE: "safe",
    Applicability.UNSAFE: "unsafe",
    Applicability.DISPLAY_ONLY: "display-only",
    None: "none",
}


def entries() -> list[Any]:
    """Every code with a page: the engine's own codes and the rule classes, by code."""
    return sorted([*ENGINE_CODES, *all_rules()], key=lambda e: str(e.code))


def severity_text(entry: Any) -> str:
    note = entry.severity_note
    return f"{entry.severity.value} ({note})" if note else str(entry.severity.value)


def status_line(entry: Any) -> str:
    return (
        f"{STATUS_PREFIX} {severity_text(entry)} · **Fix:** {FIX_WORDS[entry.fix]} · "
        f"**Selected by default:** {'yes' if entry.default_enabled else 'no'}"
    )


def render_page(text: str, entry: Any) -> str:
    """The page with its status line (line 3, after the title and a blank line) regenerated;
    a page without one gets it inserted there."""
    lines = text.split("\n")
    if not lines[0].startswith(f"# {entry.code} "):
        raise ValueError(f"{entry.code}.md does not start with its title `# {entry.code} ...`")
    body = lines[1:]
    while body and not body[0].strip():
        body.pop(0)
    if body and body[0].startswith(STATUS_PREFIX):
        body.pop(0)
        while body and not body[0].strip():
            body.pop(0)
    return "\n".join([lines[0], "", status_line(entry), "", *body])


def render_table(items: Sequence[Any]) -> str:
    rows = [
        "| code | name | flags | default severity | fix |",
        "|---|---|---|---|---|",
    ]
    for e in items:
        name = e.name if e.default_enabled else f"{e.name} (not selected by default)"
        summary = str(e.summary).replace("|", "\\|")
        rows.append(f"| {e.code} | {name} | {summary} | {severity_text(e)} | {FIX_WORDS[e.fix]} |")
    return "\n".join(rows)


def render_readme(text: str, items: Sequence[Any]) -> str:
    """README.md with the text between the table markers regenerated."""
    start, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the markers {TABLE_BEGIN!r} ... {TABLE_END!r}")
    head = text[: start + len(TABLE_BEGIN)]
    return f"{head}\n\n{render_table(items)}\n\n{text[end:]}"


def outdated() -> dict[Path, str]:
    """Each generated file whose text differs from what the classes say, with the new text."""
    items = entries()
    out: dict[Path, str] = {}
    for entry in items:
        page = PAGES / f"{entry.code}.md"
        text = page.read_text(encoding="utf-8")
        new = render_page(text, entry)
        if new != text:
            out[page] = new
    text = README.read_text(encoding="utf-8")
    new = render_readme(text, items)
    if new != text:
        out[README] = new
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    stale = outdated()
    for path, text in sorted(stale.items()):
        shown = path.relative_to(ROOT)
        if args.check:
            print(f"{shown} is out of date with the rule classes")
        else:
            path.write_text(text, encoding="utf-8")
            print(f"rewrote {shown}")
    if args.check and stale:
        print(f"run `{COMMAND}` to regenerate")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
