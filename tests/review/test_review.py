"""`fp8lint review` against an in-memory GitHub (tests/fake_github.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fp8lint.arguments import build_parser
from fp8lint.cli import main as cli_main
from fp8lint.diagnostics import Applicability, Diagnostic, Fix, Severity, TextEdit
from fp8lint.engine import run
from fp8lint.report import Report
from fp8lint.report import github as github_format
from fp8lint.review import client as github
from fp8lint.review import command as review
from fp8lint.review import plan as planning
from fp8lint.settings import RunSettings

from ..conftest import ROOT
from ..fake_github import FakeGitHub, PrFile

TOKEN = "ghs_SECRETtoken0123456789abcdefXYZ"
HEAD = "0123456789abcdef0123456789abcdef01234567"
REVIEWS = "/repos/acme/train/pulls/7/reviews"
SUMMARIES = "/repos/acme/train/issues/7/comments"

M_YAML = "MODEL_ARGS:\n  --fp8-format: hybrid\n"
M_PATCH = "@@ -0,0 +1,2 @@\n+MODEL_ARGS:\n+  --fp8-format: hybrid"
TWO_YAML = (
    "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-margin: -1\n"
    "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
)
TWO_PATCH = (
    "@@ -1,5 +1,5 @@\n MODEL_ARGS:\n   --fp8-format: hybrid\n-  --fp8-margin: 2\n"
    "+  --fp8-margin: -1\n   --fp8-amax-history-len: 1024\n   --fp8-amax-compute-algo: max"
)
TWO_FIXED = TWO_YAML.replace("--fp8-margin: -1", "--fp8-margin: 0  # kept at zero on purpose")
TWO_FIXED_PATCH = TWO_PATCH.replace(
    "+  --fp8-margin: -1", "+  --fp8-margin: 0  # kept at zero on purpose"
)
OTHER_YAML = (
    "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
    "  --fp8-amax-compute-algo: max\n  --fp8-margin: -1\n  --num-layers: 4\n"
    "  --hidden-size: 64\n  --seq-length: 128\n"
)
OTHER_PATCH = "@@ -6,1 +6,3 @@\n   --num-layers: 4\n+  --hidden-size: 64\n+  --seq-length: 128"


def fp(code: str, path: str, key: str) -> str:
    return hashlib.sha256(f"{code}\0{path}\0{key}".encode()).hexdigest()


FP_M = fp("FP8101", "configs/m.yaml", "--fp8-format: hybrid")
FP_TWO = fp("FP8104", "configs/two.yaml", "--fp8-margin: -1")


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(token=TOKEN, head_sha=HEAD).start()
    fake.files = [
        PrFile("README.md", "@@ -1 +1 @@\n-old\n+new"),
        PrFile("configs/m.yaml", M_PATCH, "added"),
        PrFile("configs/other.yaml", OTHER_PATCH),
        PrFile("configs/two.yaml", TWO_PATCH),
        PrFile("configs/gone.yaml", "@@ -1,1 +0,0 @@\n-x: 1", "removed"),
    ]
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "README.md").write_text("new\n")
    (root / "configs" / "m.yaml").write_text(M_YAML)
    (root / "configs" / "two.yaml").write_text(TWO_YAML)
    (root / "configs" / "other.yaml").write_text(OTHER_YAML)
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"number": 7, "pull_request": {"number": 7, "head": {"sha": HEAD}}})
    )
    monkeypatch.chdir(root)
    return root


class Runner:
    def __init__(self, gh: FakeGitHub, tree: Path) -> None:
        self.gh = gh
        self.tree = tree
        self.sleeps: list[float] = []

    def env(self) -> dict[str, str]:
        return {
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_REPOSITORY": "acme/train",
            "GITHUB_EVENT_PATH": str(self.tree.parent / "event.json"),
            "GITHUB_API_URL": self.gh.url,
        }

    def __call__(self, *argv: str, env: dict[str, str] | None = None) -> int:
        self.gh.requests.clear()
        args = build_parser().parse_args(["review", *argv])
        return review.main(args, sleep=self.sleeps.append, env=env or self.env())


@pytest.fixture
def rv(gh: FakeGitHub, tree: Path) -> Runner:
    return Runner(gh, tree)


def diag(path: str, code: str) -> Diagnostic:
    return next(d for d in run([path], RunSettings(), None).diagnostics if d.code == code)


def expected_body(d: Diagnostic, fingerprint: str, suggested: str) -> str:
    assert d.fix is not None and d.note
    return (
        f"**{d.code}** ({d.name}) [{d.severity.value}]: {d.message}\n\n"
        f"Note: {d.note}\n\n"
        "Suggested fix (it changes the training run: commit it only if you mean to): "
        f"{d.fix.message}\n\n"
        f"```suggestion\n{suggested}\n```\n\n"
        f"<!-- fp8lint:fp={fingerprint} -->"
    )


def ours(gh: FakeGitHub) -> list[dict[str, Any]]:
    return [c for c in gh.review_comments if c["user"]["login"] == gh.login]


# --------------------------------------------------------------------------- units


def test_commentable_lines() -> None:
    patch = (
        "@@ -1,3 +1,4 @@ header\n a\n-b\n+B\n+C\n c\n"
        "@@ -10,2 +11,2 @@\n x\n-y\n+Y\n\\ No newline at end of file"
    )
    assert planning.commentable_lines(patch) == {1: 0, 2: 0, 3: 0, 4: 0, 11: 1, 12: 1}
    assert planning.commentable_lines(None) == {}
    assert planning.commentable_lines(M_PATCH) == {1: 0, 2: 0}


def test_fingerprint_is_code_path_key() -> None:
    base = Diagnostic("FP8104", "n", Severity.ERROR, "m", "a.yaml", 3, 1, 3, 2, key="k")
    twin = Diagnostic("FP8104", "n", Severity.ERROR, "m", "a.yaml", 9, 1, 9, 2, key="k")
    first, second = planning.fingerprints([base, twin])
    assert first == fp("FP8104", "a.yaml", "k") and second != first


def test_suggestion_multi_line_and_limits() -> None:
    text = "a: 1\nb: 2\nc: 3\nd: 4\n"
    # replace "2" (line 2) and "3" (line 3): a two-line comment carries both
    edits = (TextEdit("20", 2, 4, 2, 5, 8, 9), TextEdit("30", 3, 4, 3, 5, 13, 14))
    fix = Fix(Applicability.SAFE, "bump", edits)
    d = Diagnostic("FP8105", "x", Severity.WARNING, "msg", "f.yaml", 2, 1, 2, 5, fix=fix)
    assert planning.suggestion(d, text, 2, 2) is None  # the second edit is outside line 2
    assert planning.suggestion(d, text, 2, 3) == "b: 20\nc: 30"
    lines = {n: 0 for n in range(1, 5)}
    assert planning.comment_lines(d, lines, text) == (2, 3)
    plan = planning.make_plan([d], {"f.yaml": lines}, {"f.yaml": text}, [], [], "bot", HEAD, 5)
    ((_, comment),) = plan.new_comments
    assert (comment["start_line"], comment["start_side"], comment["line"]) == (2, "RIGHT", 3)
    assert "```suggestion\nb: 20\nc: 30\n```" in comment["body"]
    # the edits' lines in another hunk: a one-line comment without a suggestion
    assert planning.comment_lines(d, {1: 0, 2: 0, 3: 1}, text) == (2, 2)
    unsafe = Diagnostic(
        "FP8105", "x", Severity.WARNING, "m", "f.yaml", 2, 1, 2, 5,
        fix=Fix(Applicability.UNSAFE, "bump", edits[:1]),
    )  # fmt: skip
    # an unsafe fix is suggested too (a reviewer's click applies it), saying it changes the run
    assert planning.suggestion(unsafe, text, 2, 2) == "b: 20"
    body = planning.comment_body(unsafe, "0" * 16, "b: 20")
    assert "changes the training run" in body and "```suggestion\nb: 20\n```" in body
    display = Diagnostic(
        "FP8105", "x", Severity.WARNING, "m", "f.yaml", 2, 1, 2, 5,
        fix=Fix(Applicability.DISPLAY_ONLY, "bump", ()),
    )  # fmt: skip
    assert planning.suggestion(display, text, 2, 2) is None
    assert "```suggestion" not in planning.comment_body(display, "0" * 16, None)


def test_annotation_is_the_check_commands_line() -> None:
    d = Diagnostic(
        "FP8104", "negative-margin", Severity.ERROR, "50% off\r\nnext: \x1b[31mline",
        "a,b:c.yaml", 3, 17, 3, 19,
    )  # fmt: skip
    line = planning.annotation(d)
    # the title of `check --output-format github`, as ruff titles its own `ruff (CODE)`
    assert line == (
        "::error file=a%2Cb%3Ac.yaml,line=3,col=17,endLine=3,endColumn=19,"
        "title=fp8lint (FP8104)::50%25 off%0D%0Anext: \\x1b[31mline"
    )
    report = Report([d], files_seen=1)
    assert github_format.render(report).splitlines()[1] == line
    info = Diagnostic("FP8102", "n", Severity.INFO, "m", "x.yaml", 2, 1, 4, 1)
    assert planning.annotation(info) == (
        "::notice file=x.yaml,line=2,endLine=4,title=fp8lint (FP8102)::m"
    )


def test_rate_limit_waits_and_pagination_host() -> None:
    client = github.GitHubClient("https://api.example", TOKEN, clock=lambda: 1000.0)
    wait = client._rate_limit_wait
    assert wait(403, {"Retry-After": "7"}, b"") == 7.0
    assert wait(429, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"}, b"") == 30.0
    # a primary limit that lifts in an hour: the real wait (the client does not wait that long)
    assert wait(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "4600"}, b"") == 3600.0
    assert wait(403, {}, b'{"message": "You have exceeded a secondary rate limit"}') == 60.0
    assert wait(403, {}, b'{"message": "Resource not accessible by integration"}') is None
    assert wait(404, {"Retry-After": "1"}, b"") is None
    link = '<https://api.example/x?page=1>; rel="prev", <https://api.example/x?page=3>; rel="next"'
    assert client._next_url(link) == "https://api.example/x?page=3"
    assert client._next_url('<https://api.example/x?page=9>; rel="last"') is None
    with pytest.raises(github.GitHubError, match="left the API host"):
        client._next_url('<https://evil.example/x?page=2>; rel="next"')


def test_action_yml() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert {k: inputs[k]["default"] for k in inputs} == {
        "paths": ".",
        "sarif": "false",
        "review": "true",
        "fail-on": "warning",
    }  # no `version`: installing a package by name would take whoever owns the name
    steps = action["runs"]["steps"]
    assert all("shell" in s for s in steps if "run" in s)
    install = next(s for s in steps if s["name"] == "Install fp8lint")
    # a venv of its own, not the runner's Python (no PEP 668 override)
    assert install["run"].startswith('venv="$RUNNER_TEMP/fp8lint-venv"\npython3 -m venv "$venv"\n')
    pip = '"$bin/python" -m pip install --quiet --no-compile "$GITHUB_ACTION_PATH"'
    assert pip in install["run"]
    assert "PIP_BREAK_SYSTEM_PACKAGES" not in json.dumps(install)
    text = json.dumps(steps)
    assert "github/codeql-action/upload-sarif@v3" in text
    assert '\\"$FP8LINT\\" review' in text and "--output-format github" in text
    assert "${{ github.token }}" in text and "setup-python" not in text


def test_review_is_a_cli_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["review", "--repo", "a/b", "--pr", "3", "--dry-run"])
    assert (args.command, args.repo, args.pr, args.max_comments) == ("review", "a/b", 3, 30)
    assert cli_main(["review", "--repo", "nope", "--token-env", "FP8LINT_NO_SUCH_VAR"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fp8lint: error: ") and err.count("\n") == 1


# --------------------------------------------------------------------------- the flow


def test_first_run_posts_one_review_and_the_summary(
    rv: Runner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rv() == 1  # FP8104 is an error, FP8101 a warning
    pr = "/repos/acme/train/pulls/7"
    assert gh.calls() == [
        f"GET {pr}/files?per_page=100",
        f"GET {pr}/files?page=2&per_page=2",
        f"GET {pr}/files?page=3&per_page=2",
        "GET /user",
        f"GET {pr}/comments?per_page=100",
        f"GET {SUMMARIES}?per_page=100",
        f"POST {REVIEWS}",
        f"POST {SUMMARIES}",
    ]
    for r in gh.requests:
        h = {k.lower(): v for k, v in r.headers.items()}
        assert h["authorization"] == f"Bearer {TOKEN}"
        assert h["accept"] == "application/vnd.github+json"
        assert h["x-github-api-version"] == "2022-11-28"

    m, two = diag("configs/m.yaml", "FP8101"), diag("configs/two.yaml", "FP8104")
    posted = gh.requests[6].body
    assert posted == {
        "commit_id": HEAD,
        "event": "COMMENT",
        "body": "fp8lint found 2 new findings on lines this pull request changes.",
        "comments": [
            {
                "path": "configs/m.yaml",
                "line": 2,
                "side": "RIGHT",
                "body": expected_body(
                    m,
                    FP_M,
                    "  --fp8-format: hybrid\n  --fp8-amax-history-len: 1024\n"
                    "  --fp8-amax-compute-algo: max",
                ),
            },
            {
                "path": "configs/two.yaml",
                "line": 3,
                "side": "RIGHT",
                "body": expected_body(two, FP_TWO, "  --fp8-margin: 0"),
            },
        ],
    }
    summary = gh.requests[7].body["body"]
    assert summary.startswith("<!-- fp8lint:summary -->\n\n## fp8lint\n\n")
    assert "**3 findings** in 3 changed files (2 errors, 1 warning) at 0123456." in summary
    assert "| `FP8101` zero-headroom | warning | 1 |" in summary
    assert "| `FP8104` negative-margin | error | 2 |" in summary
    top, outside = summary.split("### Top findings")[1].split("### Outside the diff")
    assert top.index("configs/other.yaml:5") < top.index("configs/m.yaml:2")  # errors first
    assert "- `configs/other.yaml:5` **FP8104** (negative-margin) [error]: " in outside
    assert "configs/m.yaml" not in outside and "configs/two.yaml" not in outside
    assert "# fp8lint: ignore[FP8101]" in summary and "baseline" in summary
    assert "`fp8lint rule FP8101`, `fp8lint rule FP8104`" in summary
    assert [c["body"] for c in gh.issue_comments] == [summary]
    assert len(ours(gh)) == 2
    out, err = capsys.readouterr()
    assert out == "fp8lint review: 3 findings, 2 new inline comments, 0 deleted, 0 resolved\n"
    assert err == ""


def test_rerun_after_a_fix_deletes_the_stale_comment(
    rv: Runner, gh: FakeGitHub, tree: Path
) -> None:
    assert rv() == 1
    two_comment = next(c for c in ours(gh) if c["path"] == "configs/two.yaml")
    summary_id = gh.issue_comments[0]["id"]
    (tree / "configs" / "two.yaml").write_text(TWO_FIXED)
    gh.files[3].patch = TWO_FIXED_PATCH

    assert rv() == 1  # FP8104 is still in other.yaml
    writes = [(r.method, r.path) for r in gh.writes()]
    assert writes == [
        ("DELETE", f"/repos/acme/train/pulls/comments/{two_comment['id']}"),
        ("PATCH", f"/repos/acme/train/issues/comments/{summary_id}"),
    ]
    assert [(c["path"], c["line"]) for c in ours(gh)] == [("configs/m.yaml", 2)]
    assert len(gh.issue_comments) == 1
    assert "**2 findings** in 2 changed files" in gh.issue_comments[0]["body"]

    # nothing changed: nothing is written at all (the summary is already up to date)
    assert rv() == 1
    assert gh.writes() == []


def test_stale_comment_with_a_reply_gets_one_resolved_reply(
    rv: Runner, gh: FakeGitHub, tree: Path
) -> None:
    assert rv() == 1
    two_comment = next(c for c in ours(gh) if c["path"] == "configs/two.yaml")
    gh.add_review_comment("alice", "is -1 on purpose?", "configs/two.yaml", 3, two_comment["id"])
    (tree / "configs" / "two.yaml").write_text(TWO_FIXED)
    gh.files[3].patch = TWO_FIXED_PATCH

    assert rv() == 1
    writes = gh.writes()
    assert (writes[0].method, writes[0].path) == (
        "POST",
        f"/repos/acme/train/pulls/7/comments/{two_comment['id']}/replies",
    )
    assert writes[0].body == {
        "body": "Resolved: fp8lint no longer reports this at 0123456.\n\n<!-- fp8lint:resolved -->"
    }
    assert [r.method for r in writes] == ["POST", "PATCH"]
    assert any(c["id"] == two_comment["id"] for c in gh.review_comments)  # not deleted

    assert rv() == 1  # the reply exists: no second one
    assert gh.writes() == []


def test_existing_comments_across_pages_are_not_reposted(
    rv: Runner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(5):
        gh.add_review_comment("alice", f"nit {i}", "configs/m.yaml", 1)
    # the bot's earlier comment on m.yaml sits on the third page, another bot's look-alike
    # (same marker, other author) on the fourth
    gh.add_review_comment("fp8lint-bot", f"old\n\n<!-- fp8lint:fp={FP_M} -->", "configs/m.yaml", 2)
    gh.add_review_comment("someone", f"<!-- fp8lint:fp={FP_TWO} -->", "configs/two.yaml", 3)
    gh.add_issue_comment("someone", "<!-- fp8lint:summary --> not ours")
    gh.add_issue_comment("alice", "lgtm")
    gh.add_issue_comment("fp8lint-bot", "<!-- fp8lint:summary -->\nold summary")
    sticky = gh.issue_comments[-1]["id"]

    assert rv() == 1
    pr = "/repos/acme/train/pulls/7"
    comment_pages = [c for c in gh.calls() if c.startswith(f"GET {pr}/comments")]
    assert comment_pages == [f"GET {pr}/comments?per_page=100"] + [
        f"GET {pr}/comments?page={n}&per_page=2" for n in (2, 3, 4)
    ]
    assert [c for c in gh.calls() if c.startswith(f"GET {SUMMARIES}")] == [
        f"GET {SUMMARIES}?per_page=100",
        f"GET {SUMMARIES}?page=2&per_page=2",
    ]
    review_post, summary_patch = gh.writes()
    assert [c["path"] for c in review_post.body["comments"]] == ["configs/two.yaml"]
    assert review_post.body["body"].startswith("fp8lint found 1 new finding on")
    assert (summary_patch.method, summary_patch.path) == (
        "PATCH",
        f"/repos/acme/train/issues/comments/{sticky}",
    )
    assert capsys.readouterr().out.endswith("1 new inline comment, 0 deleted, 0 resolved\n")


def test_max_comments_sends_the_rest_to_the_summary(rv: Runner, gh: FakeGitHub) -> None:
    assert rv("--max-comments", "1") == 1
    review_post, summary = gh.writes()
    assert [c["path"] for c in review_post.body["comments"]] == ["configs/m.yaml"]
    assert "1 more is listed only in the summary comment" in review_post.body["body"]
    rest = summary.body["body"].split("### Not commented inline")[1]
    assert "`configs/two.yaml:3` **FP8104**" in rest


def test_fork_falls_back_to_annotations_and_summary(
    rv: Runner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.fork = True
    assert rv() == 1  # the findings decide, not the permission problem
    assert [r.method for r in gh.writes()] == ["POST"]  # the first write failed: stop
    out, err = capsys.readouterr()
    assert out.startswith("<!-- fp8lint:summary -->\n\n## fp8lint\n")
    annotations = [line for line in out.splitlines() if line.startswith("::")]
    assert annotations[0].startswith(
        "::warning file=configs/m.yaml,line=2,col=17,endLine=2,endColumn=23,"
        "title=fp8lint (FP8101)::"
    )
    assert [a.split(" ", 1)[1].split(",title")[0] for a in annotations] == [
        "file=configs/m.yaml,line=2,col=17,endLine=2,endColumn=23",
        "file=configs/other.yaml,line=5,col=17,endLine=5,endColumn=19",
        "file=configs/two.yaml,line=3,col=17,endLine=3,endColumn=19",
    ]
    assert err.count("\n") == 1 and "HTTP 403" in err and "Traceback" not in err
    assert TOKEN not in out + err

    assert rv("--exit-zero", "--no-annotations") == 0
    out, _ = capsys.readouterr()
    assert "::" not in out.replace("<!--", "")


def test_fork_fallback_writes_the_step_summary(
    rv: Runner, gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.fork = True
    step_summary = tree.parent / "step-summary.md"
    assert rv(env={**rv.env(), "GITHUB_STEP_SUMMARY": str(step_summary)}) == 1
    assert step_summary.read_text().startswith("<!-- fp8lint:summary -->")


def test_clean_pull_request_posts_nothing(rv: Runner, gh: FakeGitHub) -> None:
    gh.files = [PrFile("README.md", "@@ -1 +1 @@\n-old\n+new")]
    assert rv() == 0
    assert gh.writes() == []


def test_all_fixed_updates_the_summary_to_all_clear(rv: Runner, gh: FakeGitHub, tree: Path) -> None:
    assert rv() == 1
    gh.files = [f for f in gh.files if f.filename in ("README.md", "configs/two.yaml")]
    (tree / "configs" / "two.yaml").write_text(TWO_FIXED)
    gh.files[1].patch = TWO_FIXED_PATCH
    m_comment = next(c for c in ours(gh) if c["path"] == "configs/m.yaml")
    assert rv() == 0
    writes = gh.writes()
    assert [(r.method, r.path.rsplit("/", 1)[0]) for r in writes] == [
        ("DELETE", "/repos/acme/train/pulls/comments"),
        ("DELETE", "/repos/acme/train/pulls/comments"),
        ("PATCH", "/repos/acme/train/issues/comments"),
    ]
    assert writes[0].path.endswith(f"/{m_comment['id']}")
    assert writes[2].body == {
        "body": "<!-- fp8lint:summary -->\n\n## fp8lint\n\n"
        "No findings in the changed files at 0123456. :white_check_mark:\n"
    }
    assert ours(gh) == []


def test_links_out_of_the_checkout_are_not_read(rv: Runner, gh: FakeGitHub, tree: Path) -> None:
    (tree.parent / "secret.yaml").write_text(TWO_YAML)
    (tree / "configs" / "link.yaml").symlink_to(tree.parent / "secret.yaml")
    gh.files = [PrFile("configs/link.yaml", "@@ -0,0 +1 @@\n+../../secret.yaml", "added")]
    assert rv() == 0
    assert gh.writes() == []


def test_actions_token_falls_back_to_the_actions_login(rv: Runner, gh: FakeGitHub) -> None:
    gh.user_forbidden = True
    gh.login = "github-actions[bot]"
    assert rv() == 1
    assert [r.method for r in gh.writes()] == ["POST", "POST"]
    assert rv() == 1  # its own comments and summary are recognised
    assert [r.method for r in gh.writes()] == []


def test_secondary_rate_limit_is_retried(rv: Runner, gh: FakeGitHub) -> None:
    gh.rate_limit_once = True
    assert rv() == 1
    assert rv.sleeps == [1.0]
    assert gh.calls()[:2] == [
        "GET /repos/acme/train/pulls/7/files?per_page=100",
        "GET /repos/acme/train/pulls/7/files?per_page=100",
    ]
    assert [r.method for r in gh.writes()] == ["POST", "POST"]


def test_dry_run_posts_nothing(
    rv: Runner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rv("--dry-run") == 1
    assert gh.writes() == []
    out = capsys.readouterr().out
    assert f"would POST {REVIEWS}\n" in out and f"would POST {SUMMARIES}\n" in out
    assert f"<!-- fp8lint:fp={FP_M} -->" in out


def test_flags_override_the_environment(rv: Runner, gh: FakeGitHub) -> None:
    env = {"MY_TOKEN": TOKEN}
    argv = ["--repo", "acme/train", "--pr", "7", "--sha", HEAD, "--api-url", gh.url + "/"]
    assert rv(*argv, "--token-env", "MY_TOKEN", env=env) == 1
    assert gh.writes()[0].body["commit_id"] == HEAD


def test_head_sha_is_asked_for_when_not_given(rv: Runner, gh: FakeGitHub) -> None:
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": gh.url}
    assert rv("--repo", "acme/train", "--pr", "7", env=env) == 1
    assert gh.calls()[0] == "GET /repos/acme/train/pulls/7"
    assert gh.writes()[0].body["commit_id"] == HEAD


def test_an_error_before_the_findings_exits_2_on_one_line_without_the_token(
    rv: Runner, gh: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    # the files cannot be listed: there are no findings to show, so this is an error
    gh.echo_auth_in_errors = True  # the server even repeats the header: still redacted
    gh.token = "something-else"
    assert rv() == 2
    out, err = capsys.readouterr()
    assert err.startswith("fp8lint: error: GitHub API: ")
    assert err.count("\n") == 1 and "HTTP 401: Bad credentials" in err
    assert "Traceback" not in err
    assert TOKEN not in out + err
    assert "Bearer ***" in err  # the echoed header was redacted


def test_token_is_not_in_the_output_of_a_whole_session(
    rv: Runner, gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rv()
    rv("--dry-run")
    gh.fork = True
    rv()
    out, err = capsys.readouterr()
    assert TOKEN not in out + err
    assert TOKEN not in repr(github.GitHubClient(gh.url, TOKEN, sleep=lambda s: None))
