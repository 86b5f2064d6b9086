"""Resumable, verified downloads of a hub file (or every part of a split model) into a folder.

A download does not use ``huggingface_hub``: writing ``models/NAME.part`` with pause, resume across
restarts and a SHA-256 check does not fit its cache layout. Requests are
:mod:`gui.services.bounded_http`'s: the ``/{repo}/resolve/{rev}/{file}`` URL redirects large files to
a CDN (http(s) only, never https to http), and the Authorization header goes to the hub only, never
to the redirect target.

A slow or stuck server cannot hold a download: the body is read one socket read at a time, pause
and cancel shut the connection down at once, an answer must begin within ``timeout`` seconds, and a
transfer slower than ``min_rate_bps`` over ``stall_window_s`` counts as a failed try.

Errors end a download with one line of words (:class:`HubError`); it and the progress messages are sentences
composed with gui/core/words.py, which the window shows translated. Nothing here touches Qt; downloads run on
their own thread and report through a callback.
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
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gui.core.words import Text, english_error, message_of, words
from gui.services.bounded_http import (
    Cutoff,
    Dropped,
    HttpStatus,
    RedirectRefused,
    TransferError,
    get,
    read_piece,
)
from gui.services.remote_file import HubError, RemoteFile, http_words, safe_file_name

__all__ = ["Download", "DownloadProgress", "pending_downloads"]

log = logging.getLogger(__name__)

SIDECAR_VERSION = 1


@dataclass(frozen=True)
class DownloadProgress:
    done: int  # bytes on disk, all parts
    total: int
    rate_bps: float  # bytes per second over the last few seconds
    state: str  # "running" | "paused" | "verifying" | "done" | "failed" | "cancelled"
    message: Text = ""  # the latest thing worth saying ("restarting from 0: ..."), in words (gui/core/words.py)
    file: str = ""  # the part being fetched

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


class _Paused(Exception):
    pass


class _Cancelled(Exception):
    pass


class _Stalled(Exception):
    """Bytes came, but too slowly to call it progress."""


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
    """The sidecar at ``path``; None when it is missing, unreadable or of another version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        meta = _Meta(
            url=str(data["url"]),
            size=int(data["size"]),
            sha256=data.get("sha256"),
            etag=data.get("etag"),
            model=dict(data.get("model") or {}),
            version=int(data.get("version", SIDECAR_VERSION)),
        )
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    return meta if meta.version == SIDECAR_VERSION else None


def _save_meta(path: Path, meta: _Meta) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(meta), indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _resumable(part: Path, f: RemoteFile) -> tuple[int, _Meta | None]:
    """The bytes of ``part`` a download of ``f`` may resume from, and its sidecar; (0, None) unless the
    sidecar verifies (this file's URL, size and SHA-256) and the part holds 1 to ``f.size`` bytes."""
    meta = _load_meta(_sidecar(part))
    if meta is None or (meta.url, meta.size, meta.sha256) != (f.url, f.size, f.sha256):
        return 0, None
    try:
        held = part.stat().st_size if part.is_file() else 0
    except OSError:
        return 0, None
    return (held, meta) if 0 < held <= f.size else (0, None)


def pending_downloads(dest_dir: str | os.PathLike[str]) -> list[tuple[RemoteFile, int]]:
    """Interrupted downloads in ``dest_dir`` and the bytes already there: only those whose partial file
    has a sidecar that verifies, so what is offered for resume is what a resume would continue."""
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
        except (KeyError, ValueError, TypeError, RecursionError):
            continue
        if not all(safe_file_name(f.name) for f in remote.files):
            continue
        mine = next((f for f in remote.files if f.name + ".part.json" == side.name), None)
        if mine is None or _resumable(folder / (mine.name + ".part"), mine)[0] == 0:
            continue
        done = 0
        for f in remote.files:
            final = folder / f.name
            if final.is_file():
                done += f.size
            else:
                done += _resumable(folder / (f.name + ".part"), f)[0]
        found[remote.path] = (remote, done)
    return list(found.values())


