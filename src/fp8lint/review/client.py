"""A small GitHub REST client for `fp8lint review` (standard library only).

JSON in and out, bearer token, the API version header, pagination by the `Link` header,
bounded retries: on rate limits (403/429 with `Retry-After`, or `x-ratelimit-remaining: 0`
with `x-ratelimit-reset`), waiting as told, and on server errors (5xx), with exponential
backoff (1, 2, 4 s; a `Retry-After` wins), at most MAX_RETRIES times and MAX_TOTAL_WAIT_S in
all.  Like octokit's retry plugin (`defaultRetryState` in octokit/plugin-retry.js
src/index.ts, commit 0af7f574: 3 retries, every method, not on 400/401/403/404/410/422/451),
writes are retried too: should a write have gone through before its 5xx, the retry can
repeat it once, and the next run's fingerprints keep that from growing.  The
token goes only to the API root's origin: the root must be https (http only to a loopback
host), and pagination links and redirects that lead elsewhere are refused, not followed.
The token is never part of an exception message: every text that leaves the client goes
through `redact`.  Imported only when `fp8lint review` runs.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from fp8lint import __version__

API_VERSION = "2022-11-28"
MAX_RETRIES = 3  # retries after the first try
MAX_WAIT_S = 120.0  # the longest single wait; a rate limit that lifts later is not waited for
MAX_TOTAL_WAIT_S = 180.0  # the most time one request spends waiting, all retries together
BACKOFF_S = 1.0  # the first wait after a server error; doubled at each retry
MAX_REDIRECTS = 5
FOLLOWED = (301, 302, 307, 308)  # repeated as they were (GitHub's advice); same origin only
REASON_LIMIT = 300  # characters of an error's reason, counted after redaction
FRAGMENT = 8  # a piece of the token this long is redacted too
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')
_PRINTABLE = re.compile(r"[!-~]+")  # printable ASCII, no space: what a header may carry


class GitHubError(Exception):
    """A request that failed: HTTP status (0 for a network error), method, path, reason.

    `from_server`: the reason is the server's own text (its `message`), which a log line
    should not repeat; otherwise it is the client's or the operating system's."""

    def __init__(
        self,
        status: int,
        method: str,
        path: str,
        reason: str,
        rate_limited: bool = False,
        from_server: bool = False,
    ) -> None:
        self.status = status
        self.method = method
        self.path = path
        self.reason = reason
        self.rate_limited = rate_limited
        self.from_server = from_server
        where = f"{method} {path}"
        super().__init__(f"{where}: HTTP {status}: {reason}" if status else f"{where}: {reason}")

    @property
    def forbidden(self) -> bool:
        """A permission problem (fork, read-only token) rather than a real failure."""
        return self.status in (403, 404) and not self.rate_limited


def api_url_problem(url: str) -> str | None:
    """Why the token must not be sent to `url`, or None: https, or http to a loopback host
    (for tests); a host, no credentials, no spaces or control characters."""
    if not _PRINTABLE.fullmatch(url):
        return "has a space or a character a URL cannot have"
    try:
        parts = urllib.parse.urlsplit(url)
        host, _ = parts.hostname or "", parts.port  # a bad port is a ValueError
    except ValueError:
        return "is not a valid URL"
    scheme = parts.scheme.lower()
    if not host:
        return "must be https://HOST[/PATH]"
    if "@" in parts.netloc:
        return "must not carry credentials"
    if scheme == "https" or (scheme == "http" and _loopback(host)):
        return None
    return "must use https:// (http:// only to 127.0.0.1, ::1 or localhost)"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def clean_token(token: str | None) -> str | None:
    """The token without surrounding whitespace (a secret saved with CRLF), None when blank.

    ValueError for one that still has a space, control or non-ASCII character: such a
    header would be refused by `http.client` with the whole value in its message."""
    token = (token or "").strip()
    if token and not _PRINTABLE.fullmatch(token):
        raise ValueError("has a space, control or non-ASCII character (it is not shown)")
    return token or None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """urllib would follow a redirect anywhere with the Authorization header: the client
    follows them itself, same origin only."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _opener() -> urllib.request.OpenerDirector:
    """HTTP and HTTPS only (no file:, ftp: or data:), redirects left to the client.  Only
    https goes through a proxy (a tunnel: the proxy never sees the token); plain http, to a
    loopback host, goes direct."""
    proxies = {k: v for k, v in urllib.request.getproxies().items() if k == "https"}
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(proxies),
        urllib.request.HTTPHandler(),
        urllib.request.HTTPSHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        _NoRedirect(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


class GitHubClient:
    """JSON requests against one API root.  `sleep` and `clock` are injectable for tests.

    ValueError for a root the token must not go to, or a token no header can carry; the
    message names neither."""

    def __init__(
        self,
        api_url: str,
        token: str | None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        timeout: float = 30.0,
        max_retries: int = MAX_RETRIES,
        max_total_wait: float = MAX_TOTAL_WAIT_S,
    ) -> None:
        problem = api_url_problem(api_url)
        if problem is not None:
            raise ValueError(f"the API URL {problem}")
        try:
            self._token = clean_token(token)
        except ValueError as exc:
            raise ValueError(f"the token {exc}") from None
        self.api_url = api_url.rstrip("/")
        self._opener = _opener()
        self._sleep = sleep
        self._clock = clock
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_total_wait = max_total_wait

    def __repr__(self) -> str:  # never show the token
        return f"GitHubClient({self.api_url!r})"

    def redact(self, text: str) -> str:
        """`text` with the token, and every piece of it of FRAGMENT characters or more (an
        echo that a server or a cut left partial), as `***`."""
        token = self._token
        if not token:
            return text
        text = text.replace(token, "***")
        if len(token) <= FRAGMENT:
            return text
        pieces = {token[i : i + FRAGMENT] for i in range(len(token) - FRAGMENT + 1)}
        runs: list[list[int]] = []  # [start, end) of the text to hide, merged
        for i in range(len(text) - FRAGMENT + 1):
            if text[i : i + FRAGMENT] in pieces:
                if runs and i <= runs[-1][1]:
                    runs[-1][1] = i + FRAGMENT
                else:
                    runs.append([i, i + FRAGMENT])
        out, pos = [], 0
        for start, end in runs:
            out += [text[pos:start], "***"]
            pos = end
        return "".join(out) + text[pos:]

    # ------------------------------------------------------------------ requests

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: Mapping[str, str | int] | None = None,
    ) -> Any:
        """The decoded JSON answer (None for an empty one)."""
        return self._send(method, self._url(path, params), body)[0]

    def paginate(self, path: str, params: Mapping[str, str | int] | None = None) -> list[Any]:
        """Every item of a list endpoint, following `Link: <...>; rel="next"`."""
        query: dict[str, str | int] = {"per_page": 100, **(params or {})}
        url: str | None = self._url(path, query)
        items: list[Any] = []
        seen: set[str] = set()
        while url is not None and url not in seen:
            seen.add(url)
            data, headers = self._send("GET", url, None)
            if not isinstance(data, list):
                raise GitHubError(0, "GET", _path_of(url), "expected a JSON list")
            items.extend(data)
            url = self._next_url(headers.get("Link") or headers.get("link") or "")
        return items

    def _url(self, path: str, params: Mapping[str, str | int] | None) -> str:
        url = self.api_url + "/" + path.lstrip("/")
        if params:
            url += "?" + urllib.parse.urlencode({k: str(v) for k, v in params.items()})
        return url

    def _next_url(self, link: str) -> str | None:
        for part in link.split(","):
            m = _NEXT.search(part)
            if m is None:
                continue
            url = m.group(1)
            # the token only ever goes to the API host we were given
            if _origin(url) != _origin(self.api_url):
                path = self.redact(_path_of(url))
                raise GitHubError(0, "GET", path, "pagination left the API host")
            return url
        return None

    def _send(self, method: str, url: str, body: Any) -> tuple[Any, Mapping[str, str]]:
        path = self.redact(_path_of(url))
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": f"fp8lint/{__version__}",
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        attempt = redirects = 0
        waited = 0.0
        while True:
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with self._opener.open(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    answer_headers = dict(resp.headers.items())
            except urllib.error.HTTPError as exc:
                raw = _read(exc)
                answer_headers = dict(exc.headers.items()) if exc.headers else {}
                if exc.code in FOLLOWED:
                    url = self._redirect(method, path, url, exc.code, answer_headers, redirects)
                    redirects += 1
                    continue
                limit = self._rate_limit_wait(exc.code, answer_headers, raw)
                if limit is None:
                    wait = _server_error_wait(exc.code, attempt, answer_headers)
                else:
                    wait = limit
                if (
                    wait is not None
                    and attempt < self.max_retries
                    and wait <= MAX_WAIT_S
                    and waited + wait <= self.max_total_wait
                ):
                    attempt += 1
                    waited += wait
                    self._sleep(wait)
                    continue
                raise GitHubError(
                    exc.code,
                    method,
                    path,
                    self._clip(_reason(raw, exc.reason)),
                    rate_limited=limit is not None,
                    from_server=True,
                ) from None
            except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise GitHubError(0, method, path, self._clip(f"{reason}")) from None
            except ValueError:  # http.client refuses a header or URL: its message repeats it
                raise GitHubError(0, method, path, "a header or the URL cannot be sent") from None
            if not raw.strip():
                return None, answer_headers
            try:
                return json.loads(raw.decode("utf-8")), answer_headers
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise GitHubError(0, method, path, "the answer is not JSON") from None

    def _redirect(
        self,
        method: str,
        path: str,
        url: str,
        status: int,
        headers: Mapping[str, str],
        redirects: int,
    ) -> str:
        """Where a redirect leads, when it may be followed with the token (same origin)."""
        location = {k.lower(): v for k, v in headers.items()}.get("location")
        if not location:
            raise GitHubError(status, method, path, "a redirect without a Location")
        target = urllib.parse.urljoin(url, location.strip())
        if _origin(target) != _origin(self.api_url):
            raise GitHubError(
                status, method, path, "redirected to another origin; not followed with the token"
            )
        if redirects >= MAX_REDIRECTS:
            raise GitHubError(status, method, path, "too many redirects")
        return target

    def _clip(self, text: str) -> str:
        """Redacted first, then cut: a cut must not leave part of the token unredacted."""
        return self.redact(text[: 16 * REASON_LIMIT])[:REASON_LIMIT]

    def _rate_limit_wait(self, status: int, headers: Mapping[str, str], raw: bytes) -> float | None:
        """Seconds until a rate limit lifts (uncapped: the caller does not wait past
        MAX_WAIT_S), or None when this is no rate limit."""
        if status not in (403, 429):
            return None
        lower = {k.lower(): v for k, v in headers.items()}
        retry_after = _retry_after(lower)
        if retry_after is not None:
            return retry_after
        if lower.get("x-ratelimit-remaining") == "0":
            try:
                reset = float(lower.get("x-ratelimit-reset", ""))
            except ValueError:
                return 60.0
            return max(reset - self._clock(), 1.0)
        if status == 429 or b"rate limit" in raw.lower():
            return 60.0  # GitHub: without a hint, wait at least a minute
        return None


def _retry_after(lower: Mapping[str, str]) -> float | None:
    """`Retry-After` in seconds (60 for a date or junk: GitHub's advice without a hint)."""
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return 60.0


def _server_error_wait(status: int, attempt: int, headers: Mapping[str, str]) -> float | None:
    """The wait before retrying a server error (5xx but 501, which a retry cannot fix): its
    `Retry-After` (a 503 may carry one), else BACKOFF_S doubled at each retry."""
    if status < 500 or status == 501 or status > 599:
        return None
    retry_after = _retry_after({k.lower(): v for k, v in headers.items()})
    return retry_after if retry_after is not None else BACKOFF_S * 2**attempt


def _origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _path_of(url: str) -> str:
    return urllib.parse.urlsplit(url).path or "/"


def _read(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read()
    except OSError:
        return b""


def _reason(raw: bytes, fallback: object) -> str:
    """GitHub's `message` (and the first validation error), on one line."""
    message = ""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        data = None
    if isinstance(data, dict):
        message = str(data.get("message") or "")
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            first = errors[0]
            detail = first.get("message") if isinstance(first, dict) else first
            if detail:
                message = f"{message} ({detail})" if message else str(detail)
    text = message or str(fallback or "request failed")
    return " ".join(text.split())  # cut by the caller, after redaction
