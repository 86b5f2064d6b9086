"""HTTP GET for the hub client, bounded in time, in size and in where a redirect may lead.

urllib alone trusts the server too far for a window that must stay responsive: a server that sends
50 bytes/s, or one header line every few seconds, never trips a socket timeout; a redirect may lead to
``ftp://`` or from https to http; a redirect's body is read whole. Here:

- every request runs under a :class:`Cutoff`. When its deadline passes, or when :meth:`Cutoff.trip`
  is called (pause, cancel), the connection's socket is shut down, so a read blocked in another
  thread returns at once wherever it is: status line, headers or body. Setting up a connection is
  bounded by the socket timeout only (name lookup and TCP connect cannot be interrupted).
- only http and https are opened, redirects are followed to http(s) only, never from https to
  http, at most :data:`MAX_REDIRECTS` times, and a redirect's body is not read.
- the token goes to the URL asked for only, never to a redirect target: the hub sends large files
  to a CDN, which must not see it.
- bodies are read in pieces of one socket read each (:func:`read_up_to`), up to a limit.

Errors are :class:`TransferError` subclasses whose text is one line of words; none contains the token. Their
messages are sentences composed with gui/core/words.py, so the window can show them translated; put into a
message of its own with gui/core/words.py ``message_of``.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any
from urllib.parse import urljoin, urlsplit

from gui.core.words import Text, message_of, words

__all__ = [
    "MAX_REDIRECTS",
    "Cut",
    "Cutoff",
    "Dropped",
    "HttpStatus",
    "RedirectRefused",
    "TransferError",
    "Unreachable",
    "get",
    "read_piece",
    "read_up_to",
    "redirect_refusal",
    "same_origin",
]

MAX_REDIRECTS = 5
USER_AGENT = "tightfit"
PIECE = 1 << 16  # one socket read at most: a pause or a deadline is noticed between pieces
ERROR_BODY_LIMIT = 64 << 10  # of an error answer, for the server's message
SERVER_MESSAGE_CHARS = 200


class TransferError(Exception):
    """A request that did not complete; ``str()`` is one line of words."""


class Unreachable(TransferError):
    """No answer: the connection could not be opened, or closed or timed out before the status line."""


class Dropped(TransferError):
    """The answer's body stopped before its end (closed, reset, timed out)."""


class Cut(TransferError):
    """The request was ended from outside: its deadline passed, or it was paused or cancelled."""


class RedirectRefused(TransferError):
    """A redirect that is not followed: another scheme, https to http, or too many."""


class HttpStatus(TransferError):
    """An error status (4xx, 5xx) with the hub's error code and a short message from the server."""

    def __init__(self, code: int, reason: str, headers: Message | None = None, server_says: str = "") -> None:
        # The reason phrase is the server's own text: a field, never translated.
        super().__init__(
            words("the server answered {code} {reason}", code=code, reason=reason)
            if reason.strip()
            else words("the server answered {code}", code=code)
        )
        self.code = code
        self.reason = reason
        self.error_code = (headers.get("X-Error-Code", "") if headers is not None else "") or ""
        self.server_says = server_says


