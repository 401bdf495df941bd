"""`fp8lint review` against hostile servers and inputs: the token must not leave the API's
origin or reach the output (whole or in pieces), and bad API data must not crash the bot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fp8lint.arguments import build_parser
from fp8lint.cli import main as cli_main
from fp8lint.review import client as github
from fp8lint.review import command as review

from ..fake_github import FakeGitHub, PrFile, Recorder
from .test_review import FP_M, HEAD, M_PATCH, REVIEWS, SUMMARIES, TWO_PATCH

TOKEN = "ghp_R7vQ2mXk9LwT4bZs8NcJ6hYd3FpGe5Ua"


def NO_SLEEP(seconds: float) -> None:
    """The retries' waits, skipped: what is asserted here is the text, not the timing."""


FILES = "/repos/acme/train/pulls/7/files"


def fragments(text: str, token: str = TOKEN) -> set[str]:
    """The 8-character pieces of the token that occur in `text` (a whole token is one too)."""
    pieces = {token[i : i + 8] for i in range(len(token) - 7)}
    return {text[i : i + 8] for i in range(len(text) - 7)} & pieces


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    fake = FakeGitHub(token=TOKEN, head_sha=HEAD).start()
    fake.files = [
        PrFile("configs/m.yaml", M_PATCH, "added"),
        PrFile("configs/two.yaml", TWO_PATCH),
    ]
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def other() -> Iterator[Recorder]:
    recorder = Recorder().start()
    try:
        yield recorder
    finally:
        recorder.stop()


def environment(gh: FakeGitHub, tree: Path, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "acme/train",
        "GITHUB_EVENT_PATH": str(tree.parent / "event.json"),
        "GITHUB_API_URL": gh.url,
        **extra,
    }


def run(env: dict[str, str], *argv: str) -> int:
    args = build_parser().parse_args(["review", *argv])
    return review.main(args, sleep=lambda s: None, env=env)


def cli(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *argv: str) -> int:
    """The whole command line, so that an unexpected exception shows as the CLI prints it."""
    for name in ("GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_STEP_SUMMARY", "FP8LINT_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return cli_main(["review", *argv])


def authorizations(gh: FakeGitHub) -> set[str]:
    return {v for r in gh.requests for k, v in r.headers.items() if k.lower() == "authorization"}


# --------------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed(
    gh: FakeGitHub,
    other: Recorder,
    tree: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
) -> None:
    gh.redirects = [(FILES, status, other.url + FILES)]
    assert run(environment(gh, tree)) == 2
    assert other.requests == [] and not other.got_authorization()
    out, err = capsys.readouterr()
    assert err.startswith(f"fp8lint: error: GitHub API: GET {FILES}: HTTP {status}: ")
    assert err.count("\n") == 1
    if status != 303:
        assert "another origin" in err
    assert fragments(out + err) == set()


