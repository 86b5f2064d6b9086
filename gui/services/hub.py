"""Hugging Face hub: list a repository's GGUF files and read their headers by range request.

``huggingface_hub`` does the listing (``HfApi.list_repo_tree``: pagination, auth headers, the hub's
error codes) and builds the file URLs (``hf_hub_url``). Reading a header does not use it: a header
needs a Range request for the first megabytes only (:mod:`gui.services.remote_header`). Downloading
the file a user picks is :mod:`gui.services.download`; :meth:`HubClient.download` sets one up with
the client's token and timeout.

Errors reach the user as :class:`HubError` with one line of words. Nothing here touches Qt.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import urlparse

from gui.core.gguf_reader import GGUFHeader, combine_split, parse_split_name
from gui.services.download import Download, DownloadProgress
from gui.services.remote_file import HubError, RemoteFile, http_words
from gui.services.remote_header import RemoteHeaderError, fetch_header

__all__ = ["HubClient", "parse_repo_id"]

DEFAULT_ENDPOINT = "https://huggingface.co"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def parse_repo_id(text: str) -> str:
    """``owner/name`` from what a user types or pastes (a hub URL works too)."""
    value = text.strip().rstrip("/")
    for prefix in ("https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "hf.co/"):
        if value.lower().startswith(prefix):
            value = value[len(prefix) :]
            break
    value = "/".join(value.split("/")[:2])
    if not _REPO_ID.match(value) or ".." in value:
        raise HubError(f"{text.strip()!r} is not a repository name: type it as owner/name")
    return value


class HubClient:
    """Talks to one hub endpoint (``HF_ENDPOINT`` / huggingface.co by default, or a local server)."""

    def __init__(self, endpoint: str | None = None, token: str | None = None, timeout: float = 30.0) -> None:
        if endpoint is None:
            try:
                from huggingface_hub import constants

                endpoint = constants.ENDPOINT
            except ImportError:  # pragma: no cover - a declared dependency
                endpoint = DEFAULT_ENDPOINT
        self.endpoint = endpoint.rstrip("/")
        self.token = token
        self.timeout = timeout
        parsed = urlparse(self.endpoint)
        self._host = parsed.hostname or self.endpoint
        self._port = parsed.port or (443 if parsed.scheme == "https" else 80)

    # -- reachability ----------------------------------------------------------------------------

    def check_online(self) -> None:
        """Raise HubError("offline: ...") unless a TCP connection to the hub opens.

        One quick connection up front: huggingface_hub retries network errors with backoff for
        half a minute, far too long to tell a user they are offline.
        """
        try:
            from huggingface_hub import constants

            if constants.is_offline_mode():
                raise HubError("offline mode is on (HF_HUB_OFFLINE): the hub is not contacted; local models work")
        except ImportError:  # pragma: no cover
            pass
        try:
            with socket.create_connection((self._host, self._port), timeout=min(self.timeout, 5.0)):
                pass
        except socket.gaierror as exc:
            raise HubError(f"offline: cannot reach {self._host} (name lookup failed: {exc.strerror or exc})") from exc
        except OSError as exc:
            raise HubError(f"offline: cannot reach {self._host} ({exc.strerror or exc})") from exc

    # -- listing ---------------------------------------------------------------------------------

    def list_gguf(self, repo_id: str, revision: str = "main") -> list[RemoteFile]:
        """The repository's GGUF files with sizes and LFS SHA-256, split models as one entry each."""
        repo = parse_repo_id(repo_id)
        self.check_online()
        try:
            from huggingface_hub import HfApi, hf_hub_url
        except ImportError as exc:  # pragma: no cover
            raise HubError("huggingface_hub is not installed") from exc
        api = HfApi(endpoint=self.endpoint, token=self.token)
        try:
            items = list(api.list_repo_tree(repo, recursive=True, revision=revision))
        except Exception as exc:
            raise _hub_error(exc, repo, revision) from exc
        singles: list[RemoteFile] = []
        for item in items:
            path = getattr(item, "path", "")
            size = getattr(item, "size", None)
            if not path.lower().endswith(".gguf") or size is None:
                continue  # folders have no size
            lfs = getattr(item, "lfs", None)
            sha = None
            if lfs is not None:
                sha = getattr(lfs, "sha256", None) or (lfs.get("sha256") if isinstance(lfs, dict) else None)
            url = hf_hub_url(repo, path, revision=revision, endpoint=self.endpoint)
            singles.append(RemoteFile(path, int(size), sha, url, repo, revision))
        return _group_splits(singles)

    # -- headers ---------------------------------------------------------------------------------

    def read_header(self, remote: RemoteFile) -> GGUFHeader:
        """The model's header from range requests (a few MB per file, never the weights).

        Raises GGUFError when the file is not a usable GGUF and HubError when the hub cannot be read.
        """
        headers = [self._read_one(f) for f in remote.files]
        return headers[0] if len(headers) == 1 else _combine(headers, remote)

    def _read_one(self, f: RemoteFile) -> GGUFHeader:
        try:
            return fetch_header(f.url, timeout=self.timeout, token=self.token)
        except RemoteHeaderError as exc:
            raise HubError(_header_words(str(exc))) from exc

    # -- download --------------------------------------------------------------------------------

    def download(
        self,
        remote: RemoteFile,
        dest_dir: str | os.PathLike[str],
        on_progress: Callable[[DownloadProgress], None] | None = None,
        **options: Any,
    ) -> Download:
        """A :class:`Download` of ``remote`` into ``dest_dir`` (not started)."""
        return Download(remote, dest_dir, token=self.token, on_progress=on_progress, timeout=self.timeout, **options)


