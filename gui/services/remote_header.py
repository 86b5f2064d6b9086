"""Read a GGUF header over HTTP without downloading the file: Range requests for growing prefixes.

A server that ignores Range answers 200 with the whole file; then only as many bytes as the header needs
are read before the connection is closed. One read of a header, however many requests it takes, has an
overall deadline, and a header that keeps asking for more past ``max_header`` bytes is refused; the
requests are :mod:`gui.services.bounded_http`'s (redirects to http(s) only, the token never sent on).
"""

from __future__ import annotations

import http.client
from dataclasses import replace
from pathlib import PurePosixPath
from urllib.parse import urlparse

from gui.core.gguf_reader import DEFAULT_LIMITS, GGUFError, GGUFHeader, HeaderIncomplete, read_header_from_bytes
from gui.core.words import Text, message_of, words
from gui.services.bounded_http import Cutoff, HttpStatus, TransferError, Unreachable, get, read_up_to
from gui.services.remote_file import http_words

FIRST_READ = 1 << 20  # most headers fit in 1-8 MiB; the reader says how much more it needs
MAX_HEADER = 64 << 20  # a 262144-token vocabulary takes about 7 MiB
DEADLINE_S = 60.0
SOCKET_TIMEOUT_S = 15.0


class RemoteHeaderError(RuntimeError):
    """The header could not be fetched; ``status`` and ``error_code`` are the server's, when it answered;
    ``unreachable`` why no answer came, when none did (``name``: the file, as the message names it)."""

    def __init__(
        self, message: Text, status: int | None = None, error_code: str = "", *, name: str = "", unreachable: Text = ""
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.name = name
        self.unreachable = unreachable


def _label(url: str) -> str:
    return PurePosixPath(urlparse(url).path).name or url


def _fetch_prefix(url: str, size: int, cut: Cutoff, timeout: float, token: str | None) -> tuple[bytes, int | None]:
    """Up to `size` bytes from the start of `url`, and the file's full size when the server says."""
    response = get(url, cut, headers={"Range": f"bytes=0-{size - 1}"}, token=token, socket_timeout=timeout)
    with response:
        return read_up_to(response, size, cut), _total_size(response, url)


def _total_size(response: http.client.HTTPResponse, url: str) -> int | None:
    if response.status == 206:
        content_range = response.headers.get("Content-Range", "")
        first = content_range.removeprefix("bytes ").split("-", 1)[0].strip()
        if first != "0":
            raise RemoteHeaderError(
                words(
                    "{name}: the server answered the range request with the wrong bytes (Content-Range: {sent})",
                    name=_label(url),
                    sent=content_range[:60],
                )
            )
        total_text = content_range.rpartition("/")[2]
        return int(total_text) if total_text.isdigit() else None
    if response.headers.get("Content-Length", "").isdigit():
        return int(response.headers["Content-Length"])  # no Range support: whole file on offer
    return None


def fetch_header(
    url: str,
    *,
    timeout: float = SOCKET_TIMEOUT_S,
    first_read: int = FIRST_READ,
    token: str | None = None,
    deadline: float = DEADLINE_S,
    max_header: int = MAX_HEADER,
) -> GGUFHeader:
    """The header of the GGUF file at ``url``; every request of it together within ``deadline`` seconds.

    Raises RemoteHeaderError when the server cannot be read, GGUFError when the file is not a usable GGUF.
    """
    name = _label(url)
    limits = replace(DEFAULT_LIMITS, max_header_bytes=max_header)
    size = min(first_read, max_header)
    with Cutoff(deadline) as cut:
        while True:
            try:
                data, total = _fetch_prefix(url, size, cut, timeout, token)
            except HttpStatus as exc:
                said: Text = words("{name}: {problem}", name=name, problem=message_of(exc))
                if exc.code in (401, 403):  # say that it is gated or private, and whether a token went
                    said = http_words(exc.code, name, token_sent=token is not None, error_code=exc.error_code)
                raise RemoteHeaderError(said, exc.code, exc.error_code) from exc
            except Unreachable as exc:
                reason = message_of(exc)
                raise RemoteHeaderError(
                    words("{name}: cannot reach the server ({reason})", name=name, reason=reason),
                    name=name,
                    unreachable=reason,
                ) from exc
            except TransferError as exc:
                raise RemoteHeaderError(words("{name}: {problem}", name=name, problem=message_of(exc))) from exc
            try:
                return read_header_from_bytes(data, name, file_size=total, limits=limits)
            except HeaderIncomplete as exc:
                if len(data) < size or (total is not None and len(data) >= total):
                    raise GGUFError(
                        words("{name}: the file ends inside its header ({n} bytes)", name=name, n=len(data))
                    ) from exc
                if size >= max_header:
                    raise GGUFError(
                        words(
                            "{name}: header larger than {mib} MiB; not a model file?", name=name, mib=max_header >> 20
                        )
                    ) from exc
                size = min(max(exc.needed, size * 2), max_header)
