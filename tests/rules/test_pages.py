"""Each page's examples are tested like the rules' own: every code block under "## Example"
is flagged by the page's code, every block under "## Use instead" is not, and a Use-instead
block marked `fix="safe"` (or `fix="unsafe"`) is exactly what the fix loop makes of the
Example block at the same position.

The fence's info string names the file kind by language and, where the file name matters,
the name: ```` ```yaml title="model_config.yaml" ````  (see `fp8lint.rule`)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import pytest

from fp8lint.diagnostics import Applicability
from fp8lint.documents import kind_for
from fp8lint.rules import ENGINE_CODES, all_rules, page_codes, rule_page
from fp8lint.settings import RunSettings, Selection

from .fixing import applicabilities, applicable, assert_fix, findings, needs_unsafe

# the fence language -> the extension of the file the block is linted as
LANGUAGES = {
    "yaml": ".yaml",
    "yml": ".yaml",
    "json": ".json",
    "toml": ".toml",
    "python": ".py",
    "py": ".py",
    "bash": ".sh",
    "sh": ".sh",
    "shell": ".sh",
}
FIXES = {"safe": False, "unsafe": True}  # fix="..." -> whether --unsafe-fixes is needed
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)

# A page is linted with its own code alone (and parse errors), except FP8002: a suppression is
# unused only for a code that is selected, so that page runs with the default selection.
SELECTIONS = {"FP8002": Selection(extend_select=("FP8002",))}
ENTRIES = {e.code: e for e in [*all_rules(), *ENGINE_CODES]}


@dataclass(frozen=True)
class Block:
    filename: str
    text: str
    fix: str | None  # "safe" / "unsafe": the fixed Example block at the same position


def parse_info(info: str, where: str) -> tuple[str, str | None]:
    """(file name, fix) from a fence's info string: `LANG [title="NAME"] [fix="safe|unsafe"]`."""
    words = shlex.split(info)
    assert words, f"{where}: a code block without a language"
    language = words[0].lower()
    assert language in LANGUAGES, f"{where}: `{language}` is not a file kind fp8lint reads"
    attributes = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    assert len(attributes) == len(words) - 1, f"{where}: info string `{info}`"
    assert set(attributes) <= {"title", "fix"}, f"{where}: unknown attribute in `{info}`"
    filename = attributes.get("title", f"example{LANGUAGES[language]}")
    assert kind_for(filename) == kind_for(f"x{LANGUAGES[language]}"), (
        f"{where}: {filename} is not a {language} file"
    )
    fix = attributes.get("fix")
    assert fix is None or fix in FIXES, f"{where}: fix={fix!r}; use safe or unsafe"
    return filename, fix


def section(page: str, heading: str) -> str:
    start = page.index(f"\n{heading}\n") + len(heading) + 2
    end = page.find("\n## ", start)
    return page[start : end if end >= 0 else len(page)]


def blocks(code: str, heading: str) -> list[Block]:
    out = []
    for info, text in FENCE.findall(section(rule_page(code), heading)):
        filename, fix = parse_info(info, f"{code}.md {heading}")
        out.append(Block(filename, text, fix))
    return out


def settings(code: str) -> RunSettings:
    return RunSettings(selection=SELECTIONS.get(code, Selection(select=(code, "FP8001"))))


@pytest.mark.parametrize("code", page_codes())
def test_page_example_is_flagged(code: str) -> None:
    entry = ENTRIES[code]
    examples = blocks(code, "## Example")
    assert examples, f"{code}.md has no code block under ## Example"
    for block in examples:
        assert block.fix is None, f"{code}.md: fix= belongs on a Use-instead block"
        diags = findings(block.filename, block.text, settings(code))
        if code != "FP8001":
            assert not [d for d in diags if d.code == "FP8001"], diags
        mine = [d for d in diags if d.code == code]
        assert mine, f"{code}.md: its Example is not flagged by {code}: {diags}"
        # what the docs say about the code holds on its own example
        seen = applicabilities(mine)
        allowed: set[Applicability | None] = {entry.fix, None}
        if entry.fix is Applicability.SAFE:
            allowed.add(Applicability.UNSAFE)
        assert seen <= allowed, (code, entry.fix, seen)
        if code in {e.code for e in ENGINE_CODES}:
            assert {d.severity for d in mine} == {entry.severity}, mine
            assert seen == {entry.fix}, (code, seen)


