"""A GGUF file in a Hugging Face hub repository, and the errors the hub listing and downloads report.

Shared by :mod:`gui.services.hub` (listing, headers by range request) and :mod:`gui.services.download`
(resumable, verified downloads). Nothing here does I/O.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from gui.core.words import Text, words

__all__ = ["TOKEN_HINT", "HubError", "RemoteFile", "http_words", "safe_file_name"]


_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f\\/:]|^\.")


def safe_file_name(name: str) -> bool:
    """Whether a name from the hub can be a file in the models folder as it is: no folder parts, no
    hidden file, no control characters, not too long."""
    return bool(name) and len(name.encode("utf-8", "replace")) <= 255 and not _UNSAFE_NAME.search(name)


class HubError(Exception):
    """Something about the hub or a download went wrong; ``str(e)`` is one line for the user. Raised with a
    sentence composed by gui/core/words.py, which the window shows translated (``error_text``)."""


@dataclass(frozen=True)
class RemoteFile:
    """A GGUF file in a hub repository. A split model is one RemoteFile whose ``parts`` are its files
    (``path``/``url`` are part 1's, ``size`` is the total, ``sha256`` is None)."""

    path: str
    size: int
    sha256: str | None
    url: str
    repo_id: str = ""
    revision: str = "main"
    parts: tuple[RemoteFile, ...] = ()

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name

    @property
    def files(self) -> tuple[RemoteFile, ...]:
        """The files to fetch: the parts of a split model, else this file."""
        return self.parts or (self,)

    @property
    def n_parts(self) -> int:
        return len(self.files)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RemoteFile:
        parts = tuple(cls.from_dict(p) for p in data.get("parts", ()))
        return cls(
            path=str(data["path"]),
            size=int(data["size"]),
            sha256=data.get("sha256"),
            url=str(data["url"]),
            repo_id=str(data.get("repo_id", "")),
            revision=str(data.get("revision", "main")),
            parts=parts,
        )


TOKEN_HINT = words("set HF_TOKEN, log in with `hf auth login`, or enter a token in the Quants tab")


def http_words(code: int, name: str, *, token_sent: bool = False, error_code: str = "", server_says: str = "") -> Text:
    """One line for an HTTP error status on ``name`` (a file or a repository).

    ``error_code`` is the hub's ``X-Error-Code``; ``server_says`` its short message, added only where
    the status alone says little (it is the server's text: shown as plain text).
    """
    if error_code == "GatedRepo":
        if token_sent and code == 403:
            return words(
                "{name}: gated repository (403): the token's account has no access yet; "
                "accept the terms on the repository's page",
                name=name,
            )
        if token_sent:
            return words(
                "{name}: gated repository: the hub refused the token ({code}); check it, or enter a new one",
                name=name,
                code=code,
            )
        return words(
            "{name}: gated repository ({code}): accept its terms on the hub, then use a token ({hint})",
            name=name,
            code=code,
            hint=TOKEN_HINT,
        )
    if code == 401 and token_sent and error_code != "RepoNotFound":
        return words("{name}: the hub refused the token (401): check it, or enter a new one", name=name)
    if error_code == "RepoNotFound" or (code == 401 and not token_sent):
        if token_sent:
            return words(
                "{name}: repository not found, or the token has no access to it ({code})", name=name, code=code
            )
        return words(
            "{name}: repository not found or private ({code}): a private or gated one needs a token ({hint})",
            name=name,
            code=code,
            hint=TOKEN_HINT,
        )
    if code == 403:
        if token_sent:
            return words(
                "{name}: access denied (403): the token lacks permission, or the repository is gated", name=name
            )
        return words(
            "{name}: access denied (403): the repository is gated or private; a token is needed ({hint})",
            name=name,
            hint=TOKEN_HINT,
        )
    if code == 404:
        return words("{name}: file not found on the hub (404)", name=name)
    if code == 416:
        return words("{name}: the server refused the byte range (416)", name=name)
    if server_says:  # the server's own text: a field, never translated
        return words("{name}: the server answered {code}: {server_says}", name=name, code=code, server_says=server_says)
    return words("{name}: the server answered {code}", name=name, code=code)
