"""Model files on disk: what the picker lists, read from GGUF headers only.

An entry carries the header's quant name checked against its tensors (``quant_check``); a file that
cannot be used keeps its size on disk where it can be read.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path

from gui.core.gguf_reader import GGUFError, GGUFHeader, parse_split_name, read_model
from gui.core.quant_check import QuantCheck, check_quant
from gui.core.words import Text, message_of, words


@dataclass(frozen=True)
class ModelEntry:
    path: Path
    name: str
    size_bytes: int
    quant: str | None = None
    n_layer: int | None = None
    context_length: int | None = None
    architecture: str | None = None
    n_parts: int = 1
    error: Text | None = None  # why the file cannot be used; the entry is still listed
    header: GGUFHeader | None = field(default=None, compare=False, repr=False)  # for the planner
    n_params: int | None = None
    bits_per_weight: float | None = None
    has_chat_template: bool = False
    type_mix: tuple[tuple[str, int], ...] = ()  # bytes per ggml type, largest first
    # Why the file can be planned but not loaded (cut short, or a header without weights); "" when it can.
    not_loadable: Text = ""
    quant_check: QuantCheck | None = None  # the header's quant name against its tensors; None for errors

    @property
    def usable(self) -> bool:
        return self.error is None


def describe_file(path: Path) -> ModelEntry:
    try:
        header = read_model(path)
    except (GGUFError, OSError) as exc:
        # A file that cannot be opened (no permission) usually still has a size to show.
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        error = (
            message_of(exc)
            if isinstance(exc, GGUFError)
            else words("{name}: {why}", name=path.name, why=exc.strerror or message_of(exc))
        )
        return ModelEntry(path=path, name=path.name, size_bytes=size, error=error)
    split = parse_split_name(path.name)
    return ModelEntry(
        path=path,
        name=header.name or path.stem,
        size_bytes=header.file_size or path.stat().st_size,
        quant=header.quant_name,
        n_layer=header.n_layer,
        context_length=header.context_length,
        architecture=header.architecture,
        n_parts=split.count if split else 1,
        header=header,
        n_params=header.n_params,
        bits_per_weight=header.bits_per_weight,
        has_chat_template=header.has_chat_template,
        type_mix=tuple(header.type_mix.items()),
        not_loadable=_not_loadable(path, header),
        quant_check=check_quant(header),
    )


def _not_loadable(path: Path, header: GGUFHeader) -> Text:
    """Whether the weights the header promises are in the file: a download cut short, or a header-only
    (sparse) file of the kind used for planning, can be planned but not loaded."""
    if header.is_truncated:
        return words(
            "cut short: its header needs {needed}, the file holds {held} (an unfinished download?); it can be "
            "planned, not loaded",
            needed=_size(header.expected_file_size),
            held=_size(header.file_size or 0),
        )
    if not header.parts and header.tensors and not _has_weights(path, header.data_offset, header.expected_file_size):
        return words("header only: the weights are not in the file (a sparse file); it can be planned, not loaded")
    return ""


def _has_weights(path: Path, start: int, end: int) -> bool:
    """False when the file's weight region [start, end) is (almost) all holes: a sparse file with a real
    header and no weights. Where the file system cannot say, the answer is True (nothing is claimed)."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None or end <= start:
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return True
    data, position = 0, start
    try:
        for _ in range(256):  # runs of data and holes; a real file is one run, a sparse one a few
            try:
                position = os.lseek(fd, position, seek_data)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # no data from here on
                    break
                return True
            if position >= end:
                break
            hole = min(os.lseek(fd, position, seek_hole), end)
            data += hole - position
            position = hole
        else:
            return True
    finally:
        os.close(fd)
    return data >= (end - start) // 100


def _size(n_bytes: int) -> str:
    gib = n_bytes / (1 << 30)
    return f"{gib:.2f} GiB" if gib >= 1 else f"{n_bytes / (1 << 20):.0f} MiB"
