"""Hugging Face hub: list a repository's GGUF files and read their headers by range request.

The listing is the hub's tree API (``/api/models/{repo}/tree/{revision}?recursive=true``, pages
linked by ``Link: <…>; rel="next"``, as ``HfApi.list_repo_tree`` reads it), fetched here with
:mod:`gui.services.bounded_http` rather than through huggingface_hub, so that a slow or hostile
server cannot hold it: one deadline for all pages, a cap on bytes and entries (past them the listing
is cut and says so), redirects to http(s) only. huggingface_hub gives the endpoint, the offline
switch, the file URLs (``hf_hub_url``) and the user's login token. Reading a header needs a Range
request for the first megabytes only (:mod:`gui.services.remote_header`). Downloading the file a
user picks is :mod:`gui.services.download`; :meth:`HubClient.download` sets one up.

The token (:mod:`gui.services.hub_token`: the window's, kept in the system keyring, else
``HF_TOKEN`` or the huggingface_hub login) goes with the listing, header reads and downloads alike,
to the hub only. Errors reach the user as :class:`HubError` with one line of words, a sentence composed with
gui/core/words.py (as are the listing's notes and the token's words), which the window shows translated. Nothing
here touches Qt; every call that talks to the network or the keyring belongs on a worker thread.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any, TypeGuard
from urllib.parse import quote, urljoin, urlparse

from gui.core.gguf_reader import GGUFHeader, combine_split, parse_split_name
from gui.core.words import Text, message_of, words
from gui.services.bounded_http import (
    Cut,
    Cutoff,
    HttpStatus,
    TransferError,
    Unreachable,
    get,
    read_up_to,
    same_origin,
)
from gui.services.download import Download, DownloadProgress
from gui.services.hub_token import KeyringUnavailable, TokenStore, login_token
from gui.services.remote_file import HubError, RemoteFile, http_words, safe_file_name
from gui.services.remote_header import RemoteHeaderError, fetch_header

__all__ = ["HubClient", "HubListing", "parse_repo_id"]

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "https://huggingface.co"
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
_NEXT = re.compile(r'<([^>]*)>\s*;[^,]*\brel="?next"?', re.IGNORECASE)
OFFLINE_MODE = words("offline mode is on (HF_HUB_OFFLINE): the hub is not contacted; local models work")


def parse_repo_id(text: str) -> str:
    """``owner/name`` from what a user types or pastes (a hub URL works too)."""
    value = text.strip().rstrip("/")
    for prefix in ("https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "hf.co/"):
        if value.lower().startswith(prefix):
            value = value[len(prefix) :]
            break
    value = "/".join(value.split("/")[:2])
    if not _REPO_ID.match(value) or ".." in value:
        raise HubError(words("{text} is not a repository name: type it as owner/name", text=repr(text.strip())))
    return value


@dataclass
class HubListing:
    """A repository's GGUF files, and what is worth saying about the listing (cut short, entries skipped)."""

    files: list[RemoteFile]
    notes: list[Text] = field(default_factory=list)


