"""Model files on disk: what the picker lists, read from GGUF headers only."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gui.core.gguf_reader import GGUFError, GGUFHeader, parse_split_name, read_model


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
    error: str | None = None  # why the file cannot be used; the entry is still listed
    header: GGUFHeader | None = field(default=None, compare=False, repr=False)  # for the planner
    n_params: int | None = None
    bits_per_weight: float | None = None
    has_chat_template: bool = False
    type_mix: tuple[tuple[str, int], ...] = ()  # bytes per ggml type, largest first

    @property
    def usable(self) -> bool:
        return self.error is None


def describe_file(path: Path) -> ModelEntry:
    try:
        header = read_model(path)
    except GGUFError as exc:
        size = path.stat().st_size if path.exists() else 0
        return ModelEntry(path=path, name=path.name, size_bytes=size, error=str(exc))
    except OSError as exc:
        return ModelEntry(path=path, name=path.name, size_bytes=0, error=f"{path.name}: {exc.strerror or exc}")
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
    )
