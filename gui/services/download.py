"""Resumable, verified downloads of a hub file (or every part of a split model) into a folder.

A download does not use ``huggingface_hub``: writing ``models/NAME.part`` with pause, resume across
restarts and a SHA-256 check does not fit its cache layout. It uses urllib: the
``/{repo}/resolve/{rev}/{file}`` URL redirects large files to a CDN, and the Authorization header is
sent to the hub only, never to the redirect target.

Errors end a download with one line of words (:class:`HubError`). Nothing here touches Qt; downloads
run on their own thread and report through a callback.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import logging
import os
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gui.services.remote_file import HubError, RemoteFile, http_words

__all__ = ["Download", "DownloadProgress", "pending_downloads"]

log = logging.getLogger(__name__)

USER_AGENT = "tightfit (GGUF downloader)"
SIDECAR_VERSION = 1


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        exc = reason
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _open(
    url: str, token: str | None, timeout: float, *, start: int = 0, end: int | None = None
) -> http.client.HTTPResponse:
    req = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    if start > 0 or end is not None:
        req.add_header("Range", f"bytes={start}-{'' if end is None else end}")
    if token:
        # Unredirected: the hub redirects large files to a CDN, which must not see the token.
        req.add_unredirected_header("Authorization", f"Bearer {token}")
    resp: http.client.HTTPResponse = urllib.request.urlopen(req, timeout=timeout)
    return resp


@dataclass(frozen=True)
class DownloadProgress:
    done: int  # bytes on disk, all parts
    total: int
    rate_bps: float  # bytes per second over the last few seconds
    state: str  # "running" | "paused" | "verifying" | "done" | "failed" | "cancelled"
    message: str = ""  # the latest thing worth saying ("restarting from 0: ...")
    file: str = ""  # the part being fetched

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class _Paused(Exception):
    pass


class _Cancelled(Exception):
    pass


class _Dropped(Exception):
    """The connection ended before the bytes it promised."""


_RESTING = ("idle", "paused", "done", "failed", "cancelled")


def _sidecar(part: Path) -> Path:
    return part.with_name(part.name + ".json")


@dataclass
class _Meta:
    url: str
    size: int
    sha256: str | None
    etag: str | None = None
    model: dict[str, Any] = field(default_factory=dict)
    version: int = SIDECAR_VERSION


def _load_meta(path: Path) -> _Meta | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return _Meta(
            url=str(data["url"]),
            size=int(data["size"]),
            sha256=data.get("sha256"),
            etag=data.get("etag"),
            model=dict(data.get("model") or {}),
            version=int(data.get("version", SIDECAR_VERSION)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _save_meta(path: Path, meta: _Meta) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(meta), indent=1), encoding="utf-8")
    os.replace(tmp, path)


def pending_downloads(dest_dir: str | os.PathLike[str]) -> list[tuple[RemoteFile, int]]:
    """Interrupted downloads in ``dest_dir`` (from their sidecars) and the bytes already there."""
    found: dict[str, tuple[RemoteFile, int]] = {}
    folder = Path(dest_dir)
    if not folder.is_dir():
        return []
    for side in sorted(folder.glob("*.part.json")):
        meta = _load_meta(side)
        if meta is None or not meta.model:
            continue
        try:
            remote = RemoteFile.from_dict(meta.model)
        except (KeyError, ValueError, TypeError):
            continue
        done = 0
        for f in remote.files:
            part = folder / (f.name + ".part")
            final = folder / f.name
            if final.is_file():
                done += f.size
            elif part.is_file():
                done += part.stat().st_size
        found[remote.path] = (remote, done)
    return list(found.values())


class Download:
    """One model file (or every part of a split model) into ``dest_dir``, on a background thread.

    Bytes go to ``NAME.part`` beside a ``NAME.part.json`` sidecar (url, size, sha256, etag), so a new
    Download of the same file after a restart resumes with a Range request. A server that ignores
    Range makes it start over from byte 0, and the progress message says so. A dropped connection is
    resumed up to ``max_retries`` times in a row without progress, then the download fails with the
    partial file kept. At the end the SHA-256 is checked against the hub's (a mismatch deletes the
    partial file) and the file is renamed into place.
    """

    def __init__(
        self,
        remote: RemoteFile,
        dest_dir: str | os.PathLike[str],
        *,
        token: str | None = None,
        on_progress: Callable[[DownloadProgress], None] | None = None,
        timeout: float = 30.0,
        max_retries: int = 5,
        retry_delay_s: float = 1.0,
        chunk_size: int = 1 << 20,
        progress_interval_s: float = 0.1,
    ) -> None:
        self.remote = remote
        self.dest_dir = Path(dest_dir)
        self._token = token
        self._on_progress = on_progress
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_delay = retry_delay_s
        self._chunk = chunk_size
        self._interval = progress_interval_s
        self._cv = threading.Condition()
        self._state = "idle"
        self._error: str | None = None
        self._messages: list[str] = []
        self._pause = False
        self._cancel = False
        self._delete_on_cancel = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._done_bytes = 0  # bytes of finished parts
        self._current = 0  # bytes of the part in progress
        self._rate: deque[tuple[float, int]] = deque(maxlen=64)
        self._last_report = 0.0
        # The running hash of the part in progress, kept across pause/resume in this process so a
        # resume does not re-read what is on disk: (part path, bytes hashed, hasher).
        self._hash: tuple[Path, int, Any] | None = None

    # -- paths -----------------------------------------------------------------------------------

    @property
    def path(self) -> Path:
        """Where the model ends up (part 1 for a split model)."""
        return self.dest_dir / self.remote.files[0].name

    def part_path(self, f: RemoteFile | None = None) -> Path:
        return self.dest_dir / ((f or self.remote.files[0]).name + ".part")

    def sidecar_path(self, f: RemoteFile | None = None) -> Path:
        return _sidecar(self.part_path(f))

    # -- state -----------------------------------------------------------------------------------

    @property
    def state(self) -> str:
        with self._cv:
            return self._state

    @property
    def error(self) -> str | None:
        with self._cv:
            return self._error

    @property
    def messages(self) -> list[str]:
        with self._cv:
            return list(self._messages)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the download rests (paused, done, failed, cancelled); False on timeout."""
        with self._cv:
            rested = self._cv.wait_for(lambda: self._state in _RESTING, timeout)
            thread = self._thread
        if rested and thread is not None and thread is not threading.current_thread():
            thread.join(timeout)  # it only has to return after reporting its final state
        return rested

    # -- control ---------------------------------------------------------------------------------

    def start(self) -> None:
        with self._cv:
            if self._state == "running":
                return
            if self._state == "done":
                return
            self._pause = False
            self._cancel = False
            self._error = None
            self._wake.clear()
            self._state = "running"
            self._thread = threading.Thread(target=self._run, name=f"download {self.remote.name}", daemon=True)
            self._thread.start()

    resume = start

    def pause(self) -> None:
        """Stop after the current chunk, keeping the partial file (returns at once; see wait())."""
        with self._cv:
            if self._state != "running":
                return
            self._pause = True
        self._wake.set()

    def cancel(self, delete_partial: bool = True) -> None:
        with self._cv:
            if self._state == "running":
                self._cancel = True
                self._delete_on_cancel = delete_partial
            elif self._state in ("idle", "paused", "failed"):
                self._state = "cancelled"
                if delete_partial:
                    self._delete_partials()
                self._cv.notify_all()
        self._wake.set()

    # -- the thread ------------------------------------------------------------------------------

    def _say(self, message: str) -> None:
        log.info("download %s: %s", self.remote.name, message)
        with self._cv:
            self._messages.append(message)
        self._report(force=True, message=message)

    def _report(self, *, force: bool = False, message: str = "", state: str | None = None) -> None:
        if self._on_progress is None:
            return
        now = time.monotonic()
        if not force and now - self._last_report < self._interval:
            return
        self._last_report = now
        done = self._done_bytes + self._current
        self._rate.append((now, done))
        while len(self._rate) > 2 and now - self._rate[0][0] > 3.0:
            self._rate.popleft()
        t0, d0 = self._rate[0]
        rate = (done - d0) / (now - t0) if now > t0 else 0.0
        progress = DownloadProgress(done, self.remote.size, rate, state or self.state, message, self._file_name)
        try:
            self._on_progress(progress)
        except Exception:
            log.exception("download progress callback failed")

    _file_name = ""

    def _finish(self, state: str, error: str | None = None) -> None:
        with self._cv:
            self._state = state
            self._error = error
        self._report(force=True, message=error or "", state=state)
        with self._cv:
            self._cv.notify_all()

    def _run(self) -> None:
        try:
            self.dest_dir.mkdir(parents=True, exist_ok=True)
            self._done_bytes = 0
            for f in self.remote.files:
                self._file_name = f.name
                self._current = 0
                self._fetch(f)
                self._done_bytes += f.size
                self._current = 0
            self._finish("done")
        except _Paused:
            self._finish("paused")
        except _Cancelled:
            if self._delete_on_cancel:
                self._delete_partials()
            self._finish("cancelled")
        except HubError as exc:
            self._finish("failed", str(exc))
        except Exception as exc:  # a bug or an odd OS error must end in words, not a dead thread
            log.exception("download %s failed", self.remote.name)
            self._finish("failed", f"{self.remote.name}: download failed ({type(exc).__name__}: {exc})")

    def _delete_partials(self) -> None:
        for f in self.remote.files:
            for p in (self.part_path(f), self.sidecar_path(f)):
                with contextlib.suppress(OSError):
                    p.unlink()

    def _check_interrupt(self) -> None:
        if self._cancel:
            raise _Cancelled
        if self._pause:
            raise _Paused

    def _fetch(self, f: RemoteFile) -> None:
        final = self.dest_dir / f.name
        if final.exists():
            if final.is_file() and final.stat().st_size == f.size:
                self._say(f"{f.name} is already in {self.dest_dir}")
                return
            raise HubError(f"{f.name}: a different file of that name is already in {self.dest_dir}")
        part = self.part_path(f)
        side = _sidecar(part)
        meta = _load_meta(side)
        offset = 0
        if part.exists() and meta is not None and (meta.url, meta.size, meta.sha256) == (f.url, f.size, f.sha256):
            offset = part.stat().st_size
            if offset > f.size:
                offset = 0
            elif offset:
                self._say(f"resuming {f.name} at {offset} of {f.size} bytes")
        else:
            meta = _Meta(url=f.url, size=f.size, sha256=f.sha256, model=self.remote.to_dict())
        if offset == 0:
            part.write_bytes(b"")
        _save_meta(side, meta)
        free = shutil.disk_usage(self.dest_dir).free
        if free < f.size - offset:
            raise HubError(
                f"{f.name}: not enough disk space: {(f.size - offset) / 2**30:.1f} GiB more needed, "
                f"{free / 2**30:.1f} GiB free in {self.dest_dir}"
            )
        hasher = self._hasher_for(part, offset)
        self._current = offset
        failures = 0
        while offset < f.size:
            self._check_interrupt()
            before = offset
            try:
                offset, hasher = self._attempt(f, part, side, meta, offset, hasher)
            except (_Dropped, http.client.HTTPException, ConnectionError, TimeoutError, urllib.error.URLError) as exc:
                if isinstance(exc, urllib.error.HTTPError) and exc.code < 500 and exc.code != 408:
                    raise HubError(http_words(exc.code, f.name)) from exc
                offset = part.stat().st_size
                hasher = self._hasher_for(part, offset, hasher if self._hash_matches(part, offset) else None)
                failures = 0 if offset > before else failures + 1
                if failures > self._max_retries:
                    raise HubError(
                        f"{f.name}: the connection kept dropping at {offset} of {f.size} bytes "
                        f"({_reason(exc)}); gave up after {failures} tries without progress. "
                        "The partial file is kept: resume to continue"
                    ) from exc
                self._say(f"connection lost at {offset} of {f.size} bytes ({_reason(exc)}); resuming")
                if failures and self._retry_delay > 0:
                    self._wake.wait(min(self._retry_delay * 2 ** (failures - 1), 30.0))
            finally:
                self._hash = (part, offset, hasher)
        self._verify_and_place(f, part, side, hasher)

    def _hash_matches(self, part: Path, offset: int) -> bool:
        return self._hash is not None and self._hash[0] == part and self._hash[1] == offset

    def _hasher_for(self, part: Path, offset: int, current: Any = None) -> Any:
        if current is not None:
            return current
        if self._hash_matches(part, offset):
            assert self._hash is not None
            return self._hash[2]
        # Resuming a part written by an earlier run: hash what is on disk once.
        hasher = hashlib.sha256()
        if offset:
            with open(part, "rb") as fh:
                remaining = offset
                while remaining:
                    block = fh.read(min(1 << 22, remaining))
                    if not block:
                        break
                    hasher.update(block)
                    remaining -= len(block)
        return hasher

    def _attempt(self, f: RemoteFile, part: Path, side: Path, meta: _Meta, offset: int, hasher: Any) -> tuple[int, Any]:
        """One HTTP request from ``offset``; returns the new offset (== size when complete)."""
        with _open(f.url, self._token, self._timeout, start=offset) as resp:
            etag = resp.headers.get("ETag") or resp.headers.get("X-Linked-Etag")
            if offset > 0 and resp.status == 200:
                self._say(f"{f.name}: the server does not support resuming (no range requests); restarting from 0")
                offset, hasher = 0, hashlib.sha256()
            elif offset > 0 and resp.status == 206:
                start = resp.headers.get("Content-Range", "").removeprefix("bytes ").split("-", 1)[0]
                if start != str(offset):
                    raise _Dropped(f"the server sent a range starting at {start!r}, not {offset}")
                if meta.etag and etag and etag != meta.etag:
                    self._say(f"{f.name}: the file changed on the server; restarting from 0")
                    part.write_bytes(b"")
                    self._current = 0
                    meta.etag = etag
                    _save_meta(side, meta)
                    return 0, hashlib.sha256()
            if etag and etag != meta.etag:
                meta.etag = etag
                _save_meta(side, meta)
            with open(part, "r+b") as out:
                out.seek(offset)
                out.truncate()
                self._current = offset
                while offset < f.size:
                    if self._pause or self._cancel:
                        out.flush()
                        self._hash = (part, offset, hasher)
                        self._check_interrupt()
                    chunk = resp.read(min(self._chunk, f.size - offset))
                    if not chunk:
                        raise _Dropped(f"the connection closed after {offset} of {f.size} bytes")
                    out.write(chunk)
                    hasher.update(chunk)
                    offset += len(chunk)
                    self._current = offset
                    self._hash = (part, offset, hasher)
                    self._report()
        return offset, hasher

    def _verify_and_place(self, f: RemoteFile, part: Path, side: Path, hasher: Any) -> None:
        size = part.stat().st_size
        if size != f.size:
            raise HubError(f"{f.name}: got {size} bytes, the hub lists {f.size}")
        self._report(force=True, state="verifying")
        if f.sha256:
            got = hasher.hexdigest()
            if got.lower() != f.sha256.lower():
                for p in (part, side):
                    with contextlib.suppress(OSError):
                        p.unlink()
                self._hash = None
                raise HubError(
                    f"{f.name}: SHA-256 mismatch (expected {f.sha256[:16]}…, got {got[:16]}…); the download was deleted"
                )
        else:
            self._say(f"{f.name}: the hub lists no SHA-256; only the size was checked")
        os.replace(part, self.dest_dir / f.name)
        with contextlib.suppress(OSError):
            side.unlink()
        self._hash = None