@pytest.mark.parametrize("code", page_codes())
def test_page_use_instead_is_clean(code: str) -> None:
    instead = blocks(code, "## Use instead")
    assert instead, f"{code}.md has no code block under ## Use instead"
    for block in instead:
        diags = findings(block.filename, block.text, settings(code))
        assert not [d for d in diags if d.code in (code, "FP8001")], (
            f"{code}.md: its Use-instead block is flagged: {[(d.line, d.message) for d in diags]}"
        )


def marked_pages() -> list[str]:
    """The pages with a Use-instead block that is the fixed Example."""
    return [c for c in page_codes() if any(b.fix for b in blocks(c, "## Use instead"))]


def test_some_pages_show_their_fixed_example() -> None:
    assert {"FP8002", "FP8104", "FP8205"} <= set(marked_pages())


@pytest.mark.parametrize("code", marked_pages())
def test_page_fixed_example_is_the_use_instead_block(code: str) -> None:
    examples = blocks(code, "## Example")
    marked = [(i, b) for i, b in enumerate(blocks(code, "## Use instead")) if b.fix is not None]
    for i, block in marked:
        assert i < len(examples), f"{code}.md: no Example block #{i + 1} to fix"
        example = examples[i]
        assert block.filename == example.filename, code
        unsafe = FIXES[block.fix or ""]
        mine = [
            d for d in findings(example.filename, example.text, settings(code)) if d.code == code
        ]
        # fix="safe": --fix applies a fix; fix="unsafe": some fix needs --unsafe-fixes
        assert needs_unsafe(mine) if unsafe else applicable(mine, False), (code, block.fix)
        assert_fix(example.filename, example.text, settings(code), code, unsafe, block.text)


def test_info_strings_are_parsed_strictly() -> None:
    assert parse_info('yaml title="model_config.yaml"', "t") == ("model_config.yaml", None)
    assert parse_info('python fix="unsafe"', "t") == ("example.py", "unsafe")
    assert parse_info("bash", "t") == ("example.sh", None)
    for bad in ("text", "", 'yaml title="x.json"', 'yaml fix="maybe"', "yaml colour=red"):
        with pytest.raises(AssertionError):
            parse_info(bad, "t")


OPTION_LINE = re.compile(r"^- `([a-z0-9-]+)` \((\w+), default ([^)]+)\):", re.M)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_page_options_are_the_declared_options(rule: type) -> None:
    """The Options section lists exactly the rule's declared options, each with its type and
    default (as ruff's doc generator checks): `- `name` (type, default X): ...`, or "None"."""
    text = section(rule_page(rule.code), "## Options").strip()
    listed = {name: (kind, default) for name, kind, default in OPTION_LINE.findall(text)}
    declared = {o.name: (o.type.__name__, str(o.default)) for o in rule.options}
    assert listed == declared, f"{rule.code}.md Options: {listed} != declared {declared}"
    if not declared:
        assert text.startswith("None"), f"{rule.code}.md Options: {text[:60]!r}"


def _flagged_frameworks(rule: type) -> set[str]:
    """The families (by site framework) whose sites the rule's invalid examples flag."""
    from fp8lint.engine import lint_text

    found: set[str] = set()
    for example in rule.invalid:
        kind = kind_for(example.filename)
        assert kind is not None
        diags, sites = lint_text(example.filename, example.text, kind, settings(rule.code))
        lines = {d.line for d in diags if d.code == rule.code}
        for site in sites:
            span = site.span
            if any(span.line <= line <= span.end_line for line in lines) or len(sites) == 1:
                found.add(site.framework)
    return found


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_page_applies_to_names_every_family_its_examples_flag(rule: type) -> None:
    """The page's "Applies to" line names (by label) each family whose configs the rule's own
    examples flag, so a family that gains a rule shows up on the page."""
    from fp8lint.frameworks.registry import label

    page = rule_page(rule.code)
    applies = next((x for x in page.splitlines() if x.startswith("**Applies to:**")), "")
    families = _flagged_frameworks(rule) - {"unidentified"}  # FP8406's own subject
    missing = sorted(
        label(f) for f in families if re.split(r" \(| \+ | / ", label(f))[0] not in applies
    )
    assert not missing, f"{rule.code}.md 'Applies to' does not name {missing}"
