"""fp8lint's side and the comparison: run `fp8lint check --output-format json` on the case
files, then hold its errors against the frameworks' verdicts.

  framework rejected  => fp8lint must report at least one `error`
  framework accepted  => fp8lint must report no `error`
  harness error       => not counted (listed)
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracle_cases import Case

CHUNK = 200  # files per fp8lint run


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str


@dataclass(frozen=True)
class Row:
    case: Case
    verdict: Mapping[str, Any]  # the framework runner's result
    findings: Sequence[Finding]
    fp8lint_failed: str = ""

    @property
    def outcome(self) -> str:
        return str(self.verdict.get("outcome", "harness_error"))

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def counted(self) -> bool:
        return self.outcome in ("accepted", "rejected") and not self.fp8lint_failed

    @property
    def agrees(self) -> bool:
        return (self.outcome == "rejected") == bool(self.errors)


# the releases the oracle runs: Megatron-LM d98e8a64 is a megatron-core 0.20 pre-release (its
# main branch), TE's recipe file is 2.20.2's; fp8lint is told so, as a user would tell it
TARGETS = 'target-versions = { megatron-core = "main", transformer-engine = "2.20" }\n'


def run_fp8lint(
    paths: Sequence[Path], python: str, repo: Path, workdir: Path
) -> tuple[dict[str, list[Finding]], dict[str, str]]:
    """Findings per file (resolved path); a chunk whose run failed names its error."""
    config = workdir / "fp8lint-oracle.toml"
    config.write_text(TARGETS)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(repo / "src"), str(repo), *filter(None, [env.get("PYTHONPATH")])]
    )
    env.pop("FP8LINT_CACHE_DIR", None)
    found: dict[str, list[Finding]] = defaultdict(list)
    failed: dict[str, str] = {}
    for start in range(0, len(paths), CHUNK):
        chunk = [str(p) for p in paths[start : start + CHUNK]]
        cmd = [python, "-m", "fp8lint", "check", "--output-format", "json", "--no-cache"]
        cmd += ["--config", str(config)]
        done = subprocess.run(
            [*cmd, "--exit-zero", *chunk], capture_output=True, text=True, env=env
        )
        try:
            items = json.loads(done.stdout or "null")
        except ValueError:
            items = None
        if done.returncode != 0 or not isinstance(items, list):
            why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            failed.update({str(Path(p).resolve()): why for p in chunk})
            continue
        for item in items:
            name = str(Path(item["filename"]).resolve())
            found[name].append(
                Finding(str(item["code"]), str(item["severity"]), str(item["message"]))
            )
    return dict(found), failed


def build_rows(
    cases: Sequence[Case],
    paths: Mapping[str, Path],
    verdicts: Mapping[str, Mapping[str, Any]],
    findings: Mapping[str, list[Finding]],
    failed: Mapping[str, str],
) -> list[Row]:
    rows = []
    for case in cases:
        key = str(paths[case.id].resolve())
        verdict = verdicts.get(case.id, {"outcome": "harness_error", "message": "no result"})
        rows.append(Row(case, verdict, findings.get(key, []), failed.get(key, "")))
    return rows


# -- the report ------------------------------------------------------------------------------


def _cell(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verdict(row: Row) -> str:
    v = row.verdict
    if row.outcome == "accepted":
        made = v.get("detail", {}).get("recipes", [])
        return "accepted" + (f" ({', '.join(made)})" if made else "")
    where = f" @ {v['where']}" if v.get("where") else ""
    return f"{row.outcome}: {v.get('exception', '')} {v.get('message', '')}{where}".strip()


def _errors(row: Row) -> str:
    if row.fp8lint_failed:
        return f"fp8lint failed: {row.fp8lint_failed}"
    if not row.errors:
        return "no error" + (
            f" ({', '.join(sorted({f.code for f in row.findings}))})" if row.findings else ""
        )
    return "; ".join(f"{f.code} {f.message}" for f in row.errors)


@dataclass
class CheckStats:
    surfaces: set[str] = field(default_factory=set)
    caught: int = 0
    violating: int = 0
    false_errors: int = 0
    passing: int = 0
    missed: list[Row] = field(default_factory=list)
    false_rows: list[Row] = field(default_factory=list)
    unconfirmed: list[Row] = field(default_factory=list)  # the framework disagreed with the twin
    harness: list[Row] = field(default_factory=list)


def check_stats(rows: Iterable[Row]) -> dict[str, CheckStats]:
    stats: dict[str, CheckStats] = {}
    for row in rows:
        check = row.case.check
        if check is None:
            continue
        s = stats.setdefault(check, CheckStats())
        s.surfaces.add(row.case.surface)
        if not row.counted:
            s.harness.append(row)
            continue
        expected = "rejected" if row.case.twin == "violating" else "accepted"
        if row.outcome != expected:
            s.unconfirmed.append(row)
        if row.outcome == "rejected":
            s.violating += 1
            if row.errors:
                s.caught += 1
            else:
                s.missed.append(row)
        else:
            s.passing += 1
            if row.errors:
                s.false_errors += 1
                s.false_rows.append(row)
    return stats


def _check_order(check: str) -> tuple[int, int, str]:
    groups = ("P", "V", "C", "R", "TE")
    prefix = "TE" if check.startswith("TE") else check[0]
    digits = "".join(c for c in check if c.isdigit())
    return groups.index(prefix), int(digits or 0), check


def report(
    rows: Sequence[Row],
    *,
    skipped: Mapping[str, str],
    no_passing: Mapping[str, str],
    header: Sequence[str],
    seed: int,
) -> str:
    targeted = [r for r in rows if r.case.check is not None]
    randoms = [r for r in rows if r.case.check is None]
    out: list[str] = ["# fp8lint against the frameworks' own launch validation", ""]
    out += [*header, ""]
    if targeted:
        out += _targeted_section(targeted, skipped, no_passing)
    out += _random_section(randoms, seed)
    harness = [r for r in rows if not r.counted]
    out += ["## Harness errors (not counted)", ""]
    if not harness:
        out += ["None.", ""]
    else:
        out += ["| case | what happened |", "|---|---|"]
        for r in harness:
            what = f"fp8lint failed: {r.fp8lint_failed}" if r.fp8lint_failed else _verdict(r)
            out.append(f"| `{r.case.id}` | {_cell(what, 300)} |")
        out.append("")
    return "\n".join(out)


def _targeted_section(
    rows: Sequence[Row], skipped: Mapping[str, str], no_passing: Mapping[str, str]
) -> list[str]:
    stats = check_stats(rows)
    counted = [r for r in rows if r.counted]
    rejected = [r for r in counted if r.outcome == "rejected"]
    accepted = [r for r in counted if r.outcome == "accepted"]
    caught = sum(1 for r in rejected if r.errors)
    false = sum(1 for r in accepted if r.errors)
    out = [
        "## Targeted twins",
        "",
        f"{len(rows)} files for {len(stats)} checks: of {len(rejected)} the frameworks reject, "
        f"fp8lint reports an error on {caught} (missed {len(rejected) - caught}); of "
        f"{len(accepted)} they accept, fp8lint reports an error on {false} (false errors).",
        "",
        "| check | surfaces | rejected: caught / all | accepted: false errors / all | "
        "twins the framework did not confirm |",
        "|---|---|---|---|---|",
    ]
    for check in sorted(stats, key=_check_order):
        s = stats[check]
        surfaces = ", ".join(sorted(s.surfaces))
        unconfirmed = ", ".join(f"`{r.case.id}`" for r in s.unconfirmed) or ""
        out.append(
            f"| {check} | {surfaces} | {s.caught} / {s.violating} | "
            f"{s.false_errors} / {s.passing} | {unconfirmed} |"
        )
    out.append("")
    if skipped:
        out += ["Skipped checks:", ""]
        out += [f"- {check}: {why}" for check, why in skipped.items()]
        out.append("")
    if no_passing:
        out += ["Violating twins without a passing twin:", ""]
        out += [f"- {what}: {why}" for what, why in no_passing.items()]
        out.append("")
    missed = [r for c in sorted(stats, key=_check_order) for r in stats[c].missed]
    out += ["### Missed: the framework rejects, fp8lint reports no error", ""]
    out += _table(missed) if missed else ["None.", ""]
    false_rows = [r for c in sorted(stats, key=_check_order) for r in stats[c].false_rows]
    out += ["### False errors: the framework accepts, fp8lint reports an error", ""]
    out += _table(false_rows) if false_rows else ["None.", ""]
    return out


def _table(rows: Sequence[Row]) -> list[str]:
    out = ["| case | knobs | framework | fp8lint |", "|---|---|---|---|"]
    for r in rows:
        out.append(
            f"| `{r.case.id}` | {_cell(r.case.label, 400)} | {_cell(_verdict(r))} | "
            f"{_cell(_errors(r), 300)} |"
        )
    out.append("")
    return out


def _random_section(rows: Sequence[Row], seed: int) -> list[str]:
    if not rows:
        return []
    counted = [r for r in rows if r.counted]
    agree = [r for r in counted if r.agrees]
    share = 100.0 * len(agree) / len(counted) if counted else 0.0
    out = [
        f"## Random combinations (seed {seed})",
        "",
        f"{len(rows)} files, {len(counted)} counted: fp8lint agrees with the frameworks on "
        f"{len(agree)} ({share:.1f} %).",
        "",
        "| surface | counted | rejected by the framework | agree | missed | false errors |",
        "|---|---|---|---|---|---|",
    ]
    by_surface: dict[str, list[Row]] = defaultdict(list)
    for r in counted:
        by_surface[r.case.surface].append(r)
    for surface in sorted(by_surface):
        group = by_surface[surface]
        rejected = [r for r in group if r.outcome == "rejected"]
        missed = [r for r in rejected if not r.errors]
        false = [r for r in group if r.outcome == "accepted" and r.errors]
        good = sum(1 for r in group if r.agrees)
        out.append(
            f"| {surface} | {len(group)} | {len(rejected)} | {good} | {len(missed)} | "
            f"{len(false)} |"
        )
    out.append("")
    reasons = Counter(
        _cell(str(r.verdict.get("message", "")), 90)
        for r in counted
        if r.outcome == "rejected" and not r.errors
    )
    if reasons:
        out += ["Why the frameworks rejected the missed ones (most common first):", ""]
        out += [f"- {n} × {why}" for why, n in reasons.most_common(15)]
        out.append("")
    disagreements = [r for r in counted if not r.agrees]
    out += ["### Every disagreement", ""]
    out += _table(disagreements) if disagreements else ["None.", ""]
    return out


def summary_lines(rows: Sequence[Row]) -> list[str]:
    """The headline numbers, for the terminal."""
    targeted = [r for r in rows if r.case.check is not None and r.counted]
    randoms = [r for r in rows if r.case.check is None and r.counted]
    rej = [r for r in targeted if r.outcome == "rejected"]
    acc = [r for r in targeted if r.outcome == "accepted"]
    lines = []
    if targeted:
        lines.append(
            f"targeted: {sum(1 for r in rej if r.errors)}/{len(rej)} framework rejections "
            f"caught, {sum(1 for r in acc if r.errors)}/{len(acc)} false errors"
        )
    if randoms:
        agree = sum(1 for r in randoms if r.agrees)
        lines.append(f"random: {agree}/{len(randoms)} agree ({100.0 * agree / len(randoms):.1f} %)")
    lines.append(f"harness errors (not counted): {sum(1 for r in rows if not r.counted)}")
    return lines