def test_a_write_redirected_to_another_origin_is_not_followed(
    gh: FakeGitHub, other: Recorder, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.redirects = [(REVIEWS, 307, other.url + REVIEWS)]
    assert run(environment(gh, tree)) == 1  # the findings decide; the summary is posted
    assert other.requests == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "HTTP 307: redirected to another origin" in err


def test_another_scheme_is_another_origin(gh: FakeGitHub) -> None:
    client = github.GitHubClient(gh.url, TOKEN, sleep=NO_SLEEP)
    gh.redirects = [("/user", 302, gh.url.replace("http://", "https://") + "/user")]
    with pytest.raises(github.GitHubError, match="another origin"):
        client.request("GET", "/user")
    assert len(gh.requests) == 1


def test_a_same_origin_redirect_is_followed_verbatim(
    gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a renamed repository: GitHub answers its old name with a redirect to the new one
    gh.redirects = [("/repos/acme/old/", 307, gh.url + "/repos/acme/train/")]
    assert run(environment(gh, tree, GITHUB_REPOSITORY="acme/old")) == 1
    methods = [(r.method, r.path) for r in gh.requests if r.path.startswith("/repos/acme/train")]
    assert ("POST", REVIEWS) in methods and ("POST", SUMMARIES) in methods
    review_post = next(r for r in gh.requests if (r.method, r.path) == ("POST", REVIEWS))
    assert review_post.body["commit_id"] == HEAD and len(review_post.body["comments"]) == 2
    assert authorizations(gh) == {f"Bearer {TOKEN}"}
    assert capsys.readouterr().err == ""


def test_a_redirect_loop_stops(gh: FakeGitHub) -> None:
    gh.redirects = [("/loop", 302, "/loop")]  # a relative Location, resolved against the URL
    with pytest.raises(github.GitHubError, match="too many redirects"):
        github.GitHubClient(gh.url, TOKEN, sleep=NO_SLEEP).request("GET", "/loop")
    assert 2 <= len(gh.requests) <= 10


def test_plain_http_never_goes_through_a_proxy(
    gh: FakeGitHub, other: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", other.url)  # a proxy would see the header in clear
    monkeypatch.setenv("HTTP_PROXY", other.url)
    assert github.GitHubClient(gh.url, TOKEN, sleep=NO_SLEEP).request("GET", "/user") == {
        "login": gh.login,
        "type": "User",
    }
    assert other.requests == [] and authorizations(gh) == {f"Bearer {TOKEN}"}


# --------------------------------------------------------------------------- error text


def test_the_300_character_cut_comes_after_redaction(gh: FakeGitHub) -> None:
    client = github.GitHubClient(gh.url, TOKEN, sleep=NO_SLEEP)
    gh.fail[("GET", "/user")] = 500
    gh.echo_auth_in_errors = True  # the message ends `(got 'Bearer <token>')`
    before = len(" (got 'Bearer ")
    for pad in range(300 - before - len(TOKEN) - 2, 300 - before + 2):
        gh.error_message = "x" * pad  # the token straddles the 300th character
        with pytest.raises(github.GitHubError) as info:
            client.request("GET", "/user")
        exc = info.value
        assert fragments(str(exc)) == set() and fragments(repr(exc)) == set(), pad
        assert len(exc.reason) <= 300
        if pad + before + 3 <= 300:
            assert exc.reason.endswith(" (got 'Bearer ***')"[: 300 - pad]), pad


def test_a_piece_of_the_token_is_redacted(gh: FakeGitHub) -> None:
    client = github.GitHubClient(gh.url, TOKEN, sleep=NO_SLEEP)
    gh.fail[("GET", "/user")] = 500
    gh.error_message = f"the header began {TOKEN[:12]}... and ended ...{TOKEN[-9:]}"
    with pytest.raises(github.GitHubError) as info:
        client.request("GET", "/user")
    assert info.value.reason == "the header began ***... and ended ...***"
    assert client.redact("short pieces stay: " + TOKEN[:7]) == "short pieces stay: " + TOKEN[:7]


def test_an_echoed_token_at_the_cut_is_not_printed(
    gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.fail[("POST", SUMMARIES)] = 500
    gh.echo_auth_in_errors = True
    gh.error_message = "x" * (300 - len(" (got 'Bearer ") - 12)  # 12 characters before the cut
    assert run(environment(gh, tree)) == 1  # the findings decide, not the API error
    out, err = capsys.readouterr()
    assert err == (
        f"fp8lint: GitHub API failed (POST {SUMMARIES}: HTTP 500); printing the findings instead\n"
    )  # the server's answer is not repeated at all
    assert fragments(out + err) == set()


# --------------------------------------------------------------------------- the token


def test_a_token_saved_with_crlf_is_stripped(
    gh: FakeGitHub, tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(monkeypatch, environment(gh, tree, GITHUB_TOKEN=f" {TOKEN}\r\n")) == 1
    assert authorizations(gh) == {f"Bearer {TOKEN}"}
    out, err = capsys.readouterr()
    assert err == "" and fragments(out) == set()


@pytest.mark.parametrize("bad", [f"{TOKEN[:20]}\r{TOKEN[20:]}", f"{TOKEN}\x1b[0m", f"{TOKEN} é"])
def test_a_token_with_control_characters_is_refused_unshown(
    gh: FakeGitHub,
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    bad: str,
) -> None:
    assert cli(monkeypatch, environment(gh, tree, GITHUB_TOKEN=bad)) == 2
    assert gh.requests == []  # refused before any request
    out, err = capsys.readouterr()
    assert err.startswith("fp8lint: error: the token in $GITHUB_TOKEN ")
    assert err.count("\n") == 1 and "internal error" not in err
    assert fragments(out + err) == set() and fragments(out + err, bad) == set()


def test_a_blank_token_is_no_token(
    gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(environment(gh, tree, GITHUB_TOKEN=" \r\n")) == 2
    assert capsys.readouterr().err.startswith("fp8lint: error: no token: set $GITHUB_TOKEN")
    assert gh.requests == []


def test_the_client_refuses_a_bad_token_without_showing_it() -> None:
    with pytest.raises(ValueError) as info:
        github.GitHubClient("https://api.github.com", f"{TOKEN}\nX-Evil: 1")
    assert fragments(str(info.value)) == set()
    client = github.GitHubClient("https://api.github.com", f"\t{TOKEN}\r\n")
    assert client.redact(f"x{TOKEN}y") == "x***y"


# --------------------------------------------------------------------------- the API URL


@pytest.mark.parametrize(
    "url",
    [
        "http://api.github.example",
        "http://10.0.0.1:8080/api/v3",
        "ftp://127.0.0.1/",
        "file:///etc",
        "https:///no-host",
        "https://user:secret@api.github.example",
        "api.github.com",
        "https://api.github.example/\r\nX-Evil: 1",
    ],
)
def test_an_unsafe_api_url_is_refused_before_any_request(
    gh: FakeGitHub,
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
) -> None:
    sent: list[str] = []

    def no_request(self: Any, method: str, url: str, body: Any) -> Any:
        sent.append(url)
        raise AssertionError("a request was made")

    monkeypatch.setattr(github.GitHubClient, "_send", no_request)
    for env in (environment(gh, tree, GITHUB_API_URL=url), environment(gh, tree)):
        argv = ("--api-url", url) if env["GITHUB_API_URL"] != url else ()
        assert run(env, *argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("fp8lint: error: the API URL (--api-url or $GITHUB_API_URL) ")
        assert err.count("\n") == 1 and "secret" not in err and "example" not in err
    assert sent == []
    with pytest.raises(ValueError):
        github.GitHubClient(url, TOKEN)


@pytest.mark.parametrize(
    "url",
    [
        "https://api.github.com",
        "https://ghe.example/api/v3/",
        "HTTPS://API.GITHUB.COM",
        "http://127.0.0.1:8080",
        "http://127.0.0.2",
        "http://[::1]:9000/api",
        "http://localhost:3000",
    ],
)
def test_https_and_loopback_http_are_accepted(url: str) -> None:
    assert github.api_url_problem(url) is None
    assert github.GitHubClient(url, TOKEN).api_url == url.rstrip("/")


# --------------------------------------------------------------------------- bad API data


def test_malformed_files_entries_are_skipped(
    gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gh.raw_files = [
        {"status": "added", "patch": "@@ -0,0 +1 @@\n+x"},  # no filename
        {"filename": 7},
        {"filename": ["configs/m.yaml"]},
        {"filename": ""},
        "configs/m.yaml",
        None,
        {"filename": "configs/extra.yaml", "patch": 5, "status": "added"},
        {"filename": "configs/more.yaml", "patch": ["@@"], "status": None},
    ]
    assert run(environment(gh, tree)) == 1
    review_post, summary = [r for r in gh.requests if r.method != "GET"]
    assert [c["path"] for c in review_post.body["comments"]] == [
        "configs/m.yaml",
        "configs/two.yaml",
    ]
    assert (summary.method, summary.path) == ("POST", SUMMARIES)
    assert capsys.readouterr().err == ""


def test_malformed_comments_and_answers_are_skipped(
    gh: FakeGitHub, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = {"login": gh.login}
    gh.review_comments += [
        "junk",
        {"user": bot, "body": f"<!-- fp8lint:fp={FP_M} -->", "path": "configs/m.yaml"},  # no id
        {"id": "12", "user": bot, "body": f"<!-- fp8lint:fp={'a' * 64} -->"},  # a stale one
        {"id": 13, "user": bot, "body": "reply", "in_reply_to_id": [1]},
        {"id": 14, "user": "fp8lint-bot", "body": None},
    ]
    gh.issue_comments += [
        {"id": "x", "user": bot, "body": "<!-- fp8lint:summary -->"},
        {"id": None, "user": bot, "body": "<!-- fp8lint:summary -->"},
        [1, 2],
    ]
    assert run(environment(gh, tree)) == 1
    writes = [r for r in gh.requests if r.method != "GET"]
    assert [(r.method, r.path) for r in writes] == [("POST", REVIEWS), ("POST", SUMMARIES)]
    # the comment without an id still counts as posted: m.yaml is not commented on again
    assert [c["path"] for c in writes[0].body["comments"]] == ["configs/two.yaml"]
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "pull", [[], "sha", {"head": "abc"}, {"head": {"sha": 5}}, {"head": {"sha": ""}}]
)
def test_a_malformed_pull_request_answer_is_a_clear_error(
    gh: FakeGitHub,
    tree: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pull: Any,
) -> None:
    original = gh._answer

    def answer(method: str, path: str, *rest: Any) -> Any:
        if path == "/repos/acme/train/pulls/7" and method == "GET":
            return 200, {}, pull
        return original(method, path, *rest)

    monkeypatch.setattr(gh, "_answer", answer)
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": gh.url}
    assert run(env, "--repo", "acme/train", "--pr", "7") == 2
    err = capsys.readouterr().err
    assert err == "fp8lint: error: cannot tell the pull request's head commit; give --sha\n"


def test_a_malformed_user_answer_falls_back_to_the_actions_login(
    gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = gh._answer

    def answer(method: str, path: str, *rest: Any) -> Any:
        if path == "/user":
            return 200, {}, {"login": {"name": "x"}}
        return original(method, path, *rest)

    monkeypatch.setattr(gh, "_answer", answer)
    client = github.GitHubClient(gh.url, TOKEN, sleep=NO_SLEEP)
    assert review.bot_login(client, None, True) == review.ACTIONS_BOT
