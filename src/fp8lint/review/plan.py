"""What the review bot posts, decided without a server: which lines of a patch a comment may
sit on, comment bodies with `suggestion` blocks, the plan of a run (new comments, stale ones
to delete or mark resolved, the sticky summary) and workflow-command annotations.

Each comment carries the finding's fingerprint (`fp8lint.diagnostics.fingerprint`), the same
identity SARIF results carry, so one finding has one identity everywhere.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from fp8lint.diagnostics import Applicability, Diagnostic, Severity, TextEdit, fingerprint
from fp8lint.records import replace

SUMMARY_MARKER = "<!-- fp8lint:summary -->"
RESOLVED_MARKER = "<!-- fp8lint:resolved -->"
_FP_MARKER = re.compile(r"<!-- fp8lint:fp=([0-9a-f]{8,64}) -->")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
TOP_FINDINGS = 10
LIST_LIMIT = 50  # entries per summary section; GitHub bodies stop at 65536 characters


# --------------------------------------------------------------------------- diff lines


def commentable_lines(patch: str | None) -> dict[int, int]:
    """Right-side line -> hunk index for every added or context line of a unified patch."""
    out: dict[int, int] = {}
    if not patch:
        return out
    hunk = -1
    line = 0
    for raw in patch.split("\n"):
        m = _HUNK.match(raw)
        if m:
            hunk += 1
            line = int(m.group(1))
            continue
        if hunk < 0 or raw.startswith("\\"):
            continue
        if raw.startswith(("+", " ")):
            out[line] = hunk
            line += 1
    return out


# --------------------------------------------------------------------------- findings


def fingerprints(diags: Sequence[Diagnostic]) -> list[str]:
    """One fingerprint per finding; repeats of one identity get a counter appended."""
    seen: Counter[str] = Counter()
    out = []
    for d in diags:
        fp = fingerprint(d)
        seen[fp] += 1
        if seen[fp] > 1:
            fp = hashlib.sha256(f"{fp}\0{seen[fp]}".encode()).hexdigest()
        out.append(fp)
    return out


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _LINE_BREAK.finditer(text)]


# the fixes a suggestion may carry: those with edits that `--fix` (or `--unsafe-fixes`) makes
APPLIED = (Applicability.SAFE, Applicability.UNSAFE)


def suggestion(d: Diagnostic, text: str, first: int, last: int) -> str | None:
    """The fixed text of lines `first`..`last` when `d` has a safe or unsafe fix whose edits
    all lie within those lines (an insertion right after the last line counts), else None.
    An unsafe fix (one that changes the run) may be offered: a suggestion is applied only by
    a reviewer's own click, and its comment says that it changes the run."""
    fix = d.fix
    if fix is None or fix.applicability not in APPLIED or not fix.edits:
        return None
    return suggest_edits(fix.edits, text, first, last)


def suggest_edits(edits: Sequence[TextEdit], text: str, first: int, last: int) -> str | None:
    """Lines `first`..`last` of `text` with `edits` made, or None when an edit lies outside
    them or nothing changes."""
    starts = _line_starts(text)
    if first < 1 or last > len(starts) or first > last:
        return None
    lo = starts[first - 1]
    hi = starts[last] if last < len(starts) else len(text)
    if any(e.start < lo or e.end > hi or e.start > e.end for e in edits):
        return None
    from fp8lint.fixes import apply_edits

    segment = text[lo:hi]
    fixed = apply_edits(segment, [_shift(e, -lo) for e in edits])
    if fixed == segment:
        return None
    if fixed.endswith("\r\n"):
        fixed = fixed[:-2]
    elif fixed.endswith(("\n", "\r")):
        fixed = fixed[:-1]
    return "\n".join(_LINE_BREAK.split(fixed)) if fixed else ""


def _shift(e: TextEdit, by: int) -> TextEdit:
    return replace(e, start=e.start + by, end=e.end + by)


def _last_line(d: Diagnostic) -> int:
    if d.end_line > d.line and d.end_column <= 1:
        return d.end_line - 1
    return max(d.end_line, d.line)


def comment_lines(
    d: Diagnostic, lines: Mapping[int, int], text: str | None
) -> tuple[int, int] | None:
    """The (first, last) right-side lines to comment on, or None when outside the diff.

    The finding's own lines when they are all in one hunk, else its first line; widened
    to a safe fix's edits when those lines are in the same hunk too, so that the fix can
    be offered as a suggestion."""

    def one_hunk(a: int, b: int) -> bool:
        return (
            all(n in lines for n in range(a, b + 1))
            and len({lines[n] for n in range(a, b + 1)}) == 1
        )

    if d.line not in lines:
        return None
    first, last = (d.line, _last_line(d)) if one_hunk(d.line, _last_line(d)) else (d.line, d.line)
    if text is None or d.fix is None or d.fix.applicability not in APPLIED:
        return first, last
    if suggestion(d, text, first, last) is not None or not d.fix.edits:
        return first, last
    lo = min([first] + [e.line for e in d.fix.edits])
    hi = max([last] + [_edit_last_line(e) for e in d.fix.edits])
    if hi - lo <= 20 and one_hunk(lo, hi) and suggestion(d, text, lo, hi) is not None:
        return lo, hi
    return first, last


