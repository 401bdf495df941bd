"""`fp8lint review` when GitHub fails: a 422, a 500 (once, and for good), a secondary rate
limit, a network error.  The findings must still reach the user (the summary comment, else
the log's annotations, and the step summary), the exit code must follow `--fail-on`, and the
one line about the failure must hold neither the token nor the server's answer.  Also: two
findings with suggestions on one line."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Severity, TextEdit
from fp8lint.review import client as github
from fp8lint.review import command as review
from fp8lint.review import plan as planning

from ..fake_github import FakeGitHub, PrFile
from .test_review import (
    HEAD,
    M_PATCH,
    REVIEWS,
    SUMMARIES,
    TOKEN,
    TWO_FIXED,
    TWO_FIXED_PATCH,
    TWO_PATCH,
    Runner,
)

COMMENTS = "/repos/acme/train/pulls/7/comments"


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(token=TOKEN, head_sha=HEAD).start()
    fake.files = [
        PrFile("configs/m.yaml", M_PATCH, "added"),
        PrFile("configs/two.yaml", TWO_PATCH),
    ]
    fake.echo_auth_in_errors = True  # a server that repeats the header in its errors
    try:
        yield fake
    finally:
        fake.stop()


class StepRunner(Runner):
    """Runs with `$GITHUB_STEP_SUMMARY` set."""

    @property
    def step_summary(self) -> Path:
        return self.tree.parent / "step-summary.md"

    def env(self) -> dict[str, str]:
        return {**super().env(), "GITHUB_STEP_SUMMARY": str(self.step_summary)}


@pytest.fixture
def rv(gh: FakeGitHub, tree: Path) -> StepRunner:
    return StepRunner(gh, tree)


def annotations(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("::")]


def posts(gh: FakeGitHub, path: str) -> int:
    return sum(1 for r in gh.requests if (r.method, r.path) == ("POST", path))


# --------------------------------------------------------------------------- 422


def test_a_refused_review_puts_its_findings_in_the_summary(
    rv: StepRunner,
    gh: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the bot reads the diff wrong: GitHub refuses line 2 of m.yaml with a 422
    gh.files[0].patch = "@@ -0,0 +1,1 @@\n+MODEL_ARGS:"
    monkeypatch.setattr(planning, "commentable_lines", lambda patch: {1: 0, 2: 0, 3: 0})
    assert rv() == 1  # FP8104 is an error: the findings decide, not the 422
    assert posts(gh, REVIEWS) == 1 and rv.sleeps == []  # a 422 is not retried
    assert gh.reviews == [] and gh.review_comments == []
    (summary,) = [c["body"] for c in gh.issue_comments]
    unposted = summary.split("### Not posted inline")[1]
    assert "- `configs/m.yaml:2` **FP8101** (zero-headroom) [warning]: " in unposted
    assert "- `configs/two.yaml:3` **FP8104** (negative-margin) [error]: " in unposted
    out, err = capsys.readouterr()
    assert err == (
        f"fp8lint: GitHub API failed (POST {REVIEWS}: HTTP 422); "
        "the findings are in the summary comment\n"
    )
    assert out == ""  # the summary comment holds them: no annotations on top
    assert rv.step_summary.read_text() == summary
    assert TOKEN not in out + err


# --------------------------------------------------------------------------- 5xx


def test_a_500_is_retried_and_the_retry_succeeds(
    rv: StepRunner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.flaky[("POST", REVIEWS)] = [(500, {})]
    assert rv() == 1
    assert rv.sleeps == [1.0]
    assert posts(gh, REVIEWS) == 2 and len(gh.reviews) == 1 and len(gh.review_comments) == 2
    assert posts(gh, SUMMARIES) == 1
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("fp8lint review: 2 findings, 2 new inline comments")
    assert not rv.step_summary.exists()


def test_a_503_waits_its_retry_after(rv: StepRunner, gh: FakeGitHub) -> None:
    gh.flaky[("POST", SUMMARIES)] = [(503, {"Retry-After": "5"}), (502, {})]
    assert rv() == 1
    assert rv.sleeps == [5.0, 2.0]  # then the backoff of the second retry
    assert len(gh.issue_comments) == 1


def test_a_lasting_500_on_the_summary_prints_the_findings(
    rv: StepRunner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.files = gh.files[:1]  # m.yaml: one warning
    gh.fail[("POST", SUMMARIES)] = 500
    assert rv("--fail-on", "error") == 0  # a warning under --fail-on error: 0, API error or not
    assert rv.sleeps == [1.0, 2.0, 4.0]  # three retries, then it gives up
    assert posts(gh, SUMMARIES) == 4 and len(gh.reviews) == 1
    out, err = capsys.readouterr()
    assert err == (
        f"fp8lint: GitHub API failed (POST {SUMMARIES}: HTTP 500); printing the findings instead\n"
    )
    assert out.startswith("<!-- fp8lint:summary -->\n\n## fp8lint\n\n**1 finding** ")
    (line,) = annotations(out)
    assert line.startswith(
        "::warning file=configs/m.yaml,line=2,col=17,endLine=2,endColumn=23,"
        "title=fp8lint (FP8101)::"
    )
    assert rv.step_summary.read_text().startswith("<!-- fp8lint:summary -->")
    assert "Server Error" not in err and "Bearer" not in out + err and TOKEN not in out + err

    assert rv() == 1  # the default --fail-on warning
    assert rv("--exit-zero") == 0


def test_comments_that_cannot_be_read_mean_no_writes(
    rv: StepRunner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.fail[("GET", COMMENTS)] = 500
    assert rv() == 1
    assert gh.writes() == []  # what is posted already is unknown: posting could repeat it
    out, err = capsys.readouterr()
    assert err == (
        f"fp8lint: GitHub API failed (GET {COMMENTS}: HTTP 500); printing the findings instead\n"
    )
    assert len(annotations(out)) == 2 and "**2 findings**" in out
    assert "**2 findings**" in rv.step_summary.read_text()


def test_a_comment_deleted_already_is_no_failure(
    rv: StepRunner, gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rv() == 1
    stale = next(c for c in gh.review_comments if c["path"] == "configs/two.yaml")
    (tree / "configs" / "two.yaml").write_text(TWO_FIXED)
    gh.files[1].patch = TWO_FIXED_PATCH
    gh.fail[("DELETE", f"/repos/acme/train/pulls/comments/{stale['id']}")] = 404
    capsys.readouterr()
    assert rv() == 1
    assert [r.method for r in gh.writes()] == ["DELETE", "PATCH"]
    out, err = capsys.readouterr()
    assert err == "" and out.endswith("1 deleted, 0 resolved\n")


# --------------------------------------------------------------------------- rate limits


def test_a_secondary_rate_limit_on_a_write_waits_as_told(
    rv: StepRunner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    reset = str(int(time.time()) + 5)
    gh.flaky[("POST", REVIEWS)] = [
        (403, {"Retry-After": "3"}),
        (429, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}),
    ]
    assert rv() == 1
    first, second = rv.sleeps
    assert first == 3.0 and 1.0 <= second <= 6.0
    assert posts(gh, REVIEWS) == 3 and len(gh.reviews) == 1
    assert capsys.readouterr().err == ""


def test_a_rate_limit_that_lasts_is_not_waited_for(
    rv: StepRunner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    reset = str(int(time.time()) + 3600)
    gh.flaky[("POST", REVIEWS)] = [
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset})
    ]
    assert rv() == 1
    assert rv.sleeps == []  # an hour is past the longest wait: no sleep at all
    assert gh.reviews == [] and "### Not posted inline" in gh.issue_comments[0]["body"]
    err = capsys.readouterr().err
    assert err == (
        f"fp8lint: GitHub API failed (POST {REVIEWS}: HTTP 403, rate limited); "
        "the findings are in the summary comment\n"
    )  # a rate limit is no permission problem: the summary is still posted


def test_the_total_wait_is_bounded(gh: FakeGitHub) -> None:
    sleeps: list[float] = []
    client = github.GitHubClient(gh.url, TOKEN, sleep=sleeps.append)
    gh.flaky[("GET", "/user")] = [(429, {"Retry-After": "100"})] * 3
    with pytest.raises(github.GitHubError) as info:
        client.request("GET", "/user")
    assert sleeps == [100.0]  # a second 100 s would pass the 180 s in all
    assert info.value.status == 429 and info.value.rate_limited and not info.value.forbidden
    assert len(gh.requests) == 2


# --------------------------------------------------------------------------- network


def test_a_network_error_prints_the_findings(
    rv: StepRunner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.drop.add(("POST", SUMMARIES))
    assert rv() == 1
    assert posts(gh, SUMMARIES) == 1 and rv.sleeps == []  # not retried: it may have landed
    out, err = capsys.readouterr()
    assert err.startswith(f"fp8lint: GitHub API failed (POST {SUMMARIES}: ")
    assert err.endswith("); printing the findings instead\n") and err.count("\n") == 1
    assert "HTTP" not in err
    assert len(annotations(out)) == 2 and TOKEN not in out + err


# --------------------------------------------------------------------------- one line

PATH = "configs/line.yaml"
TEXT = "fp8:\n  recipe: {margin: -1, history: 1}\n"
LINE_PATCH = "@@ -0,0 +1,2 @@\n+fp8:\n+  recipe: {margin: -1, history: 1}"


def edit(old: str, new: str, text: str = TEXT) -> TextEdit:
    start = text.index(old)
    column = start - text.index("\n") - 1 + 1
    return TextEdit(new, 2, column, 2, column + len(old), start, start + len(old))


def finding(code: str, old: str, new: str, applicability: Applicability) -> Diagnostic:
    e = edit(old, new)
    return Diagnostic(
        code, code.lower(), Severity.WARNING, f"{code} message", PATH, 2, e.column, 2,
        e.end_column, key=code, fix=Fix(applicability, f"set {new}", (e,)),
    )  # fmt: skip


MARGIN = finding("FP8104", "-1", "0", Applicability.UNSAFE)
HISTORY = finding("FP8105", "history: 1", "history: 1024", Applicability.SAFE)
CLASH = finding("FP8106", "margin: -1", "margin: 2", Applicability.SAFE)


def one_line_plan(*diags: Diagnostic) -> planning.Plan:
    lines = {1: 0, 2: 0}
    return planning.make_plan(list(diags), {PATH: lines}, {PATH: TEXT}, [], [], "bot", HEAD, 30)


def test_two_suggestions_on_one_line_become_one() -> None:
    plan = one_line_plan(MARGIN, HISTORY)
    (_, first), (_, second) = plan.new_comments
    assert (first["line"], second["line"]) == (2, 2) and "start_line" not in first
    assert first["body"].count("```suggestion") == 1
    assert "```suggestion\n  recipe: {margin: 0, history: 1024}\n```" in first["body"]
    assert "set 0; and for FP8105: set history: 1024" in first["body"]
    assert "changes the training run" in first["body"]  # one of the two fixes is unsafe
    assert "```suggestion" not in second["body"]
    assert (
        "Its fix is part of the suggestion of the FP8104 comment on this line." in (second["body"])
    )
    assert "<!-- fp8lint:fp=" in second["body"]  # it keeps its own identity for reruns


def test_conflicting_suggestions_on_one_line_keep_the_first() -> None:
    plan = one_line_plan(MARGIN, CLASH)
    (_, first), (_, second) = plan.new_comments
    assert "```suggestion\n  recipe: {margin: 0, history: 1}\n```" in first["body"]
    assert "and for" not in first["body"]
    assert "```suggestion" not in second["body"]
    assert "Fix (`fp8lint check --fix`): set margin: 2" in second["body"]
    assert "overlaps the suggestion of the FP8104 comment" in second["body"]
    assert planning.merged_edits([edit("-1", "0"), edit("margin: -1", "margin: 2")]) is None
    # the same edit twice is one edit, no conflict
    assert planning.merged_edits([edit("-1", "0"), edit("-1", "0")]) == [edit("-1", "0")]


def test_two_findings_on_one_line_through_the_api(
    rv: StepRunner, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    gh.files = [PrFile(PATH, LINE_PATCH, "added")]
    monkeypatch.setattr(review, "lint_changed", lambda paths: ([MARGIN, HISTORY], {PATH: TEXT}))
    assert rv() == 1
    (review_post,) = [r for r in gh.writes() if r.path == REVIEWS]
    bodies = [c["body"] for c in review_post.body["comments"]]
    assert sum(b.count("```suggestion") for b in bodies) == 1
    assert [c["line"] for c in gh.review_comments] == [2, 2]
    monkeypatch.setattr(review, "lint_changed", lambda paths: ([MARGIN, HISTORY], {PATH: TEXT}))
    assert rv() == 1  # both are known by their fingerprints: nothing new is posted
    assert [r.path for r in gh.writes()] == []
