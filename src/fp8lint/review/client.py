"""A small GitHub REST client for `fp8lint review` (standard library only).

JSON in and out, bearer token, the API version header, pagination by the `Link` header,
retries on rate limits (403/429 with `Retry-After` or `x-ratelimit-remaining: 0`).  The
token is never part of an exception message: every text that leaves the client goes through
`redact`.  Imported only when `fp8lint review` runs.
"""

from __future__ import annotations

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
MAX_RETRIES = 3
MAX_WAIT_S = 120.0  # the longest single wait for a rate limit to lift
_NEXT = re.compile(r'<([^>]+)>\s*;\s*rel="?next"?')


class GitHubError(Exception):
    """A request that failed: HTTP status (0 for a network error), method, path, reason."""

    def __init__(
        self, status: int, method: str, path: str, reason: str, rate_limited: bool = False
    ) -> None:
        self.status = status
        self.method = method
        self.path = path
        self.reason = reason
        self.rate_limited = rate_limited
        where = f"{method} {path}"
        super().__init__(f"{where}: HTTP {status}: {reason}" if status else f"{where}: {reason}")

    @property
    def forbidden(self) -> bool:
        """A permission problem (fork, read-only token) rather than a real failure."""
        return self.status in (403, 404) and not self.rate_limited


class GitHubClient:
    """JSON requests against one API root.  `sleep` and `clock` are injectable for tests."""

    def __init__(
        self,
        api_url: str,
        token: str | None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        timeout: float = 30.0,
        max_retries: int = MAX_RETRIES,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token or None
        self._sleep = sleep
        self._clock = clock
        self.timeout = timeout
        self.max_retries = max_retries

    def __repr__(self) -> str:  # never show the token
        return f"GitHubClient({self.api_url!r})"

    def redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

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
                raise GitHubError(0, "GET", _path_of(url), "pagination left the API host")
            return url
        return None

    def _send(self, method: str, url: str, body: Any) -> tuple[Any, Mapping[str, str]]:
        path = _path_of(url)
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
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, headers=headers, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    answer_headers = dict(resp.headers.items())
            except urllib.error.HTTPError as exc:
                raw = _read(exc)
                answer_headers = dict(exc.headers.items()) if exc.headers else {}
                wait = self._rate_limit_wait(exc.code, answer_headers, raw)
                if wait is None and method == "GET" and exc.code in (502, 503, 504):
                    wait = float(2**attempt)
                if wait is not None and attempt < self.max_retries:
                    attempt += 1
                    self._sleep(wait)
                    continue
                raise GitHubError(
                    exc.code,
                    method,
                    path,
                    self.redact(_reason(raw, exc.reason)),
                    rate_limited=wait is not None and exc.code in (403, 429),
                ) from None
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise GitHubError(0, method, path, self.redact(f"{reason}")) from None
            if not raw.strip():
                return None, answer_headers
            try:
                return json.loads(raw.decode("utf-8")), answer_headers
            except (UnicodeDecodeError, json.JSONDecodeError):
                raise GitHubError(0, method, path, "the answer is not JSON") from None

    def _rate_limit_wait(self, status: int, headers: Mapping[str, str], raw: bytes) -> float | None:
        """Seconds to wait before retrying, or None when this is no rate limit."""
        if status not in (403, 429):
            return None
        lower = {k.lower(): v for k, v in headers.items()}
        retry_after = lower.get("retry-after")
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), MAX_WAIT_S)
            except ValueError:
                return 60.0
        if lower.get("x-ratelimit-remaining") == "0":
            try:
                reset = float(lower.get("x-ratelimit-reset", ""))
            except ValueError:
                return 60.0
            return min(max(reset - self._clock(), 1.0), MAX_WAIT_S)
        if status == 429 or b"rate limit" in raw.lower():
            return 60.0  # GitHub: without a hint, wait at least a minute
        return None


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
    return " ".join(text.split())[:300]