def _edit_last_line(e: TextEdit) -> int:
    if e.end_line > e.line and e.end_column <= 1:
        return e.end_line - 1
    return max(e.end_line, e.line)


def comment_body(
    d: Diagnostic,
    fp: str,
    suggested: str | None,
    also: Sequence[Diagnostic] = (),
    remark: str | None = None,
) -> str:
    """A comment's text; `also`: findings whose fixes the suggestion makes too, `remark`: a
    line on how this comment relates to another one on its line."""
    parts = [f"**{d.code}** ({d.name}) [{d.severity.value}]: {_safe(d.message)}"]
    if d.note:
        parts.append(f"Note: {_safe(d.note)}")
    if d.fix is not None:
        if suggested is not None:
            label = "Suggested fix"
            fixes = [x.fix for x in (d, *also) if x.fix is not None]
            if any(f.applicability is Applicability.UNSAFE for f in fixes):
                label += " (it changes the training run: commit it only if you mean to)"
            message = _safe(d.fix.message) + "".join(
                f"; and for {x.code}: {_safe(x.fix.message)}" for x in also if x.fix is not None
            )
            parts.append(f"{label}: {message}")
            fence = "`" * max(3, _longest_backtick_run(suggested) + 1)
            parts.append(
                f"{fence}suggestion\n{suggested}\n{fence}"
                if suggested
                else f"{fence}suggestion\n{fence}"
            )
        elif d.fix.applicability is Applicability.SAFE:
            parts.append(f"Fix (`fp8lint check --fix`): {_safe(d.fix.message)}")
        elif d.fix.applicability is Applicability.UNSAFE:
            parts.append(f"Possible fix (unsafe, `--fix --unsafe-fixes`): {_safe(d.fix.message)}")
        else:
            parts.append(f"Hint: {_safe(d.fix.message)}")
    if remark:
        parts.append(remark)
    parts.append(f"<!-- fp8lint:fp={fp} -->")
    return "\n\n".join(parts)


def _longest_backtick_run(text: str) -> int:
    return max((len(m) for m in re.findall(r"`+", text)), default=0)


def _safe(text: str) -> str:
    """Finding text inside Markdown: never a hidden marker of ours."""
    return text.replace("<!--", "&lt;!--")


# --------------------------------------------------------------------------- the plan


@dataclass
class Finding:
    diagnostic: Diagnostic
    fp: str
    lines: tuple[int, int] | None  # where an inline comment may sit; None: outside the diff


@dataclass
class Plan:
    findings: list[Finding]
    new_comments: list[tuple[Finding, dict[str, Any]]] = field(default_factory=list)
    already: list[Finding] = field(default_factory=list)  # commented on by an earlier run
    overflow: list[Finding] = field(default_factory=list)  # past --max-comments
    unposted: list[Finding] = field(default_factory=list)  # GitHub refused the review
    outside: list[Finding] = field(default_factory=list)
    deletes: list[int] = field(default_factory=list)
    replies: list[tuple[int, str]] = field(default_factory=list)
    review: dict[str, Any] | None = None
    summary_id: int | None = None
    summary_body: str | None = None  # None: nothing to create or update


