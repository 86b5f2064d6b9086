"""Read a GGUF header over HTTP without downloading the file: Range requests for growing prefixes.

A server that ignores Range answers 200 with the whole file; then only as many bytes as the header needs
are read before the connection is closed.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import PurePosixPath
from urllib.parse import urlparse

from gui.core.gguf_reader import GGUFError, GGUFHeader, HeaderIncomplete, read_header_from_bytes

FIRST_READ = 1 << 20  # most headers fit in 1-8 MiB; the reader says how much more it needs
MAX_HEADER = 256 << 20
USER_AGENT = "tightfit (GGUF header reader)"


class RemoteHeaderError(RuntimeError):
    pass


def _label(url: str) -> str:
    return PurePosixPath(urlparse(url).path).name or url


def _fetch_prefix(url: str, size: int, timeout: float, token: str | None) -> tuple[bytes, int | None]:
    """Up to `size` bytes from the start of `url`, and the file's full size when the server says."""
    request = urllib.request.Request(url, headers={"Range": f"bytes=0-{size - 1}", "User-Agent": USER_AGENT})
    if token:
        # Unredirected: a hub redirects large files to a CDN, which must not see the token.
        request.add_unredirected_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            total: int | None = None
            if response.status == 206:
                content_range = response.headers.get("Content-Range", "")
                total_text = content_range.rpartition("/")[2]
                total = int(total_text) if total_text.isdigit() else None
            elif response.headers.get("Content-Length", "").isdigit():
                total = int(response.headers["Content-Length"])  # no Range support: whole file on offer
            chunks, got = [], 0
            while got < size:
                chunk = response.read(min(1 << 16, size - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
            return b"".join(chunks), total
    except urllib.error.HTTPError as exc:
        raise RemoteHeaderError(f"{_label(url)}: the server answered {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RemoteHeaderError(f"{_label(url)}: cannot reach the server ({reason})") from exc


def fetch_header(
    url: str, *, timeout: float = 30.0, first_read: int = FIRST_READ, token: str | None = None
) -> GGUFHeader:
    size = first_read
    while True:
        data, total = _fetch_prefix(url, size, timeout, token)
        try:
            return read_header_from_bytes(data, _label(url), file_size=total)
        except HeaderIncomplete as exc:
            if len(data) < size or (total is not None and len(data) >= total):
                raise GGUFError(f"{_label(url)}: the file ends inside its header ({len(data)} bytes)") from exc
            size = max(exc.needed, size * 2)
            if size > MAX_HEADER:
                raise GGUFError(f"{_label(url)}: header larger than {MAX_HEADER >> 20} MiB; not a model file?") from exc
