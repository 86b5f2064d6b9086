"""A local stand-in for the Hugging Face hub on 127.0.0.1, serving real GGUF files.

It speaks the parts of the hub protocol that ``huggingface_hub``, ``gui.services.hub`` and
``gui.services.download`` use:

- ``GET /api/models/{owner}/{name}/tree/{revision}[/{folder}]?recursive=...``: a JSON list of
  ``{"type": "file", "oid", "size", "path", "lfs": {"oid": sha256, "size", "pointerSize"}}`` and
  ``{"type": "directory", ...}`` entries; unknown or private repositories answer as the hub does
  (``401``/``404`` with ``X-Error-Code: RepoNotFound``).
- ``GET|HEAD /{owner}/{name}/resolve/{revision}/{path}``: LFS files redirect (302) to a CDN-like
  ``/cdn/...`` URL with ``X-Linked-Size``/``X-Linked-Etag``; the CDN serves the bytes with or
  without Range support.

Failure modes, set as attributes at any time: ``ranges`` (honour Range or answer 200 with the whole
file), ``drop_after`` (every CDN response closes the connection after that many body bytes),
``drop_at`` (responses stop at that file offset, every time), private and gated repositories needing
``token`` (``outsider_token`` is a valid token without access), and files listed with a wrong SHA-256.
The listing can come in pages of ``page_size`` entries linked by ``Link: <…>; rel="next"``, with a
``listing_next`` of the server's choosing, or be replaced by ``listing_body`` (bytes, or a function
giving chunks: huge, endless or malformed JSON).

A hostile server, for requests whose path starts with ``hostile.prefix`` (:class:`Hostile`):
bodies trickled at ``trickle_bps``; a status line followed by header lines that never end
(``hang_headers``); redirects to ``redirect_to`` (``"loop"``: to itself, a new URL every time);
lies about Range (``range_lie``: "start", a Content-Range that starts elsewhere; "total", a wrong
file size; "length", a Content-Length larger than the body sent).

Every request is recorded in ``hits``.

Importable as ``tests.fake_hub``.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.gguf_factory import write_llama_like

__all__ = ["FakeHub", "Hit", "HostedFile", "Hostile", "write_small_model"]


def write_small_model(path: Path, *, seed: int = 0, name: str = "Tiny Llama", quant: str = "Q4_K") -> Path:
    """A real, loadable-shaped GGUF of a few MB whose weights are random bytes, so its SHA-256 means
    something (a sparse file is all zeros past the header)."""
    from gui.core.gguf_reader import read_header

    write_llama_like(
        path,
        name=name,
        n_layer=2,
        n_embd=512,
        n_head=8,
        n_head_kv=2,
        n_ff=1536,
        n_vocab=2048,
        ctx=4096,
        quant=quant,
        chat_template="{% for m in messages %}{{ m.content }}{% endfor %}",
        sparse=True,
    )
    start = read_header(path).data_offset
    size = path.stat().st_size
    rng = random.Random(seed)
    with open(path, "r+b") as f:
        f.seek(start)
        remaining = size - start
        while remaining:
            n = min(remaining, 1 << 20)
            f.write(rng.randbytes(n))
            remaining -= n
    return path


_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def sha256_of(path: Path) -> str:
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        _SHA_CACHE[key] = _hash_file(path)
    return _SHA_CACHE[key]


def _hash_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class HostedFile:
    repo_id: str
    path: str  # in the repository
    local: Path
    size: int
    sha256: str  # what the tree listing says
    true_sha256: str  # what the bytes hash to
    lfs: bool = True
    index: int = 0


@dataclass(frozen=True)
class Hit:
    method: str
    path: str
    range: str | None
    auth: str | None
    status: int


@dataclass
class _Repo:
    repo_id: str
    private: bool = False
    gated: bool = False
    files: list[HostedFile] = field(default_factory=list)


@dataclass
class Hostile:
    """How the server misbehaves for requests whose path starts with ``prefix`` ("/cdn/", "/api/", "/")."""

    prefix: str = "/"
    trickle_bps: int | None = None
    hang_headers: bool = False
    redirect_to: str | None = None
    range_lie: str | None = None


class FakeHub:
    """``with FakeHub() as hub: hub.add_file("me/model", "m-Q4_K_M.gguf", path)``; ``hub.endpoint``."""

    def __init__(self, *, ranges: bool = True, token: str | None = None, outsider_token: str | None = None) -> None:
        self.ranges = ranges
        self.drop_after: int | None = None
        self.drop_at: int | None = None
        self.token = token
        self.outsider_token = outsider_token
        self.hostile = Hostile(prefix="/nowhere/")
        self.page_size: int | None = None
        self.listing_next: str | None = None
        self.listing_body: bytes | Callable[[], Iterable[bytes]] | None = None
        self.hits: list[Hit] = []
        self._closing = threading.Event()
        self._repos: dict[str, _Repo] = {}
        self._files: list[HostedFile] = []
        self._lock = threading.Lock()
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a hostile handler ends when it notices _closing
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-hub", daemon=True
        )

    # -- set-up ----------------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def add_repo(self, repo_id: str, *, private: bool = False, gated: bool = False) -> None:
        with self._lock:
            repo = self._repos.setdefault(repo_id, _Repo(repo_id))
            repo.private = private
            repo.gated = gated

    def add_file(
        self,
        repo_id: str,
        path_in_repo: str,
        local: Path,
        *,
        wrong_hash: bool = False,
        lfs: bool = True,
        sha256: str | None = None,
    ) -> HostedFile:
        """Host ``local`` as ``path_in_repo``. ``sha256`` skips hashing the file (for sparse multi-GB
        files that are only ever read by range: hashing their holes would take half a minute)."""
        true_sha = sha256 or sha256_of(local)
        listed = hashlib.sha256(b"not the file").hexdigest() if wrong_hash else true_sha
        with self._lock:
            repo = self._repos.setdefault(repo_id, _Repo(repo_id))
            hosted = HostedFile(
                repo_id, path_in_repo, local, local.stat().st_size, listed, true_sha, lfs, len(self._files)
            )
            repo.files.append(hosted)
            self._files.append(hosted)
        return hosted

    def resolve_url(self, repo_id: str, path_in_repo: str, revision: str = "main") -> str:
        return f"{self.endpoint}/{repo_id}/resolve/{revision}/{quote(path_in_repo)}"

    def cdn_hits(self, name: str | None = None) -> list[Hit]:
        with self._lock:
            return [h for h in self.hits if h.path.startswith("/cdn/") and (name is None or h.path.endswith(name))]

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- lookups used by the handler ---------------------------------------------------------------

    def _repo(self, repo_id: str) -> _Repo | None:
        with self._lock:
            return self._repos.get(repo_id)

    def _file(self, index: int) -> HostedFile | None:
        with self._lock:
            return self._files[index] if 0 <= index < len(self._files) else None

    def _record(self, hit: Hit) -> None:
        with self._lock:
            self.hits.append(hit)


class _Handler(BaseHTTPRequestHandler):
    hub: FakeHub
    server_version = "FakeHub/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_HEAD(self) -> None:
        self._dispatch(body=False)

    def do_GET(self) -> None:
        self._dispatch(body=True)

    # -- routing ---------------------------------------------------------------------------------

    def send_response(self, code: int, message: str | None = None) -> None:
        self.answered = code
        super().send_response(code, message)

    def end_headers(self) -> None:
        super().end_headers()
        # Recorded before the body goes out: a client that has read what it needed may look at the hits
        # at once, before this thread has finished writing.
        self._record_hit(self.answered)

    def _record_hit(self, status: int) -> None:
        if not self.recorded:
            self.recorded = True
            headers = self.headers
            self.hub._record(
                Hit(self.command, self.hit_path, headers.get("Range"), headers.get("Authorization"), status)
            )

    def _dispatch(self, *, body: bool) -> None:
        parts = urlsplit(self.path)
        path = unquote(parts.path)
        self.hit_path, self.recorded, self.answered = path, False, 500
        status = 500
        hostile = self.hub.hostile
        try:
            if path.startswith(hostile.prefix) and hostile.hang_headers:
                status = self._hang()
            elif path.startswith(hostile.prefix) and hostile.redirect_to and not path.startswith("/cdn/"):
                status = self._redirect(hostile.redirect_to, parse_qs(parts.query))
            elif path.startswith("/api/models/"):
                status = self._tree(path[len("/api/models/") :], parse_qs(parts.query))
            elif path.startswith("/cdn/"):
                status = self._cdn(path, body)
            elif "/resolve/" in path:
                status = self._resolve(path.lstrip("/"), body)
            else:
                status = self._send_json(404, {"error": "not found"})
        except (BrokenPipeError, ConnectionResetError):
            # The client went away mid-body (a paused download, a header read that had enough):
            # record what was answered.
            status = getattr(self, "sent_status", 499)
        finally:
            self._record_hit(status)  # where no answer went out (a request left hanging)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> int:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self._write(data)
        return status

    # -- hostile behaviour -----------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        """Send ``data``, trickled when the server is told to be slow here."""
        hostile = self.hub.hostile
        if not (hostile.trickle_bps and self.path.startswith(hostile.prefix)):
            self.wfile.write(data)
            return
        step = max(1, hostile.trickle_bps // 10)
        for i in range(0, len(data), step):
            if self.hub._closing.is_set():
                return
            self.wfile.write(data[i : i + step])
            time.sleep(0.1)

    def _hang(self) -> int:
        """A status line, then header lines that never end."""
        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        n = 0
        while not self.hub._closing.wait(0.2):
            self.wfile.write(f"X-Still-Thinking-{n}: yes\r\n".encode())
            n += 1
        self.close_connection = True
        return 200

    def _redirect(self, target: str, query: dict[str, list[str]]) -> int:
        if target == "loop":
            hop = int(query.get("hop", ["0"])[0]) + 1
            target = f"{self.hub.endpoint}{urlsplit(self.path).path}?hop={hop}"
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return 302

    def _auth_error(self, repo: _Repo | None, repo_id: str) -> int | None:
        """The hub's answer for a repository this request may not see, else None."""
        auth = self.headers.get("Authorization")
        hub = self.hub
        known = {f"Bearer {t}" for t in (hub.token, hub.outsider_token) if t is not None}
        if auth is not None and known and auth not in known:
            return self._send_json(
                401,
                {"error": "Invalid credentials in Authorization header"},
                {"X-Error-Message": "Invalid credentials in Authorization header"},
            )
        if repo is not None and repo.gated and auth != f"Bearer {hub.token}":
            # The hub: 401 when not logged in, 403 for an account that has not been granted access.
            message = f"Access to model {repo_id} is restricted. You must have access to it and be authenticated."
            return self._send_json(
                401 if auth is None else 403,
                {"error": message},
                {"X-Error-Code": "GatedRepo", "X-Error-Message": message},
            )
        if repo is None or (repo.private and auth != f"Bearer {hub.token}"):
            # The hub answers 401 for both missing and private repositories when not logged in.
            return self._send_json(
                401 if auth is None else 404,
                {"error": "Repository not found"},
                {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"},
            )
        return None

    def _tree(self, rest: str, query: dict[str, list[str]]) -> int:
        repo_id, sep, tail = rest.partition("/tree/")
        if not sep:
            return self._send_json(404, {"error": "not found"})
        repo = self.hub._repo(repo_id)
        denied = self._auth_error(repo, repo_id)
        if denied is not None or repo is None:
            return denied or 404
        revision, _, folder = tail.partition("/")
        if revision != "main":
            return self._send_json(
                404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "bad rev"}
            )
        recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
        prefix = f"{folder.strip('/')}/" if folder else ""
        entries: list[dict[str, Any]] = []
        dirs: set[str] = set()
        for f in repo.files:
            if not f.path.startswith(prefix):
                continue
            rel = f.path[len(prefix) :]
            if "/" in rel:
                dirs.add(prefix + rel.split("/", 1)[0])
                if not recursive:
                    continue
            entry: dict[str, Any] = {
                "type": "file",
                "oid": hashlib.sha1(f.path.encode()).hexdigest(),
                "size": f.size,
                "path": f.path,
            }
            if f.lfs:
                entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": 134}
            entries.append(entry)
        for d in sorted(dirs):
            entries.append({"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0, "path": d})
        return self._send_listing(entries, query)

    def _send_listing(self, entries: list[dict[str, Any]], query: dict[str, list[str]]) -> int:
        hub = self.hub
        headers: dict[str, str] = {}
        if hub.page_size is not None:
            cursor = int(query.get("cursor", ["0"])[0])
            if cursor + hub.page_size < len(entries):
                path = urlsplit(self.path).path
                headers["Link"] = f'<{hub.endpoint}{path}?recursive=true&cursor={cursor + hub.page_size}>; rel="next"'
            entries = entries[cursor : cursor + hub.page_size]
        if hub.listing_next is not None:
            target = f"{hub.endpoint}{self.path}" if hub.listing_next == "self" else hub.listing_next
            headers["Link"] = f'<{target}>; rel="next"'
        if hub.listing_body is None:
            return self._send_json(200, entries, headers)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()  # no Content-Length: the body ends when the connection closes
        chunks = [hub.listing_body] if isinstance(hub.listing_body, bytes) else hub.listing_body()
        for chunk in chunks:
            if hub._closing.is_set():
                break
            self._write(chunk)
        self.close_connection = True
        return 200

    def _resolve(self, rest: str, body: bool) -> int:
        repo_id, _, tail = rest.partition("/resolve/")
        repo = self.hub._repo(repo_id)
        denied = self._auth_error(repo, repo_id)
        if denied is not None or repo is None:
            return denied or 404
        _, _, file_path = tail.partition("/")
        hosted = next((f for f in repo.files if f.path == file_path), None)
        if hosted is None:
            return self._send_json(
                404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound", "X-Error-Message": "not found"}
            )
        if not hosted.lfs:
            return self._serve_bytes(hosted, body)
        location = f"{self.hub.endpoint}/cdn/{hosted.index}/{quote(PurePath(hosted.path).name)}"
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("X-Linked-Size", str(hosted.size))
        self.send_header("X-Linked-Etag", f'"{hosted.sha256}"')
        self.send_header("X-Repo-Commit", "0" * 40)
        self.send_header("ETag", f'"{hosted.sha256}"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return 302

    def _cdn(self, path: str, body: bool) -> int:
        try:
            index = int(path.split("/")[2])
        except (IndexError, ValueError):
            return self._send_json(404, {"error": "no such object"})
        hosted = self.hub._file(index)
        if hosted is None:
            return self._send_json(404, {"error": "no such object"})
        return self._serve_bytes(hosted, body)

    def _serve_bytes(self, hosted: HostedFile, body: bool) -> int:
        hub = self.hub
        size = hosted.size
        start, end = 0, size - 1
        status = 200
        header = self.headers.get("Range")
        if header and hub.ranges and header.startswith("bytes="):
            first, _, last = header[len("bytes=") :].partition("-")
            start = int(first) if first else 0
            end = min(int(last), size - 1) if last else size - 1
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return 416
            status = 206
        length = end - start + 1
        lie = hub.hostile.range_lie if self.path.startswith(hub.hostile.prefix) else None
        self.sent_status = status
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length + 1000 if lie == "length" else length))
        self.send_header("ETag", f'"{hosted.true_sha256}"')
        if hub.ranges:
            self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            shown_start = start + 4096 if lie == "start" else start
            shown_size = size + 1 if lie == "total" else size
            self.send_header("Content-Range", f"bytes {shown_start}-{end}/{shown_size}")
        self.end_headers()
        if not body:
            return status
        # How much of the promised body to send before "dropping the connection".
        stop = end + 1
        if hub.drop_after is not None:
            stop = min(stop, start + hub.drop_after)
        if hub.drop_at is not None and hub.drop_at > start:
            stop = min(stop, hub.drop_at)
        elif hub.drop_at is not None:
            stop = start  # already at the failing offset: nothing more comes
        with open(hosted.local, "rb") as f:
            f.seek(start)
            pos = start
            while pos < stop:
                block = f.read(min(1 << 16, stop - pos))
                if not block or hub._closing.is_set():
                    break
                self._write(block)
                pos += len(block)
        if stop <= end or lie == "length":
            self.close_connection = True  # the client sees fewer bytes than Content-Length
        return status
