"""An in-memory GitHub REST API on 127.0.0.1 for the `fp8lint review` tests.

It implements the endpoints the review bot uses, with GitHub's behaviour where it matters:
bearer-token authentication (401 otherwise), `Link`-header pagination with a small page
size, 422 for a review comment on a line outside the diff, replies, deletions, and the
issue comments of the sticky summary.  Modes: `fork` (403 on every write), `rate_limit_once`
(the first request gets a secondary-rate-limit 403), `user_forbidden` (`GET /user` answers
403, as for the Actions app's GITHUB_TOKEN).  For the security tests it can also redirect
(`redirects`), pad its error messages (`error_message`) and serve malformed files entries
(`raw_files`).  For the resilience tests, `fail` answers a call with an error status every
time, `flaky` answers its first tries with the given statuses and headers (a 500, a
secondary rate limit) and then as usual, and `drop` closes the connection without an
answer (a network error).  `Recorder` is a second server, another origin, that notes what
reaches it.  Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Answer = tuple[int, dict[str, str], Any]
DROP = 0  # the status of an answer that is never sent


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    headers: dict[str, str]


@dataclass
class PrFile:
    filename: str
    patch: str | None
    status: str = "modified"


def right_lines(patch: str | None) -> dict[int, int]:
    """Right-side line -> hunk of the lines a review comment may sit on (GitHub's rule)."""
    out: dict[int, int] = {}
    hunk, line = -1, 0
    for raw in (patch or "").splitlines():
        m = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
        if m:
            hunk, line = hunk + 1, int(m.group(1))
        elif hunk >= 0 and raw[:1] in ("+", " "):
            out[line] = hunk
            line += 1
    return out


def serve(
    handle: Callable[[str, str, dict[str, str], bytes], Answer],
) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """An HTTP server on 127.0.0.1 (a free port) whose answers come from `handle`."""

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            status, headers, body = handle(self.command, self.path, dict(self.headers.items()), raw)
            if status == DROP:  # no answer at all: the client sees the connection close
                self.close_connection = True
                return
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if data:
                self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    return server, thread


def stop(server: ThreadingHTTPServer | None, thread: threading.Thread | None) -> None:
    if server is not None:
        server.shutdown()
        server.server_close()
    if thread is not None:
        thread.join(timeout=5)


def url_of(server: ThreadingHTTPServer | None) -> str:
    assert server is not None
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


@dataclass
class Recorder:
    """Another origin (a second port): records every request and answers 200 with an echo
    of the headers it got, so that a client which followed a redirect here is caught."""

    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return url_of(self._server)

    def start(self) -> Recorder:
        self._server, self._thread = serve(self.handle)
        return self

    def stop(self) -> None:
        stop(self._server, self._thread)

    def handle(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Answer:
        split = urllib.parse.urlsplit(target)
        self.requests.append(
            Request(method, split.path, dict(urllib.parse.parse_qsl(split.query)), raw, headers)
        )
        return 200, {}, {"headers": headers}

    def got_authorization(self) -> bool:
        return any(k.lower() == "authorization" for r in self.requests for k in r.headers)


@dataclass
class FakeGitHub:
    token: str
    owner: str = "acme"
    repo: str = "train"
    number: int = 7
    head_sha: str = "0123456789abcdef0123456789abcdef01234567"
    login: str = "fp8lint-bot"  # the login the token belongs to
    page_size: int = 2
    fork: bool = False
    rate_limit_once: bool = False
    user_forbidden: bool = False
    echo_auth_in_errors: bool = False  # a misbehaving server: errors repeat the header
    error_message: str = "Server Error"  # the message of the `fail` answers
    # (path prefix, status, new prefix): a request under the prefix is redirected, the rest of
    # its path and its query kept; the new prefix may be another server's URL
    redirects: list[tuple[str, int, str]] = field(default_factory=list)
    files: list[PrFile] = field(default_factory=list)
    raw_files: list[Any] = field(default_factory=list)  # served as they are, after `files`
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    issue_comments: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    fail: dict[tuple[str, str], int] = field(default_factory=dict)  # (method, path) -> status
    # (method, path) -> the (status, headers) of its first answers, used up one per request
    flaky: dict[tuple[str, str], list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    drop: set[tuple[str, str]] = field(default_factory=set)
    _next_id: int = 1000
    _rate_limited: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return url_of(self._server)

    def start(self) -> FakeGitHub:
        self._server, self._thread = serve(self.handle)
        return self

    def stop(self) -> None:
        stop(self._server, self._thread)

    # ------------------------------------------------------------------ state helpers

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def add_review_comment(
        self, login: str, body: str, path: str, line: int, in_reply_to_id: int | None = None
    ) -> dict[str, Any]:
        c: dict[str, Any] = {
            "id": self.new_id(),
            "user": {"login": login},
            "body": body,
            "path": path,
            "line": line,
            "side": "RIGHT",
            "commit_id": self.head_sha,
        }
        if in_reply_to_id is not None:
            c["in_reply_to_id"] = in_reply_to_id
        self.review_comments.append(c)
        return c

    def add_issue_comment(self, login: str, body: str) -> dict[str, Any]:
        c = {"id": self.new_id(), "user": {"login": login}, "body": body}
        self.issue_comments.append(c)
        return c

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method != "GET"]

    def calls(self) -> list[str]:
        """`METHOD path?query` of every request, in order."""
        out = []
        for r in self.requests:
            q = urllib.parse.urlencode(sorted(r.query.items()))
            out.append(f"{r.method} {r.path}" + (f"?{q}" if q else ""))
        return out

    # ------------------------------------------------------------------ the API

    def handle(self, method: str, target: str, headers: dict[str, str], raw: bytes) -> Answer:
        split = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(split.query))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            return 400, {}, {"message": "Problems parsing JSON"}
        with self._lock:
            self.requests.append(Request(method, split.path, query, body, headers))
            for prefix, status, new in self.redirects:
                if split.path.startswith(prefix):
                    location = new + split.path[len(prefix) :]
                    location += f"?{split.query}" if split.query else ""
                    return status, {"Location": location}, None
            return self._answer(method, split.path, query, body, headers)

    def _answer(
        self, method: str, path: str, query: dict[str, str], body: Any, headers: dict[str, str]
    ) -> Answer:
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if auth not in (f"Bearer {self.token}", f"token {self.token}"):
            message = "Bad credentials"
            if self.echo_auth_in_errors:
                message += f" (got {auth!r})"
            return 401, {}, {"message": message}
        if self.rate_limit_once and not self._rate_limited:
            self._rate_limited = True
            return (
                403,
                {"Retry-After": "1", "x-ratelimit-remaining": "0"},
                {"message": "You have exceeded a secondary rate limit."},
            )
        if self.flaky.get((method, path)):
            status, answer_headers = self.flaky[(method, path)].pop(0)
            message = self.error_message
            if status in (403, 429):
                message = "You have exceeded a secondary rate limit."
            if self.echo_auth_in_errors:
                message += f" (got {auth!r})"
            return status, answer_headers, {"message": message}
        if (method, path) in self.drop:
            return DROP, {}, None
        if (method, path) in self.fail:
            status = self.fail[(method, path)]
            message = self.error_message
            if self.echo_auth_in_errors:
                message += f" (got {auth!r})"
            return status, {}, {"message": message}
        if method != "GET" and self.fork:
            return 403, {}, {"message": "Resource not accessible by integration"}

        base = f"/repos/{self.owner}/{self.repo}"
        n = self.number
        if path == "/user" and method == "GET":
            if self.user_forbidden:
                return 403, {}, {"message": "Resource not accessible by integration"}
            return 200, {}, {"login": self.login, "type": "User"}
        if path == f"{base}/pulls/{n}" and method == "GET":
            return 200, {}, {"number": n, "head": {"sha": self.head_sha}}
        if path == f"{base}/pulls/{n}/files" and method == "GET":
            items = [
                {"filename": f.filename, "status": f.status}
                | ({"patch": f.patch} if f.patch is not None else {})
                for f in self.files
            ] + list(self.raw_files)
            return self._page(path, query, items)
        if path == f"{base}/pulls/{n}/comments" and method == "GET":
            return self._page(path, query, self.review_comments)
        if path == f"{base}/pulls/{n}/reviews" and method == "POST":
            return self._create_review(body)
        m = re.fullmatch(rf"{base}/pulls/comments/(\d+)", path)
        if m and method == "DELETE":
            cid = int(m.group(1))
            kept = [c for c in self.review_comments if c.get("id") != cid]
            if len(kept) == len(self.review_comments):
                return 404, {}, {"message": "Not Found"}
            self.review_comments = kept
            return 204, {}, None
        m = re.fullmatch(rf"{base}/pulls/{n}/comments/(\d+)/replies", path)
        if m and method == "POST":
            parent = next((c for c in self.review_comments if c.get("id") == int(m.group(1))), None)
            if parent is None:
                return 404, {}, {"message": "Not Found"}
            if not isinstance(body, dict) or not body.get("body"):
                return 422, {}, {"message": "Validation Failed", "errors": ["body is missing"]}
            reply = self.add_review_comment(
                self.login, body["body"], parent["path"], parent["line"], parent["id"]
            )
            return 201, {}, reply
        if path == f"{base}/issues/{n}/comments":
            if method == "GET":
                return self._page(path, query, self.issue_comments)
            if method == "POST":
                if not isinstance(body, dict) or not body.get("body"):
                    return 422, {}, {"message": "Validation Failed"}
                return 201, {}, self.add_issue_comment(self.login, body["body"])
        m = re.fullmatch(rf"{base}/issues/comments/(\d+)", path)
        if m and method == "PATCH":
            target = next((c for c in self.issue_comments if c.get("id") == int(m.group(1))), None)
            if target is None:
                return 404, {}, {"message": "Not Found"}
            if not isinstance(body, dict) or not body.get("body"):
                return 422, {}, {"message": "Validation Failed"}
            target["body"] = body["body"]
            return 200, {}, target
        return 404, {}, {"message": "Not Found"}

    def _page(self, path: str, query: dict[str, str], items: list[Any]) -> Answer:
        per_page = min(int(query.get("per_page", "30")), self.page_size)
        page = int(query.get("page", "1"))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(p: int) -> str:
            q = urllib.parse.urlencode({**query, "per_page": str(per_page), "page": str(p)})
            return f"<{self.url}{path}?{q}>"

        rels = []
        if page > 1:
            rels += [f'{link(page - 1)}; rel="prev"', f'{link(1)}; rel="first"']
        if page < last:
            rels += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        return (
            200,
            ({"Link": ", ".join(rels)} if rels else {}),
            [dict(c) if isinstance(c, dict) else c for c in chunk],
        )

    def _create_review(self, body: Any) -> Answer:
        if not isinstance(body, dict):
            return 422, {}, {"message": "Validation Failed"}
        if body.get("commit_id") not in (None, self.head_sha):
            return 422, {}, {"message": "Validation Failed", "errors": ["commit_id is unknown"]}
        if body.get("event") not in ("COMMENT", "APPROVE", "REQUEST_CHANGES"):
            return 422, {}, {"message": "Validation Failed", "errors": ["event is invalid"]}
        files = {f.filename: right_lines(f.patch) for f in self.files}
        comments = body.get("comments") or []
        for c in comments:
            lines = files.get(c.get("path"))
            if lines is None:
                return 422, {}, {"message": "Validation Failed", "errors": ["Path not found"]}
            if c.get("side", "RIGHT") != "RIGHT" or not c.get("body"):
                return 422, {}, {"message": "Validation Failed", "errors": ["invalid comment"]}
            line, start = c.get("line"), c.get("start_line")
            if line not in lines:
                return (
                    422,
                    {},
                    {
                        "message": "Validation Failed",
                        "errors": ["pull_request_review_thread.line must be part of the diff"],
                    },
                )
            if start is not None and (
                start not in lines or start >= line or lines[start] != lines[line]
            ):
                return (
                    422,
                    {},
                    {
                        "message": "Validation Failed",
                        "errors": [
                            "pull_request_review_thread.start_line must be part of the same hunk"
                        ],
                    },
                )
        review = {"id": self.new_id(), "body": body.get("body"), "state": "COMMENTED"}
        self.reviews.append(review)
        for c in comments:
            added = self.add_review_comment(self.login, c["body"], c["path"], c["line"])
            added["pull_request_review_id"] = review["id"]
            if c.get("start_line") is not None:
                added["start_line"] = c["start_line"]
        return 200, {}, review
