"""Rule pages: `rules/FP8xxx.md`, shipped in the wheel and printed by `fp8lint rule`."""

from __future__ import annotations

from importlib import resources


def rule_page(code: str) -> str:
    return resources.files("fp8lint.rules").joinpath(f"{code}.md").read_text(encoding="utf-8")


def page_codes() -> list[str]:
    return sorted(
        p.name[:-3]
        for p in resources.files("fp8lint.rules").iterdir()
        if p.name.startswith("FP8") and p.name.endswith(".md")
    )


def page_titles() -> dict[str, str]:
    """Code -> rule name, from each page's first line (`# FP8101 zero-headroom`)."""
    titles: dict[str, str] = {}
    for p in resources.files("fp8lint.rules").iterdir():
        if p.name.startswith("FP8") and p.name.endswith(".md"):
            first = p.read_text(encoding="utf-8").split("\n", 1)[0].split()
            if len(first) >= 3:
                titles[first[1]] = first[2]
    return titles
