"""`fp8lint review`: lint a pull request's changed files and review it on GitHub.

The flow follows reviewdog's `github-pr-review` reporter:

1. list the PR's files and, from their patches, the lines a review comment may sit on
   (right side: added and context lines);
2. lint the changed files as they are in the working tree (the head is checked out);
3. post one review with an inline comment per new finding on a commentable line (at most
   `--max-comments`), each carrying a hidden fingerprint so that re-runs do not repeat it;
4. delete the bot's comments whose finding is gone, or reply "resolved" when people replied;
5. keep one sticky summary comment (all findings, those outside the diff, how to suppress).

Once the changed files are linted, no API failure loses the findings or sets the exit code
(that follows `--fail-on`).  A 403 or 404 on a write (a fork's read-only token) stops the
writes; another failure (a 422, a 5xx left after the client's retries, a network error)
skips that write and goes on: when the review is refused, the summary comment lists its
findings.  When the summary cannot be posted, it and workflow-command annotations go to
standard output; after any failure the summary goes to `$GITHUB_STEP_SUMMARY` too.  One
line on standard error names the failed calls and their status, never the server's answer
(it may echo what it was sent) nor the token.  Only a failure before the findings are
known (the pull request's files cannot be read) exits 2.

This module holds the command (arguments, inputs, the run); the HTTP client and the
content of the review are in `fp8lint.review.client` and `fp8lint.review.plan`, imported only
when a review runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from fp8lint.settings import FAIL_LEVELS

if TYPE_CHECKING:  # imported when a review runs: `build_parser` imports this module
    from fp8lint.diagnostics import Diagnostic
    from fp8lint.review.client import GitHubClient, GitHubError
    from fp8lint.review.plan import Plan

DEFAULT_API_URL = "https://api.github.com"
ACTIONS_BOT = "github-actions[bot]"


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """The arguments of `fp8lint review`."""
    parser.add_argument("--repo", help="owner/name (default: $GITHUB_REPOSITORY)")
    parser.add_argument(
        "--pr", type=int, help="pull request number (default: from $GITHUB_EVENT_PATH)"
    )
    parser.add_argument(
        "--sha", help="head commit the review is about (default: from $GITHUB_EVENT_PATH)"
    )
    parser.add_argument(
        "--api-url", help=f"REST API root (default: $GITHUB_API_URL, else {DEFAULT_API_URL})"
    )
    parser.add_argument(
        "--token-env",
        default="GITHUB_TOKEN",
        metavar="NAME",
        help="environment variable holding the token (default: GITHUB_TOKEN)",
    )
    parser.add_argument(
        "--bot-login",
        default=None,
        help="the token's login, when `GET /user` cannot tell (default: asked, else "
        f"{ACTIONS_BOT})",
    )
    parser.add_argument(
        "--max-comments",
        type=int,
        default=30,
        help="most inline comments in one review; the rest go to the summary (default: 30)",
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_LEVELS,
        default=None,
        help="lowest severity that makes the exit code 1 (default: `fail-on` from the "
        "configuration, else warning)",
    )
    parser.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    parser.add_argument(
        "--annotations",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="print workflow-command annotations when the bot cannot write (default: on)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print what would be posted, post nothing"
    )


# --------------------------------------------------------------------------- running


class ReviewError(Exception):
    """A usage problem: missing repository, pull request, token."""


class Target:
    """Where to post: API root, repository, pull request, head commit, token."""

    def __init__(
        self, api_url: str, owner: str, repo: str, pr: int, sha: str | None, token: str | None
    ) -> None:
        self.api_url = api_url
        self.owner = owner
        self.repo = repo
        self.pr = pr
        self.sha = sha
        self.token = token

    def __repr__(self) -> str:  # never show the token
        return f"Target({self.api_url!r}, {self.owner!r}, {self.repo!r}, {self.pr})"


def resolve_target(args: argparse.Namespace, env: Mapping[str, str]) -> Target:
    event: dict[str, Any] = {}
    event_path = env.get("GITHUB_EVENT_PATH")
    if event_path and (args.pr is None or args.sha is None):
        try:
            with open(event_path, encoding="utf-8") as fh:
                loaded = json.load(fh)
            event = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError) as exc:
            raise ReviewError(f"cannot read the event file $GITHUB_EVENT_PATH: {exc}") from None
    pull = event.get("pull_request") if isinstance(event.get("pull_request"), dict) else {}
    assert isinstance(pull, dict)
    repo = args.repo or env.get("GITHUB_REPOSITORY") or ""
    owner, slash, name = repo.partition("/")
    if not slash or not owner or not name or "/" in name:
        raise ReviewError("give the repository as owner/name (--repo or $GITHUB_REPOSITORY)")
    pr = args.pr if args.pr is not None else pull.get("number", event.get("number"))
    if not isinstance(pr, int) or pr < 1:
        raise ReviewError(
            "no pull request number: give --pr, or run on a pull_request event ($GITHUB_EVENT_PATH)"
        )
    head = pull.get("head") if isinstance(pull.get("head"), dict) else {}
    assert isinstance(head, dict)
    sha = args.sha or head.get("sha") or None
    from fp8lint.review.client import api_url_problem, clean_token

    api_url = args.api_url or env.get("GITHUB_API_URL") or DEFAULT_API_URL
    problem = api_url_problem(api_url)
    if problem is not None:  # the value is not shown: it may come from the environment
        raise ReviewError(f"the API URL (--api-url or $GITHUB_API_URL) {problem}")
    try:
        token = clean_token(env.get(args.token_env))
    except ValueError as exc:
        raise ReviewError(f"the token in ${args.token_env} {exc}") from None
    if token is None and not args.dry_run:
        raise ReviewError(f"no token: set ${args.token_env} (or name another with --token-env)")
    if args.max_comments < 0:
        raise ReviewError("--max-comments must be 0 or more")
    return Target(api_url, owner, name, pr, str(sha) if sha else None, token)


def bot_login(client: GitHubClient, override: str | None, has_token: bool) -> str:
    from fp8lint.review.client import GitHubError

    if override:
        return override
    if not has_token:
        return ACTIONS_BOT
    try:
        user = client.request("GET", "/user")
    except GitHubError as exc:
        if exc.status in (403, 404):  # the Actions app's GITHUB_TOKEN cannot read /user
            return ACTIONS_BOT
        raise
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def lint_changed(paths: Iterable[str]) -> tuple[list[Diagnostic], dict[str, str]]:
    """Findings in the changed files that exist here, and the texts they refer to."""
    from fp8lint.engine import FileProblem, read_file, run
    from fp8lint.engine.config import Resolver
    from fp8lint.engine.files import file_kind, walk_passes_over
    from fp8lint.settings import RunSettings

    here = os.path.realpath(".")
    existing = [
        p
        for p in paths
        if os.path.isfile(p)
        and not walk_passes_over(p)  # a vendored `.github/actions/...` copy, as `check .`
        and file_kind(p) is not None
        # a link out of the checkout must not put another file's lines into a comment
        and os.path.commonpath([here, os.path.realpath(p)]) == here
    ]
    if not existing:
        return [], {}
    # the repository's configuration applies, as for `fp8lint check`
    diags = run(existing, RunSettings(), None, Resolver()).diagnostics
    texts: dict[str, str] = {}
    for path in {d.path for d in diags}:
        try:
            decoded = read_file(path, RunSettings().max_bytes)
        except FileProblem:
            continue
        if decoded is not None:
            texts[path] = decoded.text
    return diags, texts


def main(
    args: argparse.Namespace,
    *,
    sleep: Callable[[float], None] = time.sleep,
    env: Mapping[str, str] | None = None,
    stdout: TextIO | None = None,
) -> int:
    """`fp8lint review`: 0 clean, 1 findings at or above --fail-on, 2 errors."""
    from fp8lint.review.client import GitHubClient, GitHubError

    env = os.environ if env is None else env
    out = stdout or sys.stdout
    try:
        target = resolve_target(args, env)
    except ReviewError as exc:
        print(f"fp8lint: error: {exc}", file=sys.stderr)
        return 2
    client = GitHubClient(target.api_url, target.token, sleep=sleep)
    try:
        return _review(args, target, client, env, out)
    except ReviewError as exc:
        print(f"fp8lint: error: {exc}", file=sys.stderr)
        return 2
    except GitHubError as exc:
        print(f"fp8lint: error: GitHub API: {client.redact(str(exc))}", file=sys.stderr)
        return 2


def _review(
    args: argparse.Namespace,
    target: Target,
    client: GitHubClient,
    env: Mapping[str, str],
    out: TextIO,
) -> int:
    from fp8lint.review import plan as planning
    from fp8lint.review.client import GitHubError

    base = f"/repos/{target.owner}/{target.repo}"
    pr = target.pr
    sha = target.sha
    if not sha:
        pull = client.request("GET", f"{base}/pulls/{pr}")
        head = pull.get("head") if isinstance(pull, dict) else None
        found = head.get("sha") if isinstance(head, dict) else None
        if not isinstance(found, str) or not found:
            raise ReviewError("cannot tell the pull request's head commit; give --sha")
        sha = found
    # API data of the wrong shape is skipped, never a crash: entries without a filename too
    files = [
        f
        for f in client.paginate(f"{base}/pulls/{pr}/files")
        if isinstance(f, dict)
        and isinstance(f.get("filename"), str)
        and f["filename"]
        and f.get("status") != "removed"
    ]
    changed = [f["filename"] for f in files]
    lines_by_path = {
        f["filename"]: planning.commentable_lines(
            f.get("patch") if isinstance(f.get("patch"), str) else None
        )
        for f in files
    }
    diags, texts = lint_changed(changed)
    status = _exit_status(diags, args)
    try:
        login = bot_login(client, args.bot_login, target.token is not None)
        review_comments = _objects(client.paginate(f"{base}/pulls/{pr}/comments"))
        issue_comments = _objects(client.paginate(f"{base}/issues/{pr}/comments"))
    except GitHubError as exc:
        # what is posted already is unknown: writing now could repeat it, so nothing is written
        plan = planning.make_plan(
            diags, lines_by_path, texts, [], [], ACTIONS_BOT, sha, args.max_comments
        )
        _failed(client, [exc], posted=False)
        _fallback(plan, sha, diags, args.annotations, env, out, posted=False)
        return status
    plan = planning.make_plan(
        diags,
        lines_by_path,
        texts,
        review_comments,
        issue_comments,
        login,
        sha,
        args.max_comments,
    )
    writes = _writes(plan, base, pr) + _summary_write(plan, base, pr)
    if args.dry_run:
        for method, path, body in writes:
            print(f"would {method} {path}", file=out)
            if body is not None:
                print(json.dumps(body, indent=2, ensure_ascii=False), file=out)
        if not writes:
            print("nothing to post", file=out)
        return status
    failures: list[GitHubError] = []
    summary_posted = plan.summary_body is None  # None: the sticky one is up to date
    for method, path, body in _writes(plan, base, pr):
        try:
            client.request(method, path, body)
        except GitHubError as exc:
            if method == "DELETE" and exc.status == 404:
                continue  # someone deleted it already
            failures.append(exc)
            if exc.forbidden:
                break  # a read-only token: every other write is refused too
            if path.endswith("/reviews"):
                planning.without_review(plan, sha)  # the summary lists them instead
    if not any(exc.forbidden for exc in failures):
        for method, path, body in _summary_write(plan, base, pr):
            try:
                client.request(method, path, body)
                summary_posted = True
            except GitHubError as exc:
                failures.append(exc)
                summary_posted = False
    else:
        summary_posted = False
    if failures:
        _failed(client, failures, posted=summary_posted)
        _fallback(plan, sha, diags, args.annotations, env, out, posted=summary_posted)
        return status
    n, new = len(diags), len(plan.new_comments)
    print(
        f"fp8lint review: {n} finding{'s' if n != 1 else ''}, "
        f"{new} new inline comment{'s' if new != 1 else ''}, "
        f"{len(plan.deletes)} deleted, {len(plan.replies)} resolved",
        file=out,
    )
    return status


def _objects(items: Iterable[Any]) -> list[dict[str, Any]]:
    """The JSON objects of an API list (anything else in it is no comment)."""
    return [item for item in items if isinstance(item, dict)]


def _writes(plan: Plan, base: str, pr: int) -> list[tuple[str, str, Any]]:
    writes: list[tuple[str, str, Any]] = []
    if plan.review is not None:
        writes.append(("POST", f"{base}/pulls/{pr}/reviews", plan.review))
    for cid in plan.deletes:
        writes.append(("DELETE", f"{base}/pulls/comments/{cid}", None))
    for cid, body in plan.replies:
        writes.append(("POST", f"{base}/pulls/{pr}/comments/{cid}/replies", {"body": body}))
    return writes


def _summary_write(plan: Plan, base: str, pr: int) -> list[tuple[str, str, Any]]:
    writes: list[tuple[str, str, Any]] = []
    if plan.summary_body is not None:
        if plan.summary_id is None:
            writes.append(("POST", f"{base}/issues/{pr}/comments", {"body": plan.summary_body}))
        else:
            writes.append(
                ("PATCH", f"{base}/issues/comments/{plan.summary_id}", {"body": plan.summary_body})
            )
    return writes


def _failed(client: GitHubClient, failures: Sequence[GitHubError], *, posted: bool) -> None:
    """One line on standard error: which calls failed, how, and where the findings are."""
    calls = "; ".join(_failure(client, exc) for exc in failures)
    if all(exc.forbidden for exc in failures):
        head = f"fp8lint: cannot write to the pull request ({calls})"
    else:
        head = f"fp8lint: GitHub API failed ({calls})"
    where = "the findings are in the summary comment" if posted else "printing the findings instead"
    print(f"{head}; {where}", file=sys.stderr)


def _failure(client: GitHubClient, exc: GitHubError) -> str:
    """`METHOD path: HTTP status`; the reason only when it is not the server's own text."""
    what = f"{exc.method} {exc.path}"
    if exc.status:
        what += f": HTTP {exc.status}" + (", rate limited" if exc.rate_limited else "")
    if not exc.from_server:
        what += f": {client.redact(exc.reason)}"
    return what


def _fallback(
    plan: Plan,
    sha: str,
    diags: Sequence[Diagnostic],
    annotations: bool,
    env: Mapping[str, str],
    out: TextIO,
    *,
    posted: bool,
) -> None:
    """A write failed: unless the summary comment got posted, it and the annotations go to
    the log; the step summary gets it in any case."""
    from fp8lint.review.plan import annotation, summary_body

    body = plan.summary_body or summary_body(plan, sha)
    if not posted:
        out.write(body)
        if annotations:
            for d in diags:
                print(annotation(d), file=out)
    step_summary = env.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as fh:
                fh.write(body)
        except OSError:
            pass


def _exit_status(diags: Sequence[Diagnostic], args: argparse.Namespace) -> int:
    if args.exit_zero:
        return 0
    fail_on = args.fail_on
    if fail_on is None:
        from fp8lint.engine.config import Resolver

        fail_on = Resolver().for_path(".").fail_on or "warning"
    threshold = FAIL_LEVELS.index(fail_on)
    return 1 if any(d.severity.rank >= threshold for d in diags) else 0
