"""The model library: GGUF files in the user's folders, read from their headers and grouped by model.

A background thread scans the folders at start, then every ``poll_interval_s`` or when asked, and
reports what was added, removed or changed. Change detection is a ``stat`` per file (size and
modification time); a header is read again only when those change, so a rescan of an unchanged
folder of hundreds of models costs a directory listing. Polling needs no extra dependency and
works on network shares where inotify-style watchers do not.

Quants of one model are grouped: the key is the model's identity from the header (architecture,
``general.basename``/``general.name`` without a quant suffix, ``general.size_label``) plus a
signature of the tensor names and shapes, which quantisation never changes. A header without a
name falls back to the file name with its quant and split suffixes stripped. A split model
(``-00001-of-00003.gguf``) is one variant, its parts read together.

Files that cannot be used (corrupt, truncated, not GGUF, an architecture llama.cpp does not know)
are kept as entries with an ``error`` so the window can list them with the reason, and with the size
the listing found on disk (all parts, for a split set).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from gui.core.gguf_reader import GGUFHeader, parse_split_name
from gui.core.words import message_of, words
from gui.services.models import ModelEntry, describe_file

__all__ = [
    "Library",
    "LibraryChange",
    "ModelGroup",
    "group_entries",
    "group_key",
    "known_architectures",
    "split_quant_suffix",
    "strip_quant_suffix",
    "variants_of",
]

log = logging.getLogger(__name__)

# "-Q4_K_M", ".Q3_K_S", "-IQ3_XXS", "-UD-Q4_K_XL", "-f16", "-bf16", "_q8_0" at the end of a stem.
_QUANT_SUFFIX = re.compile(
    r"[-._ ](?:UD[-_])?(?:I?Q\d(?:_[A-Z0-9]+)*|F16|F32|BF16|FP16|FP32|MXFP4(?:_MOE)?|TQ\d_\d)$",
    re.IGNORECASE,
)

# Architectures that are GGUF but not language models llama.cpp can chat with.
_NOT_LANGUAGE_MODELS = {"clip": words("a vision projector (mmproj) file, not a language model")}


@lru_cache(maxsize=1)
def known_architectures() -> frozenset[str]:
    """Architecture names llama.cpp knows, from gguf-py's table (it mirrors ``src/llama-arch.cpp``).

    Imported lazily: gguf-py pulls in numpy and is not needed until the first scan.
    """
    try:
        from gguf.constants import MODEL_ARCH_NAMES
    except ImportError:  # pragma: no cover - gguf is a dependency; without it accept everything
        return frozenset()
    return frozenset(MODEL_ARCH_NAMES.values())


def strip_quant_suffix(stem: str) -> str:
    """``"Qwen3.5-27B-Q4_K_M"`` → ``"Qwen3.5-27B"``; also drops ``-00001-of-00003`` and ``.gguf``."""
    text = stem[:-5] if stem.lower().endswith(".gguf") else stem
    split = parse_split_name(text + ".gguf")
    if split is not None:
        text = split.stem
    while True:
        stripped = _QUANT_SUFFIX.sub("", text)
        if stripped == text or not stripped:
            return text
        text = stripped


def split_quant_suffix(name: str) -> tuple[str, str]:
    """``"Qwen3.5-27B-Q4_K_M.gguf"`` → ``("Qwen3.5-27B", "-Q4_K_M.gguf")``: the model part, and the quant,
    split and extension suffixes a shortened name must keep. Without a quant suffix the tail is the rest
    after the model part (``".gguf"``)."""
    head = strip_quant_suffix(name)
    return (head, name[len(head) :]) if name.startswith(head) else (name, "")


def _shape_signature(header: GGUFHeader) -> str:
    digest = hashlib.blake2b(digest_size=8)
    for t in header.tensors:
        digest.update(t.name.encode())
        digest.update(repr(t.shape).encode())
    return digest.hexdigest()


def _display_name(header: GGUFHeader | None, path: Path) -> str:
    if header is not None:
        md = header.metadata
        base = md.get("general.basename")
        size = md.get("general.size_label")
        if isinstance(base, str) and base.strip():
            label = base.strip()
            if isinstance(size, str) and size.strip() and size.strip().lower() not in label.lower():
                label = f"{label}-{size.strip()}"
            return strip_quant_suffix(label)
        if header.name and header.name.strip():
            return strip_quant_suffix(header.name.strip())
    return strip_quant_suffix(path.name)


def group_key(entry: ModelEntry) -> str:
    """The identity quants of one model share; error entries get a key of their own."""
    header = entry.header
    if entry.error is not None or header is None:
        return f"error:{entry.path}"
    size = header.metadata.get("general.size_label")
    return "|".join(
        (
            header.architecture or "?",
            _display_name(header, entry.path).lower(),
            size if isinstance(size, str) else "",
            _shape_signature(header),
        )
    )


@dataclass(frozen=True)
class ModelGroup:
    """One model and its quants (largest file first)."""

    name: str
    architecture: str | None
    n_params: int | None
    n_layer: int | None
    context_length: int | None
    has_chat_template: bool
    variants: list[ModelEntry]
    key: str = ""


def group_entries(entries: Iterable[ModelEntry]) -> list[ModelGroup]:
    """Group usable entries by :func:`group_key`; groups sorted by name, variants by size (desc)."""
    buckets: dict[str, list[ModelEntry]] = {}
    for entry in entries:
        if entry.error is None and entry.header is not None:
            buckets.setdefault(group_key(entry), []).append(entry)
    groups = []
    for key, members in buckets.items():
        members.sort(key=lambda e: (-e.size_bytes, e.path.name))
        first = members[0]
        groups.append(
            ModelGroup(
                name=_display_name(first.header, first.path),
                architecture=first.architecture,
                n_params=first.n_params,
                n_layer=first.n_layer,
                context_length=first.context_length,
                has_chat_template=any(e.has_chat_template for e in members),
                variants=members,
                key=key,
            )
        )
    groups.sort(key=lambda g: (g.name.lower(), g.key))
    return groups


@dataclass(frozen=True)
class LibraryChange:
    """What one scan found: files added, removed and changed since the scan before, and the result."""

    added: list[Path]
    removed: list[Path]
    changed: list[Path]
    groups: list[ModelGroup]
    errors: list[ModelEntry]  # files listed with the reason they cannot be used
    first: bool = False  # the first scan reports everything it found as added

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


# A candidate: the file that stands for a model (part 1 of a split set) and the stat signature of
# every file it consists of.
_Signature = tuple[tuple[str, int, int], ...]


@dataclass
class _Cached:
    signature: _Signature
    entry: ModelEntry


def _candidates(folder: Path) -> dict[Path, _Signature]:
    """GGUF files directly in ``folder``, split parts folded into their first part."""
    found: dict[Path, _Signature] = {}
    splits: dict[tuple[str, int], list[tuple[int, Path, int, int]]] = {}
    try:
        it = os.scandir(folder)
    except OSError as exc:
        log.info("library: cannot list %s (%s)", folder, exc.strerror or exc)
        return found
    with it:
        for de in it:
            if not de.name.lower().endswith(".gguf"):
                continue
            try:
                if not de.is_file():
                    continue
                st = de.stat()
            except OSError:
                continue  # vanished between listing and stat: the next scan will not see it either
            path = Path(de.path)
            split = parse_split_name(de.name)
            if split is not None:
                splits.setdefault((split.stem, split.count), []).append((split.part, path, st.st_size, st.st_mtime_ns))
            else:
                found[path] = ((de.name, st.st_size, st.st_mtime_ns),)
    for parts in splits.values():
        parts.sort()
        # Part 1 stands for the model; without it the lowest part present does, and reading it
        # reports the missing part by name.
        found[parts[0][1]] = tuple((p.name, size, mtime) for _, p, size, mtime in parts)
    return found


def _describe(path: Path, signature: _Signature) -> ModelEntry:
    entry = _read(path)
    if entry.error is None:
        return entry
    # The listing has just stat'ed every part; reading may have failed before it learnt any size.
    return replace(entry, size_bytes=sum(size for _, size, _ in signature))


def _read(path: Path) -> ModelEntry:
    try:
        entry = describe_file(path)
    except Exception as exc:  # a reader bug must cost one file, not the scanning thread
        log.exception("library: unexpected error reading %s", path)
        error = words("{file}: unexpected error ({error})", file=path.name, error=message_of(exc))
        return ModelEntry(path=path, name=path.name, size_bytes=0, error=error)
    if entry.error is not None:
        return entry
    arch = entry.architecture
    known = known_architectures()
    if arch is None:
        return replace(
            entry, error=words("{file}: the header names no architecture (general.architecture)", file=path.name)
        )
    if arch in _NOT_LANGUAGE_MODELS:
        return replace(entry, error=words("{file}: {problem}", file=path.name, problem=_NOT_LANGUAGE_MODELS[arch]))
    if known and arch not in known:
        return replace(
            entry,
            error=words(
                "{file}: unsupported architecture {architecture} (llama.cpp does not know it)",
                file=path.name,
                architecture=repr(arch),
            ),
        )
    return entry


class Library:
    """Scans ``folders`` for GGUF models on a background thread and reports changes.

    ``on_change`` is called from the scanning thread with a :class:`LibraryChange` after the first
    scan and after every scan that found a difference; the UI adapts it to a Qt signal. Use
    :meth:`scan_now` for a synchronous scan (tests, benchmarks, the CLI).
    """

    def __init__(
        self,
        folders: Iterable[str | os.PathLike[str]],
        on_change: Callable[[LibraryChange], None] | None = None,
        *,
        poll_interval_s: float = 5.0,
    ) -> None:
        self._folders = self._normalise(folders)
        self._on_change = on_change
        self._poll = poll_interval_s
        self._cache: dict[Path, _Cached] = {}
        self._entries: dict[Path, ModelEntry] = {}
        self._groups: list[ModelGroup] = []
        self._scan_lock = threading.Lock()  # one scan at a time, background or synchronous
        self._state = threading.Condition()
        self._scans = 0
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def set_listener(self, on_change: Callable[[LibraryChange], None]) -> None:
        """Where changes are reported (on the scanning thread); set before start()."""
        self._on_change = on_change

    # -- configuration -------------------------------------------------------------------------

    @staticmethod
    def _normalise(folders: Iterable[str | os.PathLike[str]]) -> list[Path]:
        out: list[Path] = []
        for f in folders:
            p = Path(f).expanduser()
            if p not in out:
                out.append(p)
        return out

    @property
    def folders(self) -> list[Path]:
        return list(self._folders)

    def set_folders(self, folders: Iterable[str | os.PathLike[str]]) -> None:
        """Replace the folders; the next scan (requested here) reports the difference."""
        self._folders = self._normalise(folders)
        self.rescan()

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="tightfit-library", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping = True
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)

    def __enter__(self) -> Library:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def rescan(self) -> None:
        """Ask the background thread to scan now (returns at once)."""
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping:
            try:
                self.scan_now()
            except Exception:  # never let one bad scan end the thread
                log.exception("library: scan failed")
            self._wake.wait(self._poll)
            self._wake.clear()

    # -- results -------------------------------------------------------------------------------

    @property
    def scan_count(self) -> int:
        with self._state:
            return self._scans

    def wait_for_scan(self, after: int, timeout: float) -> bool:
        """Wait until more than ``after`` scans have completed; False on timeout."""
        with self._state:
            return self._state.wait_for(lambda: self._scans > after, timeout)

    def groups(self) -> list[ModelGroup]:
        with self._state:
            return list(self._groups)

    def entries(self) -> list[ModelEntry]:
        with self._state:
            return sorted(self._entries.values(), key=lambda e: str(e.path).lower())

    def errors(self) -> list[ModelEntry]:
        return [e for e in self.entries() if e.error is not None]

    def find(self, path: str | os.PathLike[str]) -> ModelEntry | None:
        with self._state:
            return self._entries.get(Path(path))

    # -- scanning ------------------------------------------------------------------------------

    def scan_now(self) -> LibraryChange:
        """Scan every folder once, in the calling thread; report and return what changed."""
        with self._scan_lock:
            found: dict[Path, _Signature] = {}
            for folder in self._folders:
                found.update(_candidates(folder))
            old = self._cache
            new: dict[Path, _Cached] = {}
            added: list[Path] = []
            changed: list[Path] = []
            for path, sig in sorted(found.items()):
                hit = old.get(path)
                if hit is not None and hit.signature == sig:
                    new[path] = hit
                    continue
                (added if hit is None else changed).append(path)
                new[path] = _Cached(sig, _describe(path, sig))
            removed = sorted(p for p in old if p not in found)
            entries = {p: c.entry for p, c in new.items()}
            groups = group_entries(entries.values()) if (added or changed or removed or not self._scans) else None
            self._cache = new
            with self._state:
                first = self._scans == 0
                self._entries = entries
                if groups is not None:
                    self._groups = groups
                self._scans += 1
                change = LibraryChange(
                    added=added,
                    removed=removed,
                    changed=changed,
                    groups=list(self._groups),
                    errors=[e for e in entries.values() if e.error is not None],
                    first=first,
                )
                self._state.notify_all()
        if (first or not change.empty) and self._on_change is not None:
            try:
                self._on_change(change)
            except Exception:
                log.exception("library: on_change callback failed")
        return change


def variants_of(groups: Sequence[ModelGroup], path: str | os.PathLike[str]) -> ModelGroup | None:
    """The group a file belongs to, if any."""
    p = Path(path)
    return next((g for g in groups if any(v.path == p for v in g.variants)), None)