def _group_splits(files: Iterable[RemoteFile]) -> list[RemoteFile]:
    out: list[RemoteFile] = []
    sets: dict[tuple[str, str, int], list[tuple[int, RemoteFile]]] = {}
    for f in files:
        split = parse_split_name(f.name)
        if split is None:
            out.append(f)
        else:
            folder = str(PurePosixPath(f.path).parent)
            sets.setdefault((folder, split.stem, split.count), []).append((split.part, f))
    for members in sets.values():
        members.sort(key=lambda t: t[0])
        parts = tuple(f for _, f in members)
        first = parts[0]
        out.append(replace(first, size=sum(p.size for p in parts), sha256=None, parts=parts))
    out.sort(key=lambda f: f.path.lower())
    return out


def _combine(headers: list[GGUFHeader], remote: RemoteFile) -> GGUFHeader:
    """One header for a split model read part by part, checked as read_model checks files on disk."""
    header = combine_split(headers, [f.name for f in remote.files])
    if header.file_size is None:
        header.file_size = remote.size
    return header


def _hub_error(exc: BaseException, repo: str, revision: str) -> HubError:
    if isinstance(exc, HubError):
        return exc
    try:
        from huggingface_hub import errors
    except ImportError:  # pragma: no cover
        return HubError(f"{repo}: {exc}")
    if isinstance(exc, errors.GatedRepoError):
        return HubError(f"{repo}: gated repository: accept its terms on the hub and use a token")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(f"{repo}: repository not found or private (a private one needs a token)")
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(f"{repo}: revision {revision!r} not found")
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status == 401:
            return HubError(f"{repo}: the hub refused the token (401): check it")
        if status == 403:
            return HubError(f"{repo}: access denied (403): the token lacks permission for this repository")
        return HubError(f"{repo}: the hub answered {status or 'an error'}")
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return HubError("offline mode is on (HF_HUB_OFFLINE): the hub is not contacted; local models work")
    # httpx/requests network errors differ between huggingface_hub versions; all mean the same.
    return HubError(f"offline: cannot reach the hub ({type(exc).__name__}: {exc})")


def _header_words(message: str) -> str:
    m = re.search(r"answered (\d{3})", message)
    if m is not None:
        name = message.split(":", 1)[0]
        return http_words(int(m.group(1)), name)
    return message.replace("cannot reach the server", "offline: cannot reach the server")