def _id(value: object) -> int | None:
    """An id from the API, or None when it is missing or not a whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _login(comment: Mapping[str, Any]) -> str:
    user = comment.get("user") or {}
    return str(user.get("login") or "") if isinstance(user, Mapping) else ""


def make_plan(
    diags: Sequence[Diagnostic],
    lines_by_path: Mapping[str, Mapping[int, int]],
    texts: Mapping[str, str],
    review_comments: Sequence[Mapping[str, Any]],
    issue_comments: Sequence[Mapping[str, Any]],
    login: str,
    sha: str,
    max_comments: int,
) -> Plan:
    """Everything to post, delete and update, from the findings and what GitHub holds."""
    findings = [
        Finding(d, fp, comment_lines(d, lines_by_path.get(d.path, {}), texts.get(d.path)))
        for d, fp in zip(diags, fingerprints(diags), strict=True)
    ]
    plan = Plan(findings)
    current = {f.fp for f in findings}

    ours = [c for c in review_comments if _login(c) == login]
    replied_to = {_id(c.get("in_reply_to_id")) for c in review_comments} - {None}
    resolved = {
        _id(c.get("in_reply_to_id")) for c in ours if RESOLVED_MARKER in str(c.get("body") or "")
    } - {None}
    posted: set[str] = set()
    suggesting: list[_Suggesting] = []  # this run's comments with a suggestion
    for c in ours:
        if c.get("in_reply_to_id"):
            continue
        m = _FP_MARKER.search(str(c.get("body") or ""))
        if m is None:
            continue
        cid = _id(c.get("id"))
        if cid in resolved:
            continue  # closed by an earlier run: a finding that comes back gets a new one
        if m.group(1) in current:
            posted.add(m.group(1))
        elif cid is None:
            continue  # a comment without an id: nothing to delete or reply to
        elif cid in replied_to:
            plan.replies.append(
                (
                    cid,
                    f"Resolved: fp8lint no longer reports this at {sha[:7]}.\n\n{RESOLVED_MARKER}",
                )
            )
        else:
            plan.deletes.append(cid)

    for f in findings:
        d = f.diagnostic
        if f.lines is None:
            plan.outside.append(f)
        elif f.fp in posted:
            plan.already.append(f)
        elif len(plan.new_comments) >= max_comments:
            plan.overflow.append(f)
        else:
            first, last = f.lines
            text = texts.get(d.path)
            suggested = suggestion(d, text, first, last) if text is not None else None
            comment: dict[str, Any] = {"path": d.path}
            _place(comment, first, last)
            body = comment_body(d, f.fp, suggested)
            if suggested is not None and text is not None:
                earlier = next((s for s in suggesting if s.overlaps(d.path, first, last)), None)
                if earlier is not None:
                    hunks = lines_by_path.get(d.path, {})
                    body = earlier.take(f, first, last, text, hunks) or comment_body(
                        d, f.fp, None, remark=_conflict(earlier.codes[0])
                    )
                else:
                    suggesting.append(_Suggesting(f, comment, first, last))
            comment.update(body=body)
            plan.new_comments.append((f, comment))

    if plan.new_comments:
        n = len(plan.new_comments)
        body = f"fp8lint found {n} new finding{_s(n)} on lines this pull request changes."
        if plan.overflow:
            body += (
                f" {len(plan.overflow)} more {_are(len(plan.overflow))} listed only in the "
                "summary comment (limit of inline comments per review)."
            )
        plan.review = {
            "commit_id": sha,
            "event": "COMMENT",
            "body": body,
            "comments": [c for _, c in plan.new_comments],
        }

    sticky = [
        c
        for c in issue_comments
        if _login(c) == login
        and SUMMARY_MARKER in str(c.get("body") or "")
        and _id(c.get("id")) is not None
    ]
    if sticky:
        plan.summary_id = _id(sticky[0].get("id"))
    if findings or sticky:
        body = summary_body(plan, sha)
        if not sticky or str(sticky[0].get("body") or "") != body:
            plan.summary_body = body
    return plan


def _place(comment: dict[str, Any], first: int, last: int) -> None:
    comment.pop("start_line", None)
    comment.pop("start_side", None)
    if last > first:
        comment.update(start_line=first, start_side="RIGHT")
    comment.update(line=last, side="RIGHT")


def _conflict(code: str) -> str:
    return (
        f"Its fix overlaps the suggestion of the {code} comment on this line, so it is not "
        "suggested here: apply that one first, then run fp8lint again."
    )


def merged_edits(edits: Sequence[TextEdit]) -> list[TextEdit] | None:
    """The edits of several fixes as one set (repeats once), or None when two of them
    overlap or insert different text at one place: they conflict."""
    unique = sorted(set(edits), key=lambda e: (e.start, e.end, e.content))
    for a, b in pairwise(unique):
        if b.start < a.end or (a.start == a.end == b.start == b.end):
            return None
    return unique


@dataclass
class _Suggesting:
    """A new comment with a suggestion, and the findings whose fixes it makes."""

    finding: Finding
    comment: dict[str, Any]
    first: int
    last: int
    others: list[Diagnostic] = field(default_factory=list)

    @property
    def codes(self) -> list[str]:
        return [self.finding.diagnostic.code] + [d.code for d in self.others]

    def overlaps(self, path: str, first: int, last: int) -> bool:
        return self.finding.diagnostic.path == path and first <= self.last and self.first <= last

    def take(
        self, f: Finding, first: int, last: int, text: str, hunks: Mapping[int, int]
    ) -> str | None:
        """Fold `f`'s fix into this suggestion; `f`'s own comment's body, or None when the
        fixes conflict (or the lines together leave one hunk)."""
        diags = [self.finding.diagnostic, *self.others, f.diagnostic]
        edits = merged_edits([e for d in diags if d.fix is not None for e in d.fix.edits])
        lo, hi = min(self.first, first), max(self.last, last)
        in_hunks = {hunks.get(n) for n in range(lo, hi + 1)}
        if edits is None or hi - lo > 20 or len(in_hunks) != 1 or None in in_hunks:
            return None
        merged = suggest_edits(edits, text, lo, hi)
        if merged is None:
            return None
        self.others.append(f.diagnostic)
        self.first, self.last = lo, hi
        _place(self.comment, lo, hi)
        self.comment["body"] = comment_body(
            self.finding.diagnostic, self.finding.fp, merged, also=self.others
        )
        d = f.diagnostic
        remark = f"Its fix is part of the suggestion of the {self.codes[0]} comment on this line."
        return comment_body(d, f.fp, None, remark=remark)


def without_review(plan: Plan, sha: str) -> None:
    """GitHub refused the review: its findings go to the summary, which is then rewritten."""
    plan.unposted = [f for f, _ in plan.new_comments]
    plan.new_comments = []
    plan.review = None
    plan.summary_body = summary_body(plan, sha)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _are(n: int) -> str:
    return "is" if n == 1 else "are"


def summary_body(plan: Plan, sha: str) -> str:
    """The sticky comment: counts, top findings, what the review could not show, help."""
    findings = plan.findings
    out = [SUMMARY_MARKER, "## fp8lint"]
    if not findings:
        out.append(f"No findings in the changed files at {sha[:7]}. :white_check_mark:")
        return "\n\n".join(out) + "\n"
    diags = [f.diagnostic for f in findings]
    n = len(diags)
    sev = Counter(d.severity for d in diags)
    by_sev = ", ".join(
        f"{sev[s]} {s.value}{_s(sev[s]) if s is not Severity.INFO else ''}"
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if sev[s]
    )
    files = len({d.path for d in diags})
    out.append(
        f"**{n} finding{_s(n)}** in {files} changed file{_s(files)} ({by_sev}) at {sha[:7]}."
    )

    rows = ["| Rule | Severity | Findings |", "|---|---|---:|"]
    per_rule = Counter((d.code, d.name, d.severity.value) for d in diags)
    for (code, name, severity), count in sorted(per_rule.items()):
        rows.append(f"| `{code}` {name} | {severity} | {count} |")
    out.append("\n".join(rows))

    ranked = sorted(findings, key=lambda f: (-f.diagnostic.severity.rank, f.diagnostic.sort_key()))
    out.append("### Top findings\n\n" + _list(ranked, TOP_FINDINGS))
    if plan.outside:
        out.append(
            "### Outside the diff\n\nThese are on lines this pull request does not change, "
            "so they cannot be review comments:\n\n" + _list(plan.outside, LIST_LIMIT)
        )
    if plan.unposted:
        out.append(
            "### Not posted inline\n\nGitHub did not accept the review comments, so they are "
            "listed here:\n\n" + _list(plan.unposted, LIST_LIMIT)
        )
    if plan.overflow:
        out.append(
            "### Not commented inline\n\nPast the limit of inline comments per review:\n\n"
            + _list(plan.overflow, LIST_LIMIT)
        )
    codes = sorted({d.code for d in diags})
    out.append(
        "<details><summary>Suppressing a finding</summary>\n\n"
        f"Add `# fp8lint: ignore[{codes[0]}]` at the end of the line, or on its own line "
        "just above it (several codes: `# fp8lint: ignore[FP8101,FP8104]`; a whole file: "
        "`# fp8lint: ignore-file[CODE]`). JSON has no comments: use the configuration, or a "
        "baseline (`fp8lint check --write-baseline FILE`, then `--baseline FILE`) so that "
        "only new findings are reported.\n\n</details>"
    )
    out.append(
        "Run `fp8lint rule CODE` for a rule's documentation: "
        + ", ".join(f"`fp8lint rule {c}`" for c in codes)
        + "."
    )
    return "\n\n".join(out) + "\n"


def _list(findings: Sequence[Finding], limit: int) -> str:
    lines = []
    for f in findings[:limit]:
        d = f.diagnostic
        lines.append(
            f"- `{d.path}:{d.line}` **{d.code}** ({d.name}) [{d.severity.value}]: "
            f"{_short(d.message)}"
        )
    if len(findings) > limit:
        lines.append(f"- … and {len(findings) - limit} more")
    return "\n".join(lines)


def _short(message: str, limit: int = 200) -> str:
    """The message on one line, cut at a word near `limit`, code spans kept closed."""
    text = " ".join(_safe(message).split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:(")
    if cut.count("`") % 2:
        cut += "`"
    return cut + " …"


# --------------------------------------------------------------------------- annotations


def annotation(d: Diagnostic) -> str:
    """A GitHub workflow command (`::warning file=...,title=fp8lint (FP8101)::message`): the
    very line `fp8lint check --output-format github` prints for the finding."""
    from fp8lint.report.github import annotation as github_annotation

    return github_annotation(d)
