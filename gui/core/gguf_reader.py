"""GGUF header reader: metadata and tensor infos only, never the weights.

The header is untrusted input (a download, a half-copied file, an HTTP range response), so every
count and length it claims is checked against :class:`Limits` and against the bytes that can
actually exist before anything is allocated or looped over. Memory stays bounded by the largest
single item allowed plus a read chunk, and long arrays (a 250k-token vocabulary) are skipped
without building Python objects for them. The tensor list is bounded too: at most
``Limits.max_tensors`` entries, each with a name shorter than llama.cpp's ``GGML_MAX_NAME``.

The hyper-parameters the planner and llama.cpp read (block count, widths, head counts, context,
experts, sliding window, SSM sizes) are checked as the header is read: a value no model can have
raises a :class:`HeaderValueError` naming its key, instead of reaching the arithmetic.

Layout (llama.cpp ``docs/gguf.md``), all little-endian::

    "GGUF"  u32 version  u64 n_tensors  u64 n_kv
    n_kv   x  (string key, u32 value_type, value)
    n_tensors x (string name, u32 n_dims, u64 dims[n_dims], u32 ggml_type, u64 offset)
    padding to general.alignment, then the tensor data section

where a string is ``u64 length`` + UTF-8 bytes and an array is ``u32 item_type, u64 count``
followed by the items.
"""

from __future__ import annotations

import os
import re
import stat
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO

from gui.core.ggml_types import (
    GGMLTypeError,
    ggml_type_name,
    llama_ftype_name,
    n_elements,
    tensor_nbytes,
)
from gui.core.words import Text, english, message_of, words

__all__ = [
    "DEFAULT_LIMITS",
    "GGUF_DEFAULT_ALIGNMENT",
    "GGUF_MAGIC",
    "SUPPORTED_VERSIONS",
    "ArraySummary",
    "GGUFError",
    "GGUFHeader",
    "HeaderIncomplete",
    "HeaderValueError",
    "Limits",
    "SplitName",
    "TensorInfo",
    "ValueType",
    "check_hparams",
    "parse_split_name",
    "read_header",
    "read_header_from_bytes",
    "read_model",
    "split_parts",
]

GGUF_MAGIC = b"GGUF"
GGUF_DEFAULT_ALIGNMENT = 32
SUPPORTED_VERSIONS = (2, 3)

# llama.cpp's own bounds: src/llama-hparams.h and ggml.h (a tensor name is shorter than GGML_MAX_NAME
# bytes). A file past them does not load.
LLAMA_MAX_LAYERS = 512
LLAMA_MAX_EXPERTS = 512
GGML_MAX_NAME = 64

_MiB = 1 << 20
_INT64_MAX = (1 << 63) - 1
# Read granularity for files: big enough that a multi-megabyte vocabulary costs a handful of
# reads, small enough to be irrelevant next to the model being inspected.
_CHUNK = 1 * _MiB
# First retry size suggested for a bytes prefix that was too short to even judge.
_MIN_RETRY = 64 * 1024