class Download:
    """One model file (or every part of a split model) into ``dest_dir``, on a background thread.

    Bytes go to ``NAME.part`` beside a ``NAME.part.json`` sidecar (url, size, sha256, etag), both
    written when the first byte arrives, so a failure before it (no disk space, an error status, a
    refused redirect) leaves nothing to resume. A new Download of the same file after a restart
    resumes with a Range request. A server that ignores Range makes it start over from byte 0, and
    the progress message says so. A dropped or stalled connection is resumed up to ``max_retries``
    times in a row without progress, then the download fails with the partial file kept. At the end
    the SHA-256 is checked against the hub's (a mismatch deletes the partial file) and the file is
    renamed into place.

    ``token``: the hub token, or a function giving it (called on the download's thread).
    """

    def __init__(
        self,
        remote: RemoteFile,
        dest_dir: str | os.PathLike[str],
        *,
        token: str | Callable[[], str | None] | None = None,
        on_progress: Callable[[DownloadProgress], None] | None = None,
        timeout: float = 15.0,
        max_retries: int = 5,
        retry_delay_s: float = 1.0,
        chunk_size: int = 1 << 20,
        progress_interval_s: float = 0.1,
        stall_window_s: float = 30.0,
        min_rate_bps: float = 1024.0,
    ) -> None:
        self.remote = remote
        self.dest_dir = Path(dest_dir)
        self._token_source = token
        self._token: str | None = None
        self._on_progress = on_progress
        self._timeout = timeout
        self._max_retries = max_retries
        self._retry_delay = retry_delay_s
        self._chunk = chunk_size
        self._interval = progress_interval_s
        self._stall_window = stall_window_s
        self._min_rate = min_rate_bps
        self._cv = threading.Condition()
        self._state = "idle"
        self._error: Text | None = None
        self._messages: list[Text] = []
        self._pause = False
        self._cancel = False
        self._delete_on_cancel = False
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._cut: Cutoff | None = None  # the request in flight, ended at once by pause and cancel
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
    def error(self) -> Text | None:
        with self._cv:
            return self._error

    @property
    def messages(self) -> list[Text]:
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
            if self._state in ("running", "done"):
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
        """Stop now, keeping the partial file (returns at once; see wait())."""
        with self._cv:
            if self._state != "running":
                return
            self._pause = True
            cut = self._cut
        self._interrupt(cut, "paused")

    def cancel(self, delete_partial: bool = True) -> None:
        """Stop now and, with ``delete_partial``, remove the partial file and its sidecar. A resting
        download is cancelled in the calling thread (which then deletes the files)."""
        with self._cv:
            cut = self._cut
            if self._state == "running":
                self._cancel = True
                self._delete_on_cancel = delete_partial
                resting = False
            elif self._state in ("idle", "paused", "failed"):
                self._state = "cancelled"
                resting = True
            else:
                return
        if not resting:
            self._interrupt(cut, "cancelled")
            return
        if delete_partial:
            self._delete_partials()
        self._finish("cancelled", self._cancelled_words(delete_partial))

    def _interrupt(self, cut: Cutoff | None, reason: str) -> None:
        self._wake.set()
        if cut is not None:
            cut.trip(reason)

    # -- the thread ------------------------------------------------------------------------------

    def _say(self, message: Text) -> None:
        log.info("download %s: %s", self.remote.name, message)
        with self._cv:
            self._messages.append(message)
        self._report(force=True, message=message)

    def _report(self, *, force: bool = False, message: Text = "", state: str | None = None) -> None:
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

    def _finish(self, state: str, message: Text | None = None, *, error: bool = False) -> None:
        with self._cv:
            self._state = state
            self._error = message if error else None
            self._cut = None
        self._report(force=True, message=message or "", state=state)
        with self._cv:
            self._cv.notify_all()

    def _cancelled_words(self, deleted: bool) -> Text:
        if deleted:
            return words("Download of {file} cancelled; the partial file was removed.", file=self.remote.name)
        return words("Download of {file} cancelled; the partial file is kept.", file=self.remote.name)

    def _run(self) -> None:
        try:
            source = self._token_source
            self._token = source() if callable(source) else source
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
            self._drop_empty_parts()
            self._finish("paused")
        except _Cancelled:
            if self._delete_on_cancel:
                self._delete_partials()
            else:
                self._drop_empty_parts()
            self._finish("cancelled", self._cancelled_words(self._delete_on_cancel))
        except HubError as exc:
            self._drop_empty_parts()
            self._finish("failed", message_of(exc), error=True)
        except Exception as exc:  # a bug or an odd OS error must end in words, not a dead thread
            log.exception("download %s failed", self.remote.name)
            self._drop_empty_parts()
            failed = words(
                "{file}: download failed ({error})",
                file=self.remote.name,
                error=f"{type(exc).__name__}: {english_error(exc)}",
            )
            self._finish("failed", failed, error=True)

    def _delete_partials(self) -> None:
        for f in self.remote.files:
            for p in (self.part_path(f), self.sidecar_path(f)):
                with contextlib.suppress(OSError):
                    p.unlink()
        self._hash = None

    def _drop_empty_parts(self) -> None:
        """A part without a byte in it is nothing to resume: it and its sidecar go."""
        for f in self.remote.files:
            part = self.part_path(f)
            with contextlib.suppress(OSError):
                if part.stat().st_size == 0:
                    part.unlink()
            if not part.exists():
                with contextlib.suppress(OSError):
                    self.sidecar_path(f).unlink()

    def _check_interrupt(self) -> None:
        if self._cancel:
            raise _Cancelled
        if self._pause:
            raise _Paused

    def _fetch(self, f: RemoteFile) -> None:
        final = self.dest_dir / f.name
        if final.exists():
            if final.is_file() and final.stat().st_size == f.size:
                self._say(words("{file} is already in {folder}", file=f.name, folder=str(self.dest_dir)))
                return
            raise HubError(
                words(
                    "{file}: a different file of that name is already in {folder}",
                    file=f.name,
                    folder=str(self.dest_dir),
                )
            )
        part = self.part_path(f)
        offset, meta = _resumable(part, f)
        if offset:
            self._say(words("resuming {file} at {offset} of {size} bytes", file=f.name, offset=offset, size=f.size))
        free = shutil.disk_usage(self.dest_dir).free
        if free < f.size - offset:
            raise HubError(
                words(
                    "{file}: not enough disk space: {needed} GiB more needed, {free} GiB free in {folder}",
                    file=f.name,
                    needed=f"{(f.size - offset) / 2**30:.1f}",
                    free=f"{free / 2**30:.1f}",
                    folder=str(self.dest_dir),
                )
            )
        meta = meta or _Meta(url=f.url, size=f.size, sha256=f.sha256, model=self.remote.to_dict())
        hasher = self._hasher_for(part, offset)
        self._current = offset
        failures = 0
        while offset < f.size:
            self._check_interrupt()
            before = offset
            try:
                offset, hasher = self._attempt(f, part, meta, offset, hasher)
            except (TransferError, _Stalled) as exc:
                self._check_interrupt()
                if isinstance(exc, RedirectRefused):
                    raise HubError(words("{file}: {problem}", file=f.name, problem=message_of(exc))) from exc
                if isinstance(exc, HttpStatus) and exc.code < 500 and exc.code not in (408, 429):
                    raise HubError(
                        http_words(exc.code, f.name, token_sent=bool(self._token), error_code=exc.error_code)
                    ) from exc
                offset = part.stat().st_size if part.exists() else 0
                hasher = self._hasher_for(part, offset, hasher if self._hash_matches(part, offset) else None)
                stalled = isinstance(exc, _Stalled)
                failures = 0 if offset > before and not stalled else failures + 1
                figures = {"file": f.name, "offset": offset, "size": f.size, "problem": message_of(exc)}
                if failures > self._max_retries:
                    raise HubError(
                        words(
                            "{file}: {trouble} at {offset} of {size} bytes ({problem}); gave up after {tries} tries "
                            "without progress. {outcome}",
                            trouble=words("the server kept sending too slowly")
                            if stalled
                            else words("the connection kept dropping"),
                            tries=failures,
                            outcome=words("The partial file is kept: resume to continue")
                            if offset
                            else words("Nothing was written"),
                            **figures,
                        )
                    ) from exc
                self._say(
                    words(
                        "{trouble} at {offset} of {size} bytes ({problem}); trying again",
                        trouble=words("too slow") if stalled else words("connection lost"),
                        **figures,
                    )
                )
                if failures and self._retry_delay > 0:
                    self._wake.wait(min(self._retry_delay * 2 ** (failures - 1), 30.0))
            finally:
                self._hash = (part, offset, hasher)
        self._verify_and_place(f, part, _sidecar(part), hasher)

    def _hash_matches(self, part: Path, offset: int) -> bool:
        return self._hash is not None and self._hash[0] == part and self._hash[1] == offset

    def _hasher_for(self, part: Path, offset: int, current: Any = None) -> Any:
        if current is not None:
            return current
        if self._hash_matches(part, offset):
            assert self._hash is not None
            return self._hash[2]
        # Resuming a part written by an earlier run: hash what is on disk once (gigabytes: a pause or
        # cancel is noticed between blocks).
        hasher = hashlib.sha256()
        if offset:
            with open(part, "rb") as fh:
                remaining = offset
                while remaining:
                    self._check_interrupt()
                    block = fh.read(min(1 << 22, remaining))
                    if not block:
                        break
                    hasher.update(block)
                    remaining -= len(block)
        return hasher

    def _attempt(self, f: RemoteFile, part: Path, meta: _Meta, offset: int, hasher: Any) -> tuple[int, Any]:
        """One HTTP request from ``offset``; returns the new offset (== size when complete)."""
        cut = Cutoff()
        with self._cv:
            self._cut = cut
        try:
            self._check_interrupt()  # a pause that came before this request had no cutoff to trip
            cut.arm(self._timeout, words("no answer within {seconds} s", seconds=f"{self._timeout:g}"))
            headers = {"Range": f"bytes={offset}-"} if offset else {}
            response = get(f.url, cut, headers=headers, token=self._token, socket_timeout=self._timeout)
            cut.disarm()  # from here the stall window judges the pace
            with response:
                start = self._check_answer(f, part, meta, response, offset)
                if start != offset:
                    if response.status == 206:  # the file changed: this body is of the old one
                        return 0, hashlib.sha256()
                    offset, hasher = 0, hashlib.sha256()  # a whole file instead of the range asked for
                return self._receive(f, part, meta, response, cut, offset, hasher)
        finally:
            cut.disarm()
            with self._cv:
                self._cut = None

    def _check_answer(
        self, f: RemoteFile, part: Path, meta: _Meta, response: http.client.HTTPResponse, offset: int
    ) -> int:
        """Where the answer's body starts in the file (``offset``, or 0 to start over); refuses one
        that does not match the file the hub listed."""
        etag = response.headers.get("ETag") or response.headers.get("X-Linked-Etag")
        length = response.headers.get("Content-Length", "").strip()
        body_from = offset if response.status == 206 else 0
        if length.isdigit() and int(length) != f.size - body_from:
            raise HubError(
                words(
                    "{file}: the server offers {length} bytes from byte {start}, the hub lists {size}",
                    file=f.name,
                    length=length,
                    start=body_from,
                    size=f.size,
                )
            )
        start = offset
        if response.status == 206:
            content_range = response.headers.get("Content-Range", "")
            first, _, total = content_range.removeprefix("bytes ").partition("/")
            first = first.partition("-")[0].strip()
            if first != str(offset):
                sent = content_range[:60]
                raise HubError(
                    words(
                        "{file}: the server sent the wrong bytes (Content-Range: {sent} for byte {offset})",
                        file=f.name,
                        sent=sent,
                        offset=offset,
                    )
                )
            if total.isdigit() and int(total) != f.size:
                raise HubError(
                    words(
                        "{file}: the server's file has {total} bytes, the hub lists {size}",
                        file=f.name,
                        total=total,
                        size=f.size,
                    )
                )
            if offset and meta.etag and etag and etag != meta.etag:
                self._say(words("{file}: the file changed on the server; restarting from 0", file=f.name))
                with contextlib.suppress(OSError):
                    part.unlink()
                self._current = 0
                start = 0
        elif response.status == 200:
            if offset:
                self._say(
                    words(
                        "{file}: the server does not support resuming (no range requests); restarting from 0",
                        file=f.name,
                    )
                )
                self._current = 0
                start = 0
        else:
            raise HubError(
                words("{file}: the server answered {status} instead of the file", file=f.name, status=response.status)
            )
        if etag and etag != meta.etag:
            meta.etag = etag
            if start and part.exists():
                _save_meta(_sidecar(part), meta)
        return start

    def _receive(
        self,
        f: RemoteFile,
        part: Path,
        meta: _Meta,
        response: http.client.HTTPResponse,
        cut: Cutoff,
        offset: int,
        hasher: Any,
    ) -> tuple[int, Any]:
        """The body into ``part`` from ``offset``, one socket read at a time; the part (and its sidecar)
        are created with the first byte."""
        out = None
        window_start, window_done = time.monotonic(), offset
        try:
            while offset < f.size:
                self._check_interrupt()  # bytes already buffered would otherwise still be read
                chunk = read_piece(response, min(self._chunk, f.size - offset), cut)
                if not chunk:
                    raise Dropped(
                        words("the connection closed after {offset} of {size} bytes", offset=offset, size=f.size)
                    )
                if out is None:
                    out = self._open_part(part, meta, offset)
                out.write(chunk)
                hasher.update(chunk)
                offset += len(chunk)
                self._current = offset
                self._hash = (part, offset, hasher)
                self._report()
                now = time.monotonic()
                if now - window_start >= self._stall_window:
                    rate = (offset - window_done) / (now - window_start)
                    if rate < self._min_rate:
                        raise _Stalled(
                            words(
                                "{rate} bytes/s over {seconds} s",
                                rate=f"{rate:.0f}",
                                seconds=f"{now - window_start:.0f}",
                            )
                        )
                    window_start, window_done = now, offset
        finally:
            if out is not None:
                out.close()
        return offset, hasher

    def _open_part(self, part: Path, meta: _Meta, offset: int) -> Any:
        if offset == 0:
            _save_meta(_sidecar(part), meta)  # first: a part never exists without its sidecar
            return open(part, "wb")  # closed by _receive
        out = open(part, "r+b")  # noqa: SIM115 - closed by _receive
        out.seek(offset)
        out.truncate()
        return out

    def _verify_and_place(self, f: RemoteFile, part: Path, side: Path, hasher: Any) -> None:
        size = part.stat().st_size
        if size != f.size:
            raise HubError(words("{file}: got {got} bytes, the hub lists {size}", file=f.name, got=size, size=f.size))
        self._report(force=True, state="verifying")
        if f.sha256:
            got = hasher.hexdigest()
            if got.lower() != f.sha256.lower():
                for p in (part, side):
                    with contextlib.suppress(OSError):
                        p.unlink()
                self._hash = None
                raise HubError(
                    words(
                        "{file}: SHA-256 mismatch (expected {expected}…, got {got}…); the download was deleted",
                        file=f.name,
                        expected=f.sha256[:16],
                        got=got[:16],
                    )
                )
        else:
            self._say(words("{file}: the hub lists no SHA-256; only the size was checked", file=f.name))
        os.replace(part, self.dest_dir / f.name)
        with contextlib.suppress(OSError):
            side.unlink()
        self._hash = None