class HubClient:
    """Talks to one hub endpoint (``HF_ENDPOINT`` / huggingface.co by default, or a local server).

    ``token``: the token to send (else the keyring's, then huggingface_hub's). ``timeout``: seconds
    a connection may stay silent. ``deadline``: seconds one listing, or one file's header, may take
    in all. ``tokens``: where the window's token is kept (tests pass one with their own backend).
    """

    max_listing_bytes = 16 << 20  # the hub's tree pages are ~300 bytes an entry, 1000 entries a page
    max_listing_entries = 20_000

    def __init__(
        self,
        endpoint: str | None = None,
        token: str | None = None,
        timeout: float = 15.0,
        *,
        deadline: float = 60.0,
        tokens: TokenStore | None = None,
    ) -> None:
        if endpoint is None:
            try:
                from huggingface_hub import constants

                endpoint = constants.ENDPOINT
            except ImportError:  # pragma: no cover - a declared dependency
                endpoint = DEFAULT_ENDPOINT
        self.endpoint = endpoint.rstrip("/")
        self.timeout = timeout
        self.deadline = deadline
        self.tokens = tokens or TokenStore()
        self._lock = threading.Lock()
        self._token = token
        self._token_from = "given" if token else ""
        self._keyring_read = token is not None  # a given token is not replaced by a saved one
        self._host = urlparse(self.endpoint).hostname or self.endpoint

    # -- the token -------------------------------------------------------------------------------

    def auth_token(self) -> str | None:
        """The token every request to the hub sends. Worker threads: it may read the keyring (first
        call) and huggingface_hub's login file."""
        with self._lock:
            if not self._keyring_read:
                self._keyring_read = True
                try:
                    saved = self.tokens.load()
                except KeyringUnavailable as exc:
                    log.info("no token from the system keyring: %s", exc)
                else:
                    if saved:
                        self._token, self._token_from = saved, "keyring"
            if self._token:
                return self._token
        return login_token()[0]

    def token_for(self, url: str) -> str | None:
        """The token for a request to ``url``: only a URL on this hub gets it."""
        return self.auth_token() if same_origin(url, self.endpoint) else None

    def use_token(self, token: str | None) -> Text:
        """Use ``token`` from now on (None or "": forget it) and keep it in the system keyring, or for this
        session only when there is none. Worker threads. Returns words on where it went (never the token)."""
        token = (token or "").strip() or None
        with self._lock:
            self._keyring_read = True
            self._token, self._token_from = token, ("session" if token else "")
        try:
            if token is None:
                self.tokens.delete()
                return words(
                    "The token was forgotten (and removed from the system keyring). {which}", which=self.token_words()
                )
            self.tokens.save(token)
        except KeyringUnavailable as exc:
            if token is None:
                return words("The token was forgotten. {which}", which=self.token_words())
            return words("Token set for this session only: {why}; it is not written anywhere.", why=message_of(exc))
        with self._lock:
            self._token_from = "keyring"
        return words("Token saved in the system keyring; it is used for listing, header reads and downloads.")

    def token_words(self) -> Text:
        """Which token requests send, in words (never the token itself). Worker threads."""
        self.auth_token()
        with self._lock:
            source = self._token_from if self._token else ""
        if source == "keyring":
            return words("Token: the one saved in the system keyring.")
        if source == "session":
            return words("Token: the one entered here, for this session only.")
        if source == "given":
            return words("Token: the one given at start.")
        _, where = login_token()
        if where:
            return words("Token: from {where}.", where=where)
        return words("No token: public repositories only (gated or private ones need one).")

    # -- listing ---------------------------------------------------------------------------------

    def list_gguf(self, repo_id: str, revision: str = "main") -> list[RemoteFile]:
        """The repository's GGUF files with sizes and LFS SHA-256, split models as one entry each."""
        return self.list_repo(repo_id, revision).files

    def list_repo(self, repo_id: str, revision: str = "main") -> HubListing:
        """As list_gguf, with notes on a listing that was cut short or had entries that were left out."""
        repo = parse_repo_id(repo_id)
        _refuse_offline_mode()
        token = self.auth_token()
        tree = f"{self.endpoint}/api/models/{repo}/tree/{quote(revision, safe='')}"
        url: str | None = f"{tree}?recursive=true&expand=false"
        entries: list[Any] = []
        notes: list[Text] = []
        seen: set[str] = set()
        budget = self.max_listing_bytes
        with Cutoff(self.deadline, what=words("the hub")) as cut:
            while url is not None:
                seen.add(url)
                try:
                    page = self._page(url, token, cut, budget, repo, revision)
                except HubError as exc:
                    if not entries:
                        raise
                    notes.append(
                        words(
                            "Listing cut at {n} entries: the next page could not be read ({problem}).",
                            n=len(entries),
                            problem=message_of(exc),
                        )
                    )
                    break
                entries += page.entries
                budget -= page.consumed
                if len(entries) > self.max_listing_entries or (
                    len(entries) == self.max_listing_entries and page.next_url is not None
                ):
                    del entries[self.max_listing_entries :]
                    notes.append(
                        words("Listing cut at {n} entries: the repository lists more.", n=self.max_listing_entries)
                    )
                    break
                if page.cut_at:
                    notes.append(
                        words("Listing cut at {n} entries: it is larger than {cap}.", n=len(entries), cap=page.cut_at)
                    )
                    break
                url = page.next_url
                if url is not None and not same_origin(url, self.endpoint):
                    notes.append(words("Listing cut: its next page is on another server, which is not asked."))
                    break
                if url in seen:
                    notes.append(words("Listing cut at {n} entries: the hub's pages loop.", n=len(entries)))
                    break
        files, skipped = self._files(entries, repo, revision)
        if skipped:
            notes.append(words("{n} entries left out: not a plain file name, or no valid size.", n=skipped))
        return HubListing(_group_splits(files), notes)

    def _page(self, url: str, token: str | None, cut: Cutoff, budget: int, repo: str, revision: str) -> _Page:
        """One page of entries; a page longer than ``budget`` bytes is cut at its last whole entry."""
        try:
            response = get(url, cut, token=token, socket_timeout=self.timeout)
            with response:
                body = read_up_to(response, budget + 1, cut)
                link = response.headers.get("Link", "")
        except HttpStatus as exc:
            raise HubError(_listing_words(exc, repo, revision, token is not None)) from exc
        except Unreachable as exc:
            raise HubError(
                words(
                    "offline: cannot reach {host} ({reason}). Where Hugging Face cannot be reached, a mirror of it "
                    "works: start Tightfit with HF_ENDPOINT set to the mirror's address",
                    host=self._host,
                    reason=message_of(exc),
                )
            ) from exc
        except Cut as exc:
            raise HubError(words("{repo}: {problem}", repo=repo, problem=message_of(exc))) from exc
        except TransferError as exc:
            raise HubError(
                words("{repo}: the listing could not be read ({problem})", repo=repo, problem=message_of(exc))
            ) from exc
        match = _NEXT.search(link)
        next_url = urljoin(url, match.group(1)) if match else None
        if len(body) <= budget:
            return _Page(_parse_page(body, repo), len(body), next_url)
        cap = f"{self.max_listing_bytes / 2**20:g} MiB"
        entries = _entries_prefix(body[:budget], self.max_listing_entries + 1)
        if not entries:
            raise HubError(words("{repo}: the hub's answer is larger than {cap}; not a listing", repo=repo, cap=cap))
        return _Page(entries, budget, None, cap)

    def _files(self, entries: list[Any], repo: str, revision: str) -> tuple[list[RemoteFile], int]:
        from huggingface_hub import hf_hub_url

        files: list[RemoteFile] = []
        skipped = 0
        for item in entries:
            if not isinstance(item, dict) or item.get("type") != "file":
                continue  # folders, and whatever else a tree may hold
            path, size = item.get("path"), item.get("size")
            if not isinstance(path, str) or not path.lower().endswith(".gguf"):
                continue
            if not _is_size(size) or not safe_file_name(PurePosixPath(path).name) or len(path) > 1000:
                skipped += 1
                continue
            lfs = item.get("lfs")
            sha = (lfs.get("oid") or lfs.get("sha256")) if isinstance(lfs, dict) else None
            sha = sha if isinstance(sha, str) and _SHA256.match(sha) else None
            url = hf_hub_url(repo, path, revision=revision, endpoint=self.endpoint)
            files.append(RemoteFile(path, size, sha, url, repo, revision))
        return files, skipped

    # -- headers ---------------------------------------------------------------------------------

    def read_header(self, remote: RemoteFile) -> GGUFHeader:
        """The model's header from range requests (a few MB per file, never the weights).

        Raises GGUFError when the file is not a usable GGUF and HubError when the hub cannot be read.
        """
        token = self.auth_token()
        headers = [self._read_one(f, token) for f in remote.files]
        return headers[0] if len(headers) == 1 else _combine(headers, remote)

    def _read_one(self, f: RemoteFile, token: str | None) -> GGUFHeader:
        try:
            return fetch_header(f.url, timeout=self.timeout, token=token, deadline=self.deadline)
        except RemoteHeaderError as exc:
            if exc.status is not None:
                raise HubError(
                    http_words(exc.status, f.name, token_sent=token is not None, error_code=exc.error_code)
                ) from exc
            if exc.unreachable:
                raise HubError(
                    words("{name}: offline: cannot reach the server ({reason})", name=exc.name, reason=exc.unreachable)
                ) from exc
            raise HubError(message_of(exc)) from exc

    # -- download --------------------------------------------------------------------------------

    def download(
        self,
        remote: RemoteFile,
        dest_dir: str | os.PathLike[str],
        on_progress: Callable[[DownloadProgress], None] | None = None,
        **options: Any,
    ) -> Download:
        """A :class:`Download` of ``remote`` into ``dest_dir`` (not started). Cheap: the token is looked
        up on the download's own thread."""
        return Download(
            remote, dest_dir, token=self.auth_token, on_progress=on_progress, timeout=self.timeout, **options
        )


