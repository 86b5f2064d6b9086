"""ggml tensor types and llama.cpp file types, as numbers a header reader can use.

Block sizes and byte sizes come from the block structs in llama.cpp's ``ggml/src/ggml-common.h``
(each ``type_size`` is ``sizeof(block_xxx)``); the ids come from ``enum ggml_type`` in
``ggml/include/ggml.h``; the file types from ``enum llama_ftype`` in ``include/llama.h``.
The ids are part of the on-disk format, so they never change once assigned; new types are only
ever appended, which is why an unknown id is reported rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "GGML_TYPES",
    "GGML_TYPES_BY_NAME",
    "LLAMA_FTYPE_GUESSED",
    "LLAMA_FTYPE_NAMES",
    "QK_K",
    "REMOVED_GGML_TYPES",
    "GGMLType",
    "GGMLTypeError",
    "ggml_type",
    "ggml_type_name",
    "llama_ftype_name",
    "n_elements",
    "tensor_nbytes",
]

# Elements in one "super-block" of the k-quants and i-quants.
QK_K = 256

# ggml counts elements and bytes in int64_t / size_t; anything that does not fit is corrupt.
_INT64_MAX = (1 << 63) - 1


class GGMLTypeError(ValueError):
    """A tensor type id is unknown, or a shape does not fit its type."""


@dataclass(frozen=True)
class GGMLType:
    """One ggml tensor storage type: ``block_size`` elements are stored in ``type_size`` bytes."""

    type_id: int
    name: str
    block_size: int
    type_size: int

    @property
    def bits_per_weight(self) -> float:
        return self.type_size * 8 / self.block_size


def _t(type_id: int, name: str, block_size: int, type_size: int) -> GGMLType:
    return GGMLType(type_id, name, block_size, type_size)


# The sums spell out each block struct field by field, so a wrong number is easy to check against
# ggml-common.h. "half" is a 2-byte ggml_half scale.
_TABLE: tuple[GGMLType, ...] = (
    _t(0, "F32", 1, 4),
    _t(1, "F16", 1, 2),
    _t(2, "Q4_0", 32, 2 + 32 // 2),  # half d; 4-bit quants
    _t(3, "Q4_1", 32, 2 + 2 + 32 // 2),  # half d, m; 4-bit quants
    _t(6, "Q5_0", 32, 2 + 4 + 32 // 2),  # half d; 32 high bits; 4-bit low quants
    _t(7, "Q5_1", 32, 2 + 2 + 4 + 32 // 2),  # half d, m; 32 high bits; 4-bit low quants
    _t(8, "Q8_0", 32, 2 + 32),  # half d; int8 quants
    _t(9, "Q8_1", 32, 2 + 2 + 32),  # half d, s; int8 quants
    _t(10, "Q2_K", QK_K, 2 + 2 + QK_K // 16 + QK_K // 4),  # half d, dmin; scales; 2-bit quants
    _t(11, "Q3_K", QK_K, 2 + QK_K // 8 + QK_K // 4 + 12),  # half d; hmask; 2-bit quants; scales
    _t(12, "Q4_K", QK_K, 2 + 2 + 12 + QK_K // 2),  # half d, dmin; 12 scale bytes; 4-bit quants
    _t(13, "Q5_K", QK_K, 2 + 2 + 12 + QK_K // 8 + QK_K // 2),  # as Q4_K plus high bits
    _t(14, "Q6_K", QK_K, QK_K // 2 + QK_K // 4 + QK_K // 16 + 2),  # ql; qh; int8 scales; half d
    _t(15, "Q8_K", QK_K, 4 + QK_K + 2 * (QK_K // 16)),  # float d; int8 quants; int16 bsums
    _t(16, "IQ2_XXS", QK_K, 2 + 2 * (QK_K // 8)),  # half d; uint16 qs[QK_K/8]
    _t(17, "IQ2_XS", QK_K, 2 + 2 * (QK_K // 8) + QK_K // 32),  # half d; uint16 qs; scales
    _t(18, "IQ3_XXS", QK_K, 2 + 3 * (QK_K // 8)),  # half d; qs[3*QK_K/8]
    _t(19, "IQ1_S", QK_K, 2 + QK_K // 8 + 2 * (QK_K // 32)),  # half d; qs; uint16 qh
    _t(20, "IQ4_NL", 32, 2 + 32 // 2),  # half d; 4-bit indices into a non-linear table
    _t(21, "IQ3_S", QK_K, 2 + QK_K // 4 + QK_K // 32 + QK_K // 8 + QK_K // 64),  # d; qs; qh; signs; scales
    _t(22, "IQ2_S", QK_K, 2 + QK_K // 4 + QK_K // 32 + QK_K // 32),  # half d; qs; qh; scales
    _t(23, "IQ4_XS", QK_K, 2 + 2 + QK_K // 64 + QK_K // 2),  # half d; scales_h; scales_l; qs
    _t(24, "I8", 1, 1),
    _t(25, "I16", 1, 2),
    _t(26, "I32", 1, 4),
    _t(27, "I64", 1, 8),
    _t(28, "F64", 1, 8),
    _t(29, "IQ1_M", QK_K, QK_K // 8 + QK_K // 16 + QK_K // 32),  # qs; qh; scales (no separate d)
    _t(30, "BF16", 1, 2),
    _t(34, "TQ1_0", QK_K, (QK_K - 4 * QK_K // 64) // 5 + QK_K // 64 + 2),  # base-3 qs; qh; half d
    _t(35, "TQ2_0", QK_K, QK_K // 4 + 2),  # 2-bit qs; half d
    _t(39, "MXFP4", 32, 1 + 32 // 2),  # E8M0 shared exponent; 4-bit E2M1 values
    _t(40, "NVFP4", 64, 64 // 16 + 64 // 2),  # four UE4M3 sub-block scales; 4-bit E2M1 values
    _t(41, "Q1_0", 128, 2 + 128 // 8),  # half d; one sign bit per element
    # Newer than gguf-py 0.19 (which stops at Q1_0); upstream ggml.h assigns 42 to Q2_0.
    _t(42, "Q2_0", 64, 2 + 64 // 4),  # half d; 2-bit codes
)

GGML_TYPES: Mapping[int, GGMLType] = MappingProxyType({t.type_id: t for t in _TABLE})
GGML_TYPES_BY_NAME: Mapping[str, GGMLType] = MappingProxyType({t.name: t for t in _TABLE})

# Ids that once existed and were withdrawn; files that still use them cannot be loaded by a
# current llama.cpp, and saying which type it was is more useful than "unknown type 31".
REMOVED_GGML_TYPES: Mapping[int, str] = MappingProxyType(
    {
        4: "Q4_2",
        5: "Q4_3",
        31: "Q4_0_4_4",
        32: "Q4_0_4_8",
        33: "Q4_0_8_8",
        36: "IQ4_NL_4_4",
        37: "IQ4_NL_4_8",
        38: "IQ4_NL_8_8",
    }
)


def ggml_type(type_id: int) -> GGMLType:
    """The type with this id; GGMLTypeError naming the id if it is not one ggml knows."""
    found = GGML_TYPES.get(type_id)
    if found is not None:
        return found
    removed = REMOVED_GGML_TYPES.get(type_id)
    if removed is not None:
        raise GGMLTypeError(
            f"ggml type {type_id} ({removed}) has been removed from llama.cpp; re-download or re-convert"
        )
    raise GGMLTypeError(f"unknown ggml type {type_id} (newer than this program, or a corrupt file)")


def ggml_type_name(type_id: int) -> str:
    """Display name of a type id; never raises, so it is safe in UI code."""
    found = GGML_TYPES.get(type_id)
    if found is not None:
        return found.name
    removed = REMOVED_GGML_TYPES.get(type_id)
    return removed if removed is not None else f"TYPE_{type_id}"


def n_elements(shape: Iterable[int]) -> int:
    """Product of the dimensions, rejecting what ggml could not represent."""
    total = 1
    for dim in shape:
        if dim < 0 or dim > _INT64_MAX:
            raise GGMLTypeError(f"dimension {dim} is out of range")
        total *= dim
        if total > _INT64_MAX:
            raise GGMLTypeError("element count overflows 64 bits")
    return total


def tensor_nbytes(type_id: int, shape: tuple[int, ...]) -> int:
    """Bytes a tensor of this type and shape (GGUF order: row length first) occupies on disk."""
    info = ggml_type(type_id)
    count = n_elements(shape)
    # Blocks never straddle rows, so it is the row length (ne[0]) that must be whole blocks.
    row = shape[0] if shape else 1
    if row % info.block_size:
        raise GGMLTypeError(f"row length {row} is not a multiple of the {info.name} block size {info.block_size}")
    nbytes = count // info.block_size * info.type_size
    if nbytes > _INT64_MAX:
        raise GGMLTypeError("byte size overflows 64 bits")
    return nbytes


# llama_ftype (general.file_type) -> name, spelled as llama.cpp's quantize tool and most file
# names spell it ("Q4_K_M"), i.e. the enum name without its MOSTLY_/ALL_ prefix.
LLAMA_FTYPE_NAMES: Mapping[int, str] = MappingProxyType(
    {
        0: "F32",  # ALL_F32
        1: "F16",
        2: "Q4_0",
        3: "Q4_1",
        4: "Q4_1_SOME_F16",  # withdrawn, still found in old conversions
        7: "Q8_0",
        8: "Q5_0",
        9: "Q5_1",
        10: "Q2_K",
        11: "Q3_K_S",
        12: "Q3_K_M",
        13: "Q3_K_L",
        14: "Q4_K_S",
        15: "Q4_K_M",
        16: "Q5_K_S",
        17: "Q5_K_M",
        18: "Q6_K",
        19: "IQ2_XXS",
        20: "IQ2_XS",
        21: "Q2_K_S",
        22: "IQ3_XS",
        23: "IQ3_XXS",
        24: "IQ1_S",
        25: "IQ4_NL",
        26: "IQ3_S",
        27: "IQ3_M",
        28: "IQ2_S",
        29: "IQ2_M",
        30: "IQ4_XS",
        31: "IQ1_M",
        32: "BF16",
        33: "Q4_0_4_4",  # withdrawn (runtime repacking replaced them)
        34: "Q4_0_4_8",
        35: "Q4_0_8_8",
        36: "TQ1_0",
        37: "TQ2_0",
        38: "MXFP4_MOE",
        39: "NVFP4",
        40: "Q1_0",
    }
)

# llama.cpp ORs this bit into a file type it inferred itself rather than read from the file.
LLAMA_FTYPE_GUESSED = 1024


def llama_ftype_name(ftype: int) -> str | None:
    """Name of a general.file_type value, or None if this table does not know it."""
    guessed = bool(ftype & LLAMA_FTYPE_GUESSED)
    name = LLAMA_FTYPE_NAMES.get(ftype & ~LLAMA_FTYPE_GUESSED)
    if name is None:
        return None
    return f"{name} (guessed)" if guessed else name