def same_origin(a: str, b: str) -> bool:
    """Whether two URLs have the same scheme, host and port."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme.lower(), pa.hostname, _port(pa.scheme, pa.port)) == (
        pb.scheme.lower(),
        pb.hostname,
        _port(pb.scheme, pb.port),
    )


def _port(scheme: str, port: int | None) -> int | None:
    return port or {"http": 80, "https": 443}.get(scheme.lower())


def _shown(url: str) -> str:
    """A URL from a server, fit for one line of a message."""
    text = re.sub(r"[\x00-\x1f\x7f]", "?", url)
    return text if len(text) <= 100 else text[:99] + "…"


_THE_SERVER = words("the server")


class Cutoff:
    """Ends the requests made under it: at a deadline (``seconds``, or :meth:`arm`), or on :meth:`trip`.

    Use one per job (a listing, a header read) or per attempt (a download's request); it is spent
    once tripped. ``with Cutoff(30) as cut:`` stops the timer on the way out.
    """

    def __init__(self, seconds: float | None = None, what: Text = _THE_SERVER) -> None:
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._reason: str | None = None
        self._timer: threading.Timer | None = None
        self._deadline: float | None = None
        self.what = what
        if seconds is not None:
            self.arm(seconds)

    def arm(self, seconds: float, reason: Text | None = None) -> None:
        """Trip in ``seconds`` (replacing any earlier deadline)."""
        self.disarm()
        reason = reason or words("{what} did not finish within {seconds} s", what=self.what, seconds=f"{seconds:g}")
        timer = threading.Timer(seconds, self.trip, (reason,))
        timer.daemon = True
        with self._lock:
            self._timer, self._deadline = timer, time.monotonic() + seconds
        timer.start()

    def disarm(self) -> None:
        with self._lock:
            timer, self._timer, self._deadline = self._timer, None, None
        if timer is not None:
            timer.cancel()

    def trip(self, reason: str) -> None:
        with self._lock:
            if self._reason is None:
                self._reason = reason
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)

    @property
    def reason(self) -> str | None:
        with self._lock:
            return self._reason

    def remaining(self) -> float | None:
        with self._lock:
            return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def check(self) -> None:
        reason = self.reason
        if reason is not None:
            raise Cut(reason)

    def _attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks = [s for s in self._socks if s.fileno() != -1]  # closed ones
            self._socks.append(sock)
            tripped = self._reason is not None
        if tripped:
            _shut(sock)

    def __enter__(self) -> Cutoff:
        return self

    def __exit__(self, *exc: object) -> None:
        self.disarm()


def _shut(sock: socket.socket) -> None:
    # The plain socket's shutdown, also for TLS sockets (whose own shutdown unwraps them): a read
    # blocked in another thread sees the end of the stream at once.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _connection_class(base: type[http.client.HTTPConnection], cut: Cutoff) -> Any:
    class Connection(base):  # type: ignore[valid-type, misc]
        def connect(self) -> None:
            super().connect()
            cut._attach(self.sock)

    return Connection


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, cut: Cutoff) -> None:
        super().__init__()
        self._conn = _connection_class(http.client.HTTPConnection, cut)

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._conn, req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, cut: Cutoff) -> None:
        super().__init__()
        self._conn = _connection_class(http.client.HTTPSConnection, cut)

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._conn, req, context=self._context)  # type: ignore[attr-defined]


def redirect_refusal(source: str, target: str, followed: int) -> Text:
    """Why the redirect from ``source`` to ``target`` (the ``followed``-th in a row) is not followed; "" if it is."""
    if followed > MAX_REDIRECTS:
        return words("more than {n} redirects in a row (a redirect loop?); stopped", n=MAX_REDIRECTS)
    scheme = urlsplit(target).scheme.lower()
    if scheme not in ("http", "https"):
        return words("refused a redirect to {url}: only http and https are followed", url=_shown(target))
    if urlsplit(source).scheme.lower() == "https" and scheme == "http":
        return words("refused a redirect from https to plain http ({url})", url=_shown(target))
    return ""


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows 301/302/303/307/308 to http(s) only, never https to http, at most MAX_REDIRECTS times."""

    def http_error_302(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: http.client.HTTPMessage
    ) -> Any:
        location = headers.get("Location") or headers.get("URI")
        if not location:
            return None  # urllib then reports the status as an error
        fp.close()  # its body is not read: it may be endless
        target = urljoin(req.full_url, location.strip())
        followed = getattr(req, "redirects_followed", 0) + 1
        refusal = redirect_refusal(req.full_url, target, followed)
        if refusal:
            raise RedirectRefused(refusal)
        new = self.redirect_request(req, fp, code, msg, headers, target)
        if new is None:
            return None
        new.redirects_followed = followed  # type: ignore[attr-defined]
        return self.parent.open(new, timeout=req.timeout)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _opener(cut: Cutoff) -> urllib.request.OpenerDirector:
    # Built by hand, not with build_opener: that would add the file, ftp and data handlers.
    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        _HTTP(cut),
        _HTTPS(cut),
        _Redirects(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


def get(
    url: str,
    cut: Cutoff,
    *,
    headers: Mapping[str, str] | None = None,
    token: str | None = None,
    socket_timeout: float = 15.0,
) -> http.client.HTTPResponse:
    """GET ``url`` under ``cut``; the response is open for reading (with :func:`read_up_to`).

    Raises HttpStatus for an error status, RedirectRefused, Cut when the cutoff ended it, and
    Unreachable when no answer came.
    """
    if urlsplit(url).scheme.lower() not in ("http", "https"):
        raise RedirectRefused(words("{url} is not an http(s) URL", url=_shown(url)))
    cut.check()
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    if token:
        # Unredirected: never copied to a redirect target.
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    remaining = cut.remaining()
    timeout = socket_timeout if remaining is None else max(0.1, min(socket_timeout, remaining))
    try:
        response: http.client.HTTPResponse = _opener(cut).open(request, timeout=timeout)
        return response
    except urllib.error.HTTPError as exc:
        cut.check()
        raise _status_error(exc, cut) from None
    except TransferError:
        raise
    except http.client.HTTPException as exc:
        cut.check()
        if isinstance(exc, http.client.RemoteDisconnected):
            raise Unreachable(_reason(exc)) from exc
        # It answered, but not in HTTP: endless header lines, a line of megabytes, a garbled status.
        raise TransferError(words("the server's answer is not valid HTTP ({reason})", reason=_reason(exc))) from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        cut.check()
        raise Unreachable(_reason(exc)) from exc


def _status_error(exc: urllib.error.HTTPError, cut: Cutoff) -> HttpStatus:
    try:
        body = read_up_to(exc, ERROR_BODY_LIMIT, cut)  # type: ignore[arg-type]
    except TransferError:
        body = b""
    finally:
        exc.close()
    return HttpStatus(exc.code, str(exc.reason or ""), exc.headers, _server_message(exc.headers, body))


def _server_message(headers: Message | None, body: bytes) -> str:
    """The hub's short explanation of an error (its X-Error-Message, or the JSON body's "error")."""
    text = headers.get("X-Error-Message", "") if headers is not None else ""
    if not text and body[:1] == b"{":
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(body.decode("utf-8"))
            if isinstance(value, dict) and isinstance(value.get("error"), str):
                text = value["error"]
    text = " ".join(re.sub(r"[\x00-\x1f\x7f]", " ", str(text)).split())
    return text if len(text) <= SERVER_MESSAGE_CHARS else text[: SERVER_MESSAGE_CHARS - 1] + "…"


def read_up_to(response: http.client.HTTPResponse, limit: int, cut: Cutoff, piece: int = PIECE) -> bytes:
    """Up to ``limit`` bytes of the body, fewer at its end; one socket read per piece.

    Raises Dropped when the body ends before the length the server announced, Cut when the cutoff
    ended it.
    """
    data = bytearray()
    while len(data) < limit:
        chunk = read_piece(response, min(piece, limit - len(data)), cut)
        if not chunk:
            break
        data += chunk
    return bytes(data)


def read_piece(response: http.client.HTTPResponse, n: int, cut: Cutoff) -> bytes:
    """What one socket read gives (at most ``n`` bytes); b"" at the end of the body."""
    try:
        chunk = response.read1(n)
    except (http.client.HTTPException, OSError, ValueError) as exc:
        cut.check()
        raise Dropped(_reason(exc)) from exc
    if not chunk:
        cut.check()
        if response.length:  # the announced length was not reached
            raise Dropped(
                words("the connection closed {n} bytes before the end the server announced", n=response.length)
            )
    return chunk


def _reason(exc: BaseException) -> Text:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        exc = reason
    elif isinstance(reason, str) and reason:
        return reason
    if isinstance(exc, TimeoutError):
        return words("timed out")
    return getattr(exc, "strerror", None) or message_of(exc) or type(exc).__name__