@dataclass(frozen=True)
class _Page:
    entries: list[Any]
    consumed: int  # bytes of the listing's budget
    next_url: str | None
    cut_at: str = ""  # the size the listing was cut at ("16 MiB"), when it stops here


def _refuse_offline_mode() -> None:
    try:
        from huggingface_hub import constants
    except ImportError:  # pragma: no cover
        return
    if constants.is_offline_mode():
        raise HubError(OFFLINE_MODE)


def _is_size(value: object) -> TypeGuard[int]:
    """A file size as JSON gives it: a whole number (not a bool, not a float), 0 to 1 PiB."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 50


def _parse_page(body: bytes, repo: str) -> list[Any]:
    try:
        value = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[…" nested past the parser's depth
        raise HubError(words("{repo}: the hub's answer is not a file listing (malformed JSON)", repo=repo)) from exc
    if not isinstance(value, list):
        raise HubError(
            words(
                "{repo}: the hub's answer is not a file listing (a JSON {kind})", repo=repo, kind=type(value).__name__
            )
        )
    return value


def _entries_prefix(body: bytes, limit: int) -> list[Any]:
    """The whole entries (at most ``limit``) at the start of a JSON array that was cut off."""
    text = body.decode("utf-8", "ignore").lstrip()
    decoder = json.JSONDecoder()
    entries: list[Any] = []
    if not text.startswith("["):
        return entries
    pos = 1
    while len(entries) < limit:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            value, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return entries
        entries.append(value)
    return entries


def _listing_words(exc: HttpStatus, repo: str, revision: str, token_sent: bool) -> Text:
    if exc.error_code == "RevisionNotFound":
        return words("{repo}: revision {revision} not found", repo=repo, revision=repr(revision))
    return http_words(exc.code, repo, token_sent=token_sent, error_code=exc.error_code, server_says=exc.server_says)


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
