"""A GGUF file in a Hugging Face hub repository, and the errors the hub listing and downloads report.

Shared by :mod:`gui.services.hub` (listing, headers by range request) and :mod:`gui.services.download`
(resumable, verified downloads). Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

__all__ = ["HubError", "RemoteFile", "http_words"]


class HubError(Exception):
    """Something about the hub or a download went wrong; ``str(e)`` is one line for the user."""


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


def http_words(code: int, name: str) -> str:
    """One line for an HTTP error status on file ``name``."""
    if code == 404:
        return f"{name}: file not found on the hub (404)"
    if code in (401, 403):
        return f"{name}: not authorised ({code}): the repository is private or gated; use a token"
    if code == 416:
        return f"{name}: the server refused the byte range (416)"
    return f"{name}: the server answered {code}"
