"""Baselines: accept today's findings, report only new ones.

An entry is (code, path, key) with a count, where the key is the configuration key, flag or
call the finding is about (`Diagnostic.key`), never a line number: moving lines does not
break a baseline, editing the flagged setting does.  Paths are stored relative to the
baseline file, with forward slashes, so the file works from any working directory.  Entries
that match nothing any more are reported, so that the baseline shrinks over time.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass

from fp8lint.diagnostics import Diagnostic, LocatedError

VERSION = 1
Entry = tuple[str, str, str]


class BaselineError(LocatedError):
    pass


def _entry(d: Diagnostic, base: str) -> Entry:
    rel = os.path.relpath(os.path.abspath(d.path), base).replace(os.sep, "/")
    return d.code, rel, d.key


def write(path: str, diags: list[Diagnostic]) -> int:
    """Write every finding of `diags` to `path`; returns the number of entries."""
    base = os.path.dirname(os.path.abspath(path))
    counts = Counter(_entry(d, base) for d in diags)
    findings = [
        {"code": code, "path": rel, "key": key, "count": n}
        for (code, rel, key), n in sorted(counts.items())
    ]
    data = {"tool": "fp8lint", "version": VERSION, "findings": findings}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
    return len(findings)


@dataclass
class Baseline:
    path: str
    counts: Counter[Entry]

    @classmethod
    def load(cls, path: str) -> Baseline:
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except OSError as exc:
            raise BaselineError(f"{path}: cannot read the baseline: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise BaselineError(
                f"{path}:{exc.lineno}:{exc.colno}: not a baseline: {exc.msg}"
            ) from None
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise BaselineError(f"{path}: not an fp8lint baseline (version {VERSION} expected)")
        counts: Counter[Entry] = Counter()
        for item in data.get("findings", []):
            try:
                entry = (str(item["code"]), str(item["path"]), str(item["key"]))
                counts[entry] += int(item.get("count", 1))
            except (KeyError, TypeError, ValueError):
                raise BaselineError(f"{path}: malformed entry {item!r}") from None
        return cls(path, counts)

    def filter(self, diags: list[Diagnostic]) -> tuple[list[Diagnostic], list[Entry]]:
        """(findings not in the baseline, baseline entries that matched nothing)."""
        base = os.path.dirname(os.path.abspath(self.path))
        left = Counter(self.counts)
        kept = []
        for d in diags:
            entry = _entry(d, base)
            if left[entry] > 0:
                left[entry] -= 1
            else:
                kept.append(d)
        stale = sorted(e for e, n in left.items() for _ in range(n))
        return kept, stale
