"""Tuning cards on disk: hashing the model file, writing a card, reading one back and checking it against
the model it is applied to. Everything here blocks (a 20 GB file takes a while to hash): the window runs
it through ``Background``, never on the UI thread.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from gui.core.params import LoadSettings
from gui.core.tuning_card import (
    MAX_CARD_BYTES,
    CardError,
    CardFacts,
    CardMismatch,
    TuningCard,
    card_to_json,
    check_model,
    parse_card,
)
from gui.core.words import Text, Words, message_of, words

__all__ = [
    "CardImport",
    "HashCancelled",
    "NotRegularFile",
    "make_card",
    "open_card",
    "open_regular",
    "read_card",
    "sha256_file",
    "write_card",
]

CHUNK_BYTES = 1 << 20  # read 1 MiB at a time: memory stays flat whatever the file's size


class HashCancelled(Exception):
    """Hashing stopped because it was asked to."""


class NotRegularFile(OSError):
    """A path that names a folder, a named pipe, a device or a socket where a file was to be read."""

    def __init__(self, message: Words, kind: Words) -> None:
        super().__init__(message)
        self.kind = kind


def _kind(mode: int) -> Words:
    if stat.S_ISDIR(mode):
        return words("a folder")
    if stat.S_ISFIFO(mode):
        return words("a named pipe")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return words("a device")
    if stat.S_ISSOCK(mode):
        return words("a socket")
    return words("not a regular file")


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """``path`` opened for reading in binary, refused (NotRegularFile) unless it is a regular file: the check is
    made on the opened file, which is opened without blocking, so a named pipe no one writes to (or a device)
    never hangs the caller. Other OSErrors as ``open`` raises them."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | nonblocking | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _kind(mode)
            raise NotRegularFile(words("{file} is {kind}, not a regular file", file=Path(path).name, kind=kind), kind)
        if nonblocking:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def sha256_file(
    path: str | os.PathLike[str],
    cancel: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> str:
    """The file's SHA-256 (hex), read in chunks; ``cancel`` set stops it between chunks (HashCancelled);
    ``progress(done, total)`` after every chunk. OSError for a file that cannot be read (NotRegularFile for a
    folder, a named pipe or a device: never waited on)."""
    digest = hashlib.sha256()
    with open_regular(path) as file:
        total = os.fstat(file.fileno()).st_size
        done = 0
        buffer = bytearray(chunk_bytes)
        view = memoryview(buffer)
        while True:
            if cancel is not None and cancel.is_set():
                raise HashCancelled(words("hashing {file} was cancelled", file=Path(path).name))
            n = file.readinto(buffer)
            if not n:
                break
            digest.update(view[:n])
            done += n
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


def make_card(
    model: str | os.PathLike[str],
    settings: LoadSettings,
    facts: CardFacts | None = None,
    cancel: threading.Event | None = None,
) -> TuningCard:
    """A card for ``model`` (hashed here) with these settings and what is known of where they ran."""
    path = Path(model)
    size = path.stat().st_size
    sha = sha256_file(path, cancel)
    known = asdict(facts) if facts is not None else {}
    return TuningCard(path.name, sha, settings.validated(), size, **known)


def write_card(path: str | os.PathLike[str], card: TuningCard) -> Path:
    """Write the card (replacing the file in one step, so a reader never sees half of it)."""
    target = Path(path)
    text = card_to_json(card)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, target)
    return target


def read_card(path: str | os.PathLike[str]) -> TuningCard:
    """A card from a file: CardError (one line) for a file that cannot be read or is not a card; at most
    MAX_CARD_BYTES are read, whatever the file's size. A folder, a named pipe or a device is refused before a byte
    is read, so nothing waits on it."""
    name = Path(path).name
    try:
        with open_regular(path) as file:
            data = file.read(MAX_CARD_BYTES + 1)
    except NotRegularFile as exc:
        raise CardError(
            words("{file} is not a tuning card: it is {kind}, not a regular file", file=name, kind=exc.kind)
        ) from None
    except OSError as exc:
        raise CardError(_unreadable(name, exc)) from None
    if len(data) > MAX_CARD_BYTES:
        raise CardError(
            words("{file} is not a tuning card: larger than {kib} KiB", file=name, kib=MAX_CARD_BYTES // 1024)
        )
    try:
        return parse_card(data)
    except CardError as exc:
        raise CardError(words("{file}: {error}", file=name, error=message_of(exc))) from None


@dataclass(frozen=True)
class CardImport:
    """A card read and checked against a model: the settings to apply, and whether the file is the card's."""

    card: TuningCard
    settings: LoadSettings
    matches: bool  # False only when applied anyway to another file
    message: Text  # one line for the status bar


def open_card(
    card_path: str | os.PathLike[str],
    model: str | os.PathLike[str],
    *,
    apply_anyway: bool = False,
    cancel: threading.Event | None = None,
) -> CardImport:
    """Read the card at ``card_path`` and check it is for ``model`` (its size, then its SHA-256). A card for
    another file is a CardMismatch saying so, unless ``apply_anyway``. For a thread, not the UI."""
    card = read_card(card_path)
    model_path = Path(model)
    try:
        size = model_path.stat().st_size
    except OSError as exc:
        raise CardError(_unreadable(model_path.name, exc)) from None
    try:
        if card.model_bytes is not None and card.model_bytes != size:
            raise CardMismatch(
                words(
                    "the model's SHA-256 cannot match: the card is for {card_file} of {card_bytes} bytes, "
                    "{file} has {size}",
                    card_file=repr(card.model_file),
                    card_bytes=f"{card.model_bytes:,}",
                    file=repr(model_path.name),
                    size=f"{size:,}",
                )
            )
        try:
            sha = sha256_file(model_path, cancel)
        except OSError as exc:
            raise CardError(_unreadable(model_path.name, exc)) from None
        check_model(card, sha, model_path.name)
    except CardMismatch as exc:
        if not apply_anyway:
            raise
        return CardImport(card, card.settings, False, words("applied anyway: {error}", error=message_of(exc)))
    applied = words("settings from the tuning card for {file} applied", file=card.model_file)
    return CardImport(card, card.settings, True, applied)


def _unreadable(name: str, exc: OSError) -> Words:
    if isinstance(exc, NotRegularFile):
        return words("{file}: cannot be read ({error})", file=name, error=exc.kind)
    return words("{file}: cannot be read ({error})", file=name, error=exc.strerror or exc)