class GGUFError(Exception):
    """The file is not a readable GGUF header. ``str(e)`` is a one-line message for the user.

    ``source`` is the file name or label the message starts with. The message is a sentence composed with
    gui/core/words.py (``str(e)`` gives it as it is, ``Words`` included), so the window can translate it.
    """

    def __init__(self, message: Text, *, source: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.source = source

    def __str__(self) -> str:
        return english(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields would be lost (or break unpickling) with Exception's default, and
        # headers may well be read in a worker process that sends its errors back.
        return (_rebuild_error, (type(self), self.message, dict(self.__dict__)))


class HeaderIncomplete(GGUFError):
    """A bytes prefix ended before the header did; retry with at least ``needed`` bytes.

    ``have`` is how many bytes were given. ``needed`` is always more than ``have``, at most the
    file size when it is known, and at most ``Limits.max_header_bytes``.
    """

    def __init__(self, message: Text, *, needed: int, have: int, source: str | None = None) -> None:
        super().__init__(message, source=source)
        self.needed = needed
        self.have = have


class HeaderValueError(GGUFError, ValueError):
    """A hyper-parameter no model can have. The message names it; ``key`` is its metadata key."""

    def __init__(self, message: Text, *, key: str, source: str | None = None) -> None:
        super().__init__(message, source=source)
        self.key = key


def _rebuild_error(cls: type[GGUFError], message: str, state: dict[str, Any]) -> GGUFError:
    err = Exception.__new__(cls, message)
    Exception.__init__(err, message)
    err.__dict__.update(state)
    return err


class ValueType:
    """GGUF metadata value type ids (``enum gguf_type``)."""

    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12

    NAMES: dict[int, str] = {  # noqa: RUF012 - a constant table, never mutated
        0: "uint8",
        1: "int8",
        2: "uint16",
        3: "int16",
        4: "uint32",
        5: "int32",
        6: "float32",
        7: "bool",
        8: "string",
        9: "array",
        10: "uint64",
        11: "int64",
        12: "float64",
    }


# struct format character and size for each fixed-size value type
_SCALAR_FORMATS: dict[int, tuple[str, int]] = {
    ValueType.UINT8: ("B", 1),
    ValueType.INT8: ("b", 1),
    ValueType.UINT16: ("H", 2),
    ValueType.INT16: ("h", 2),
    ValueType.UINT32: ("I", 4),
    ValueType.INT32: ("i", 4),
    ValueType.FLOAT32: ("f", 4),
    ValueType.BOOL: ("?", 1),
    ValueType.UINT64: ("Q", 8),
    ValueType.INT64: ("q", 8),
    ValueType.FLOAT64: ("d", 8),
}
_SCALAR_STRUCTS = {t: struct.Struct("<" + fmt) for t, (fmt, _) in _SCALAR_FORMATS.items()}
# The fewest bytes one array item of each type can occupy: used to reject an impossible count
# before looping over it. A string is at least its length prefix, an array its type + count.
_MIN_ITEM_BYTES = {t: size for t, (_, size) in _SCALAR_FORMATS.items()}
_MIN_ITEM_BYTES[ValueType.STRING] = 8
_MIN_ITEM_BYTES[ValueType.ARRAY] = 12
# Smallest key/value pair (empty key, uint8 value) and tensor info (empty name, 0 dims).
_MIN_KV_BYTES = 8 + 4 + 1
_MIN_TENSOR_INFO_BYTES = 8 + 4 + 4 + 8

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class Limits:
    """Upper bounds a header may claim before it is rejected as corrupt or hostile."""

    max_header_bytes: int = 256 * _MiB
    # The largest models have about 2,000 tensors. Each costs a few hundred bytes here, so the list
    # stays under ~30 MiB; llama.cpp compares every name with every earlier one, so files with many
    # more would not load in practice anyway.
    max_tensors: int = 65_536
    max_kv: int = 100_000
    max_array_len: int = 50_000_000
    max_string_bytes: int = 16 * _MiB
    max_dims: int = 8
    # Arrays longer than this are skipped and stand as an ArraySummary in the metadata.
    max_array_keep: int = 4096
    # Arrays of arrays: bounds the recursion, real files use at most one level.
    max_nesting: int = 8
    # Total array elements kept as Python objects across the whole header, so many short arrays
    # cannot add up to a large memory footprint either.
    max_kept_items: int = 1_000_000

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"Limits.{name} must be a non-negative int, got {value!r}")


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One tensor's entry in the header. ``shape`` is in GGUF order: row length (ne[0]) first."""

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int  # relative to the start of its file's data section
    part: int = 0  # index into the split model's parts; 0 for a single file

    @property
    def n_elements(self) -> int:
        try:
            return n_elements(self.shape)
        except GGMLTypeError as e:
            raise GGUFError(words("tensor {name}: {problem}", name=repr(self.name), problem=message_of(e))) from e

    @property
    def nbytes(self) -> int:
        try:
            return tensor_nbytes(self.ggml_type, self.shape)
        except GGMLTypeError as e:
            raise GGUFError(words("tensor {name}: {problem}", name=repr(self.name), problem=message_of(e))) from e

    @property
    def type_name(self) -> str:
        return ggml_type_name(self.ggml_type)


@dataclass(frozen=True)
class ArraySummary:
    """Stands in for an array too long to keep (e.g. ``tokenizer.ggml.tokens``)."""

    item_type: int
    length: int

    @property
    def item_type_name(self) -> str:
        return ValueType.NAMES.get(self.item_type, f"type {self.item_type}")

    def __len__(self) -> int:
        return self.length


@dataclass
class GGUFHeader:
    """A parsed GGUF header. Treat as read-only: the derived values below are computed once."""

    source: str
    version: int
    metadata: dict[str, Any]
    tensors: list[TensorInfo]
    alignment: int
    data_offset: int
    header_size: int
    file_size: int | None
    # For a split model read with read_model: one header per part, in order (part 1 first).
    parts: list[GGUFHeader] = field(default_factory=list, repr=False)

    # -- metadata shortcuts -------------------------------------------------------------------

    @property
    def architecture(self) -> str | None:
        return _as_str(self.metadata.get("general.architecture"))

    @property
    def name(self) -> str | None:
        return _as_str(self.metadata.get("general.name"))

    def arch_value(self, suffix: str, default: Any = None) -> Any:
        """``metadata["{arch}.{suffix}"]``, e.g. ``arch_value("block_count")``."""
        arch = self.architecture
        if arch is None:
            return default
        return self.metadata.get(f"{arch}.{suffix}", default)

    @property
    def n_layer(self) -> int | None:
        return _as_int(self.arch_value("block_count"))

    @property
    def context_length(self) -> int | None:
        return _as_int(self.arch_value("context_length"))

    @property
    def n_expert(self) -> int:
        """Experts per mixture-of-experts layer; 0 for a dense model."""
        return _as_int(self.arch_value("expert_count")) or 0

    @property
    def file_type(self) -> int | None:
        return _as_int(self.metadata.get("general.file_type"))

    @property
    def has_chat_template(self) -> bool:
        return "tokenizer.chat_template" in self.metadata

    @property
    def split_count(self) -> int:
        """Parts the model says it is split into (``split.count``); 1 when not split."""
        count = _as_int(self.metadata.get("split.count"))
        return count if count is not None and count > 0 else 1

    def tensor(self, name: str) -> TensorInfo | None:
        return self._tensors_by_name.get(name)

    @cached_property
    def _tensors_by_name(self) -> dict[str, TensorInfo]:
        return {t.name: t for t in self.tensors}

    # -- quantisation --------------------------------------------------------------------------

    @cached_property
    def quant_name(self) -> str:
        """The file type's name ("Q4_K_M"), or the dominant weight type marked "(guessed)"."""
        ftype = self.file_type
        if ftype is not None:
            named = llama_ftype_name(ftype)
            if named is not None:
                return named
        dominant = self._dominant_weight_type()
        return f"{dominant} (guessed)" if dominant is not None else "unknown"

    def _dominant_weight_type(self) -> str | None:
        # Matrices carry the quantisation; 1-D norms and biases stay F32 in every file type.
        # Within the repeated blocks is preferred because embedding and output matrices are often
        # stored at a higher precision and can dominate a small model by bytes.
        matrices = [t for t in self.tensors if len(t.shape) >= 2]
        in_blocks = [t for t in matrices if t.name.startswith("blk.")]
        pool = in_blocks or matrices or self.tensors
        if not pool:
            return None
        by_type: dict[str, int] = {}
        for t in pool:
            by_type[t.type_name] = by_type.get(t.type_name, 0) + t.nbytes
        return max(by_type.items(), key=lambda kv: kv[1])[0]

    # -- sizes ---------------------------------------------------------------------------------

    @cached_property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @cached_property
    def n_params(self) -> int:
        return sum(t.n_elements for t in self.tensors)

    @property
    def bits_per_weight(self) -> float:
        params = self.n_params
        return self.tensor_bytes * 8 / params if params else 0.0

    @cached_property
    def type_mix(self) -> dict[str, int]:
        """Bytes per ggml type name, largest first."""
        mix: dict[str, int] = {}
        for t in self.tensors:
            mix[t.type_name] = mix.get(t.type_name, 0) + t.nbytes
        return dict(sorted(mix.items(), key=lambda kv: (-kv[1], kv[0])))

    @cached_property
    def expected_file_size(self) -> int:
        """Smallest size a complete file (all parts, for a split model) can have."""
        if self.parts:
            return sum(p.expected_file_size for p in self.parts)
        if not self.tensors:
            return self.header_size
        # The last tensor's trailing alignment padding is optional, so it is not counted.
        return self.data_offset + max(t.offset + t.nbytes for t in self.tensors)

    @property
    def is_truncated(self) -> bool:
        """True when the file is known to be shorter than its tensors need (weights missing)."""
        if self.parts:
            return any(p.is_truncated for p in self.parts)
        return self.file_size is not None and self.file_size < self.expected_file_size


def _as_int(value: Any) -> int | None:
    # bool is an int subclass, but a bool where a count is expected means a malformed key.
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# Far above any model (the widest are ~50k wide with 128 heads, the longest context is 10M tokens), and
# low enough that nothing the planner derives from them is large.
_MAX_WIDTH = 1 << 20
_MAX_HEADS = 1 << 14
_MAX_CONTEXT = 1 << 30


@dataclass(frozen=True)
class _Bound:
    most: int
    per_block: bool = False  # one number, or an array of one per block (llama.cpp's get_key_or_arr)
    source: Text = ""  # where the bound comes from, when it is llama.cpp's (words)


_MAX_EXPERTS_SOURCE = words("llama.cpp's LLAMA_MAX_EXPERTS")
# "{arch}." + key -> its bound; block_count first, as the arrays are checked against it.
_HPARAMS: dict[str, _Bound] = {
    "block_count": _Bound(LLAMA_MAX_LAYERS, source=words("llama.cpp's LLAMA_MAX_LAYERS")),
    "context_length": _Bound(_MAX_CONTEXT),
    "embedding_length": _Bound(_MAX_WIDTH),
    "feed_forward_length": _Bound(_MAX_WIDTH, per_block=True),
    "expert_feed_forward_length": _Bound(_MAX_WIDTH),
    "expert_count": _Bound(LLAMA_MAX_EXPERTS, source=_MAX_EXPERTS_SOURCE),
    "expert_used_count": _Bound(LLAMA_MAX_EXPERTS, source=_MAX_EXPERTS_SOURCE),
    "attention.head_count": _Bound(_MAX_HEADS, per_block=True),
    "attention.head_count_kv": _Bound(_MAX_HEADS, per_block=True),
    "attention.key_length": _Bound(_MAX_WIDTH),
    "attention.value_length": _Bound(_MAX_WIDTH),
    "attention.key_length_swa": _Bound(_MAX_WIDTH),
    "attention.value_length_swa": _Bound(_MAX_WIDTH),
    "attention.sliding_window": _Bound(_MAX_CONTEXT),
    # A period, or a flag per block.
    "attention.sliding_window_pattern": _Bound(LLAMA_MAX_LAYERS, per_block=True),
    "full_attention_interval": _Bound(LLAMA_MAX_LAYERS),
    "nextn_predict_layers": _Bound(LLAMA_MAX_LAYERS),
    "ssm.conv_kernel": _Bound(_MAX_WIDTH),
    "ssm.inner_size": _Bound(_MAX_WIDTH),
    "ssm.state_size": _Bound(_MAX_WIDTH),
    "ssm.group_count": _Bound(_MAX_WIDTH),
    "ssm.time_step_rank": _Bound(_MAX_WIDTH),
}


def check_hparams(metadata: Mapping[str, Any], label: str) -> None:
    """Raise HeaderValueError for the first hyper-parameter no model can have: not a whole number,
    negative, past its bound above, or an array without exactly one value per block."""
    arch = _as_str(metadata.get("general.architecture"))
    if arch is None:
        return
    count_key = f"{arch}.block_count"
    found: dict[str, int] = {}
    for name, bound in _HPARAMS.items():
        key = f"{arch}.{name}"
        if key not in metadata:
            continue
        blocks = (found["block_count"], count_key) if "block_count" in found else None
        found[name] = _checked_hparam(label, key, metadata[key], bound, blocks)
    for name, most_name in (("expert_used_count", "expert_count"), ("nextn_predict_layers", "block_count")):
        value, most = found.get(name), found.get(most_name)
        if value is not None and most and value > most:
            key = f"{arch}.{name}"
            message = words(
                "{file}: {key} is {value}, more than {most_key} ({most})",
                file=label,
                key=key,
                value=value,
                most_key=f"{arch}.{most_name}",
                most=most,
            )
            raise HeaderValueError(message, key=key, source=label)


def _checked_hparam(label: str, key: str, value: Any, bound: _Bound, blocks: tuple[int, str] | None) -> int:
    """``value`` checked against ``bound`` (and the block count, for an array); for an array, its largest value."""
    most = f"{bound.most:,}"
    if bound.source:
        allowed = words("a whole number from 0 to {most} ({source})", most=most, source=bound.source)
    else:
        allowed = words("a whole number from 0 to {most}", most=most)

    def fail(shown: Text, reason: Text) -> HeaderValueError:
        message = words("{file}: {key} is {value}; {reason}", file=label, key=key, value=shown, reason=reason)
        return HeaderValueError(message, key=key, source=label)

    if bound.per_block and isinstance(value, list | ArraySummary):
        if isinstance(value, ArraySummary):
            raise fail(_shown(value), words("too long to be one value per block"))
        if blocks is not None and len(value) != blocks[0]:
            raise fail(
                _shown(value),
                words("it needs one value for each of the {n} blocks ({key})", n=blocks[0], key=blocks[1]),
            )
        for item in value:
            if not isinstance(item, int) or not 0 <= item <= bound.most:  # bools are flags, 0 or 1
                raise fail(
                    words("an array holding {value}", value=_shown(item)),
                    words("each value must be {allowed}", allowed=allowed),
                )
        return max(value, default=0)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= bound.most:
        raise fail(_shown(value), words("it must be {allowed}", allowed=allowed))
    return value


def _shown(value: Any) -> Text:
    if isinstance(value, list | ArraySummary):
        if len(value) == 1:
            return words("an array of 1 value")
        return words("an array of {n} values", n=len(value))
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _fmt_bytes(n: int) -> Text:
    if n >= _MiB and n % _MiB == 0:
        return f"{n // _MiB} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return words("{n} bytes", n=n)


# What the cursor is reading, for its messages: a fixed part of the header, or the i-th metadata key or tensor
# info (with its name once read). Kept as figures and put into words only for a message: a header has
# thousands of keys and tensors.
_KEY, _TENSOR = 1, 2


class _Cursor:
    """Sequential reader over a file or a bytes prefix that enforces every limit.

    ``pos`` is absolute. Bytes ``[buf_start, buf_end)`` are held in ``buf``; a file is refilled
    a chunk at a time, a bytes object is the whole buffer. ``hard_end`` is the first byte nothing
    may be read from: the end of the file or the header size limit, whichever comes first.
    """

    def __init__(
        self,
        label: str,
        limits: Limits,
        *,
        data: bytes | bytearray | memoryview | None = None,
        fp: BinaryIO | None = None,
        file_size: int | None = None,
    ) -> None:
        self.label = label
        self.limits = limits
        self.fp = fp
        self.pos = 0
        self._fixed: Text = words("the header")  # what is being read, for error messages
        self._at: tuple[int, int, str | None] | None = None  # or the i-th key or tensor info (see reading())
        self.kept_budget = limits.max_kept_items
        self.buf: bytes | bytearray | memoryview
        if data is not None:
            self.buf = data
            self.buf_start = 0
            # Bytes past the header limit are never looked at, however many were passed in.
            self.buf_end = min(len(data), limits.max_header_bytes)
            if file_size is not None and file_size < len(data):
                file_size = len(data)
            # Whether more of the file exists beyond what we were given.
            self.is_prefix = file_size is None or file_size > len(data)
        else:
            self.buf = b""
            self.buf_start = 0
            self.buf_end = 0
            self.is_prefix = False
        self.file_size = file_size
        end = limits.max_header_bytes
        if file_size is not None:
            end = min(end, file_size)
        self.hard_end = end

    # -- what is being read --------------------------------------------------------------------

    @property
    def what(self) -> Text:
        """What is being read, in words: "metadata key 3 'general.name'", "the version"."""
        if self._at is None:
            return self._fixed
        kind, index, name = self._at
        if kind == _KEY:
            if name is None:
                return words("metadata key {i}", i=index)
            return words("metadata key {i} {key}", i=index, key=repr(name))
        if name is None:
            return words("tensor info {i}", i=index)
        return words("tensor info {i} {name}", i=index, name=repr(name))

    @what.setter
    def what(self, value: Text) -> None:
        self._fixed, self._at = value, None

    def reading(self, kind: int, index: int, name: str | None = None) -> None:
        """Reading the ``index``-th metadata key (``_KEY``) or tensor info (``_TENSOR``), named once known."""
        self._at = (kind, index, name)

    # -- bounds --------------------------------------------------------------------------------

    def error(self, message: Text) -> GGUFError:
        return GGUFError(words("{file}: {problem}", file=self.label, problem=message), source=self.label)

    def check_room(self, n: int, detail: Text = "") -> None:
        """Raise unless ``n`` bytes from ``pos`` can exist: the one place claims meet reality."""
        end = self.pos + n
        if end <= self.buf_end and end <= self.hard_end:
            return
        if end > self.limits.max_header_bytes:
            raise self.error(
                words(
                    "header is larger than the {most} allowed (at byte {pos} reading {what})",
                    most=_fmt_bytes(self.limits.max_header_bytes),
                    pos=self.pos,
                    what=words("{what}: {detail}", what=self.what, detail=detail) if detail else self.what,
                )
            )
        if self.file_size is not None and end > self.file_size:
            figures = {"pos": self.pos, "what": self.what, "n": n, "left": max(self.file_size - self.pos, 0)}
            if detail:
                raise self.error(
                    words(
                        "file ends inside the header (at byte {pos} reading {what}; needs {n} bytes, {left} left: "
                        "{detail})",
                        detail=detail,
                        **figures,
                    )
                )
            raise self.error(
                words(
                    "file ends inside the header (at byte {pos} reading {what}; needs {n} bytes, {left} left)",
                    **figures,
                )
            )
        if self.fp is None and self.is_prefix and end > self.buf_end:
            have = self.buf_end
            needed = max(2 * have, end, _MIN_RETRY)
            needed = min(needed, self.limits.max_header_bytes)
            if self.file_size is not None:
                needed = min(needed, self.file_size)
            raise HeaderIncomplete(
                words(
                    "{file}: header continues past the {have} bytes read (at byte {pos} reading {what}); "
                    "retry with {needed} bytes",
                    file=self.label,
                    have=have,
                    pos=self.pos,
                    what=self.what,
                    needed=needed,
                ),
                needed=needed,
                have=have,
                source=self.label,
            )

    def require(self, n: int) -> None:
        """Make ``[pos, pos + n)`` available in ``buf``."""
        if self.pos + n <= self.buf_end:
            return
        self.check_room(n)
        if self.fp is None:
            return  # check_room raised unless the bytes are there
        want = min(max(n, _CHUNK), self.hard_end - self.pos)
        try:
            self.fp.seek(self.pos)
            chunk = self.fp.read(want)
        except OSError as e:
            raise self.error(
                words("read failed at byte {pos} ({reason})", pos=self.pos, reason=e.strerror or message_of(e))
            ) from e
        self.buf = chunk
        self.buf_start = self.pos
        self.buf_end = self.pos + len(chunk)
        if len(chunk) < n:
            # The file shrank after it was measured (still being copied or written).
            raise self.error(
                words("file ends inside the header (at byte {pos} reading {what})", pos=self.buf_end, what=self.what)
            )

    def skip(self, n: int) -> None:
        if self.pos + n <= self.buf_end:
            self.pos += n
            return
        self.check_room(n)
        # For a file the bytes are known to exist (check_room); the next read refills from here.
        self.pos += n

    # -- primitives ----------------------------------------------------------------------------

    def u32(self) -> int:
        self.require(4)
        value: int = _U32.unpack_from(self.buf, self.pos - self.buf_start)[0]
        self.pos += 4
        return value

    def u64(self) -> int:
        self.require(8)
        value: int = _U64.unpack_from(self.buf, self.pos - self.buf_start)[0]
        self.pos += 8
        return value

    def scalar(self, vtype: int) -> Any:
        s = _SCALAR_STRUCTS[vtype]
        self.require(s.size)
        value = s.unpack_from(self.buf, self.pos - self.buf_start)[0]
        self.pos += s.size
        return value

    def string_length(self) -> int:
        start = self.pos
        n = self.u64()
        if n > self.limits.max_string_bytes:
            raise self.error(
                words(
                    "string at byte {pos} claims {n} bytes, more than the {most} allowed (reading {what})",
                    pos=start,
                    n=n,
                    most=_fmt_bytes(self.limits.max_string_bytes),
                    what=self.what,
                )
            )
        return n

    def string(self, most: int | None = None) -> str:
        """A string of at most ``most`` bytes when given, else of any length the limits allow."""
        start = self.pos
        n = self.string_length()
        if most is not None and n > most:
            raise self.error(
                words(
                    "string at byte {pos} is {n} bytes, more than the {most} allowed (reading {what})",
                    pos=start,
                    n=n,
                    most=most,
                    what=self.what,
                )
            )
        self.require(n)
        off = self.pos - self.buf_start
        # Invalid UTF-8 happens in the wild (byte-level tokens); it must not abort the read.
        text = str(self.buf[off : off + n], "utf-8", "replace")
        self.pos += n
        return text

    def skip_string(self) -> None:
        self.skip(self.string_length())

    def skip_strings(self, count: int) -> None:
        """Skip ``count`` strings: the hot loop for tokenizer vocabularies and merges."""
        max_len = self.limits.max_string_bytes
        unpack = _U64.unpack_from
        while count > 0:
            buf = self.buf
            base = self.buf_start
            p = self.pos - base
            end = min(self.buf_end, self.hard_end) - base
            last_prefix = end - 8
            # Walk the length prefixes inside the buffer with locals only (a for loop over a
            # range is about twice as fast as a counted while loop here). Anything unusual, the
            # end of the buffer or an over-long string, drops to the checked slow path below.
            done = 0
            for done in range(count):  # noqa: B007 - `done` is read after the loop
                if p > last_prefix:
                    break
                n = unpack(buf, p)[0]
                if n > max_len:
                    break
                q = p + 8 + n
                if q > end:
                    break
                p = q
            else:
                done = count
            self.pos = base + p
            count -= done
            if count > 0:
                self.skip_string()
                count -= 1


def _parse(cur: _Cursor, source: str) -> GGUFHeader:
    limits = cur.limits

    cur.what = words("the file magic")
    _check_magic(cur)
    cur.pos = 4
    cur.what = words("the version")
    version = cur.u32()
    _check_version(cur, version)

    cur.what = words("the tensor and metadata counts")
    n_tensors = cur.u64()
    n_kv = cur.u64()
    if n_tensors > limits.max_tensors:
        raise cur.error(
            words("header claims {n} tensors, more than the {most} allowed", n=n_tensors, most=limits.max_tensors)
        )
    if n_kv > limits.max_kv:
        raise cur.error(
            words("header claims {n} metadata keys, more than the {most} allowed", n=n_kv, most=limits.max_kv)
        )
    cur.check_room(
        n_kv * _MIN_KV_BYTES + n_tensors * _MIN_TENSOR_INFO_BYTES,
        words("{keys} metadata keys and {tensors} tensor infos cannot fit", keys=n_kv, tensors=n_tensors),
    )

    metadata: dict[str, Any] = {}
    for i in range(n_kv):
        cur.reading(_KEY, i)
        key = cur.string()
        cur.reading(_KEY, i, key)
        vtype = cur.u32()
        if key in metadata:
            raise cur.error(words("duplicate metadata key {key}", key=repr(key)))
        metadata[key] = _read_value(cur, vtype, 0)

    check_hparams(metadata, cur.label)
    alignment = _alignment(cur, metadata)

    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    for i in range(n_tensors):
        cur.reading(_TENSOR, i)
        info = _read_tensor_info(cur, alignment, i)
        if info.name in seen:
            raise cur.error(words("duplicate tensor name {name}", name=repr(info.name)))
        seen.add(info.name)
        tensors.append(info)

    header_size = cur.pos
    data_offset = -(-header_size // alignment) * alignment
    return GGUFHeader(
        source=source,
        version=version,
        metadata=metadata,
        tensors=tensors,
        alignment=alignment,
        data_offset=data_offset,
        header_size=header_size,
        file_size=cur.file_size,
    )


_HTML_PAGE = words("an HTML page (a login or error page saved instead of the model?)")
_FOREIGN_MAGICS: tuple[tuple[bytes, Text], ...] = (
    (b"PK\x03\x04", words("a ZIP archive (a PyTorch checkpoint?)")),
    (b"tjgg", words("a legacy GGJT file; re-convert it to GGUF")),
    (b"fmgg", words("a legacy GGMF file; re-convert it to GGUF")),
    (b"lmgg", words("a legacy GGML file; re-convert it to GGUF")),
    (b"vers", words("a Git LFS pointer, not the model itself")),
    (b"<!DO", _HTML_PAGE),
    (b"<htm", _HTML_PAGE),
    (b"\x1f\x8b", words("a gzip archive")),
    (b"\x89HDF", words("an HDF5 (Keras) file")),
)


def _check_magic(cur: _Cursor) -> None:
    # At this point the buffer starts at byte 0 for both files and bytes.
    if cur.fp is not None:
        avail = min(4, cur.hard_end)
        if avail:
            cur.require(avail)
    else:
        avail = min(4, cur.buf_end)
    head = bytes(cur.buf[:avail])
    if head == GGUF_MAGIC:
        return
    if not head and not cur.is_prefix:
        raise cur.error(words("empty file (0 bytes), not a GGUF file"))
    if GGUF_MAGIC.startswith(head):
        # Right so far but too short to tell: ask for more if there is more, else say so.
        if cur.is_prefix:
            cur.check_room(4)
        raise cur.error(words("file is only {n} bytes, too short to be a GGUF file", n=len(head)))
    hint = next((h for m, h in _FOREIGN_MAGICS if head.startswith(m)), None)
    if hint:
        raise cur.error(
            words("not a GGUF file (it starts with {start}; looks like {hint})", start=_shown_bytes(head), hint=hint)
        )
    raise cur.error(words("not a GGUF file (it starts with {start})", start=_shown_bytes(head)))


def _shown_bytes(data: bytes) -> str:
    """Bytes as a person reads them: the hex, and the letters where there are letters ("50 4B 03 04, PK..")."""
    letters = "".join(chr(b) if 32 <= b < 127 else "." for b in data)
    return f"{data.hex(' ').upper()}, {letters}"


def _check_version(cur: _Cursor, version: int) -> None:
    if version in SUPPORTED_VERSIONS:
        return
    swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
    if swapped in (1, 2, 3):
        # The magic is always written little-endian, so a big-endian file shows a byte-swapped
        # version right after it.
        raise cur.error(
            words("big-endian GGUF file (version {version}); only little-endian files are supported", version=swapped)
        )
    if version == 1:
        raise cur.error(words("GGUF version 1 is not supported (too old: re-convert the model)"))
    raise cur.error(
        words("unsupported GGUF version {version} (this reader understands versions 2 and 3)", version=version)
    )


def _read_value(cur: _Cursor, vtype: int, depth: int) -> Any:
    if vtype in _SCALAR_STRUCTS:
        return cur.scalar(vtype)
    if vtype == ValueType.STRING:
        return cur.string()
    if vtype == ValueType.ARRAY:
        return _read_array(cur, depth + 1)
    raise cur.error(words("unknown metadata value type {type} (reading {what})", type=vtype, what=cur.what))


def _read_array(cur: _Cursor, depth: int) -> list[Any] | ArraySummary:
    limits = cur.limits
    if depth > limits.max_nesting:
        raise cur.error(_too_nested(cur))
    item_type = cur.u32()
    if item_type not in _MIN_ITEM_BYTES:
        raise cur.error(_unknown_item_type(cur, item_type))
    length = cur.u64()
    if length > limits.max_array_len:
        raise cur.error(_too_long(cur, length))
    item_name = ValueType.NAMES[item_type]
    cur.check_room(length * _MIN_ITEM_BYTES[item_type], words("array of {n} {type} items", n=length, type=item_name))

    if length > limits.max_array_keep or length > cur.kept_budget:
        _skip_array_items(cur, item_type, length, depth)
        return ArraySummary(item_type, length)
    cur.kept_budget -= length

    if item_type in _SCALAR_FORMATS:
        fmt, size = _SCALAR_FORMATS[item_type]
        cur.require(length * size)
        values = struct.unpack_from(f"<{length}{fmt}", cur.buf, cur.pos - cur.buf_start)
        cur.pos += length * size
        return list(values)
    if item_type == ValueType.STRING:
        return [cur.string() for _ in range(length)]
    return [_read_array(cur, depth + 1) for _ in range(length)]


def _skip_array_items(cur: _Cursor, item_type: int, length: int, depth: int) -> None:
    if item_type in _SCALAR_FORMATS:
        cur.skip(length * _SCALAR_FORMATS[item_type][1])
    elif item_type == ValueType.STRING:
        cur.skip_strings(length)
    else:
        if depth + 1 > cur.limits.max_nesting:
            raise cur.error(_too_nested(cur))
        for _ in range(length):
            inner_type = cur.u32()
            if inner_type not in _MIN_ITEM_BYTES:
                raise cur.error(_unknown_item_type(cur, inner_type))
            inner_len = cur.u64()
            if inner_len > cur.limits.max_array_len:
                raise cur.error(_too_long(cur, inner_len))
            cur.check_room(inner_len * _MIN_ITEM_BYTES[inner_type])
            _skip_array_items(cur, inner_type, inner_len, depth + 1)


def _too_nested(cur: _Cursor) -> Text:
    return words("arrays nested more than {most} deep (reading {what})", most=cur.limits.max_nesting, what=cur.what)


def _unknown_item_type(cur: _Cursor, item_type: int) -> Text:
    return words("unknown array item type {type} (reading {what})", type=item_type, what=cur.what)


def _too_long(cur: _Cursor, length: int) -> Text:
    return words(
        "array claims {n} items, more than the {most} allowed (reading {what})",
        n=length,
        most=cur.limits.max_array_len,
        what=cur.what,
    )


def _alignment(cur: _Cursor, metadata: dict[str, Any]) -> int:
    if "general.alignment" not in metadata:
        return GGUF_DEFAULT_ALIGNMENT
    value = metadata["general.alignment"]
    if _as_int(value) is None or value <= 0 or value & (value - 1):
        raise cur.error(words("general.alignment is {value}; it must be a power of two", value=repr(value)))
    return int(value)


def _read_tensor_info(cur: _Cursor, alignment: int, index: int) -> TensorInfo:
    limits = cur.limits
    name = cur.string(most=GGML_MAX_NAME - 1)
    cur.reading(_TENSOR, index, name)
    n_dims = cur.u32()
    if n_dims > limits.max_dims:
        raise cur.error(
            words(
                "tensor {name} claims {n} dimensions, more than the {most} allowed",
                name=repr(name),
                n=n_dims,
                most=limits.max_dims,
            )
        )
    cur.require(8 * n_dims)
    shape = struct.unpack_from(f"<{n_dims}Q", cur.buf, cur.pos - cur.buf_start)
    cur.pos += 8 * n_dims
    type_id = cur.u32()
    offset = cur.u64()
    try:
        # Validates the type id, every dimension, overflow, and whole blocks per row.
        nbytes = tensor_nbytes(type_id, shape)
    except GGMLTypeError as e:
        raise cur.error(words("tensor {name}: {problem}", name=repr(name), problem=message_of(e))) from e
    if offset % alignment:
        raise cur.error(
            words(
                "tensor {name} has offset {offset}, not a multiple of the alignment {alignment}",
                name=repr(name),
                offset=offset,
                alignment=alignment,
            )
        )
    if offset + nbytes > _INT64_MAX:
        raise cur.error(
            words("tensor {name} has offset {offset}, beyond any possible file", name=repr(name), offset=offset)
        )
    return TensorInfo(name=name, shape=shape, ggml_type=type_id, offset=offset)


def _label_for(path: str) -> str:
    return os.path.basename(path) or path


def read_header(path: str | os.PathLike[str], *, limits: Limits = DEFAULT_LIMITS) -> GGUFHeader:
    """Read the header of a GGUF file on disk; the weights may be missing (truncated/sparse)."""
    p = os.fspath(path)
    label = _label_for(p)
    try:
        f = open(p, "rb")  # noqa: SIM115 - closed below; opening is separate to word its error
    except OSError as e:
        raise GGUFError(
            words("{file}: cannot open ({reason})", file=label, reason=e.strerror or message_of(e)), source=label
        ) from e
    with f:
        try:
            st = os.fstat(f.fileno())
        except OSError as e:
            raise GGUFError(
                words("{file}: cannot read ({reason})", file=label, reason=e.strerror or message_of(e)), source=label
            ) from e
        if not stat.S_ISREG(st.st_mode):
            raise GGUFError(words("{file}: not a regular file", file=label), source=label)
        cur = _Cursor(label, limits, fp=f, file_size=st.st_size)
        return _parse(cur, p)


def read_header_from_bytes(
    data: bytes | bytearray | memoryview,
    source: str,
    *,
    file_size: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> GGUFHeader:
    """Parse a header from bytes, e.g. the start of a file fetched by an HTTP range request.

    ``file_size`` is the size of the whole file if known. When ``data`` is a prefix that ends
    inside the header, HeaderIncomplete says how many bytes to fetch instead.
    """
    if isinstance(data, memoryview):
        # struct needs a flat, contiguous run of bytes.
        if not data.c_contiguous:
            data = data.tobytes()
        elif data.format != "B" or data.ndim != 1:
            data = data.cast("B")
    cur = _Cursor(source, limits, data=data, file_size=file_size)
    return _parse(cur, source)


# "Name-00001-of-00003.gguf", as written by llama.cpp's gguf-split and gguf-py.
_SPLIT_RE = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})(?P<ext>\.gguf)$", re.IGNORECASE)


@dataclass(frozen=True)
class SplitName:
    """What a split part's file name says: ``Name-00002-of-00003.gguf`` is part 2 of 3 of ``Name``."""

    stem: str
    part: int  # 1-based, as in the name; not checked against count
    count: int
    ext: str = ".gguf"  # spelled as in the name

    def part_name(self, part: int) -> str:
        """The file name of another part of the same model."""
        return f"{self.stem}-{part:05d}-of-{self.count:05d}{self.ext}"


def parse_split_name(name: str) -> SplitName | None:
    """The split fields of a file name (no folder), or None when it is not named like a split part."""
    m = _SPLIT_RE.match(name)
    if m is None:
        return None
    return SplitName(m["stem"], int(m["no"]), int(m["count"]), m["ext"])


def split_parts(path: str | os.PathLike[str]) -> list[Path]:
    """All parts of a split model in order, if ``path`` is named like one; else ``[path]``."""
    p = Path(path)
    split = parse_split_name(p.name)
    if split is None:
        return [p]
    no, count = split.part, split.count
    if count < 1 or no < 1 or no > count:
        raise GGUFError(
            words("{file}: part number {no} of {count} is not a valid split name", file=p.name, no=no, count=count),
            source=p.name,
        )
    parts = [p.with_name(split.part_name(i)) for i in range(1, count + 1)]
    missing = [q for q in parts if not q.is_file()]
    if missing:
        shown = ", ".join(q.name for q in missing[:5]) + (", ..." if len(missing) > 5 else "")
        if len(missing) == 1:
            message = words(
                "{file}: split model part is missing: {parts} (looked in {folder})",
                file=p.name,
                parts=shown,
                folder=str(p.parent),
            )
        else:
            message = words(
                "{file}: split model {n} parts are missing: {parts} (looked in {folder})",
                file=p.name,
                n=len(missing),
                parts=shown,
                folder=str(p.parent),
            )
        raise GGUFError(message, source=p.name)
    return parts


def read_model(path: str | os.PathLike[str], *, limits: Limits = DEFAULT_LIMITS) -> GGUFHeader:
    """One header for a whole model: a single file, or every part of a split model combined.

    Metadata comes from part 1 (the others carry only split keys); tensors come from all parts,
    each tagged with its part index; ``file_size`` is the total of the parts.
    """
    parts = split_parts(path)
    if len(parts) == 1:
        return read_header(parts[0], limits=limits)
    headers = [read_header(q, limits=limits) for q in parts]
    return combine_split(headers, [q.name for q in parts])


def combine_split(headers: list[GGUFHeader], names: list[str]) -> GGUFHeader:
    """One header from the headers of a split model's parts, in order (read from disk or over HTTP).

    Checks that the parts belong together (split.count, split.no, no tensor twice, split.tensors.count).
    """
    first = headers[0]
    label = names[0]
    declared = first.metadata.get("split.count")
    if _as_int(declared) is not None and declared != len(headers):
        raise GGUFError(
            words(
                "{file}: says it has {declared} parts, but its name says {named}",
                file=label,
                declared=declared,
                named=len(headers),
            ),
            source=label,
        )
    for i, h in enumerate(headers):
        no = _as_int(h.metadata.get("split.no"))
        if no is not None and no != i:
            raise GGUFError(
                words("{file}: is split part {no}, expected part {expected}", file=names[i], no=no + 1, expected=i + 1),
                source=label,
            )

    tensors: list[TensorInfo] = []
    seen: set[str] = set()
    for i, h in enumerate(headers):
        for t in h.tensors:
            if t.name in seen:
                raise GGUFError(
                    words("{file}: tensor {name} appears in two parts", file=names[i], name=repr(t.name)), source=label
                )
            seen.add(t.name)
            tensors.append(replace(t, part=i))
    declared_tensors = _as_int(first.metadata.get("split.tensors.count"))
    if declared_tensors is not None and declared_tensors != len(tensors):
        raise GGUFError(
            words(
                "{file}: split model declares {declared} tensors but its parts hold {held}",
                file=label,
                declared=declared_tensors,
                held=len(tensors),
            ),
            source=label,
        )
    sizes = [h.file_size for h in headers]
    total: int | None = None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)
    return GGUFHeader(
        source=first.source,
        version=first.version,
        metadata=dict(first.metadata),
        tensors=tensors,
        alignment=first.alignment,
        data_offset=first.data_offset,
        header_size=first.header_size,
        file_size=total,
        parts=headers,
    )
