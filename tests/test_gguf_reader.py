"""GGUF header reader: real files from gguf-py's writer, hand-built hostile headers, and fuzzing."""

from __future__ import annotations

import math
import os
import random
import re
import struct
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gui.core import ggml_types
from gui.core.gguf_reader import (
    ArraySummary,
    GGUFError,
    GGUFHeader,
    HeaderIncomplete,
    Limits,
    SplitName,
    TensorInfo,
    ValueType,
    parse_split_name,
    read_header,
    read_header_from_bytes,
    read_model,
    split_parts,
)

try:
    from tests.gguf_factory import (
        gguf_nbytes,
        llama_like_tensors,
        typed,
        write_gguf,
        write_llama_like,
        write_split_gguf,
    )
except ImportError:  # tests/ is on sys.path itself (no tests/__init__.py)
    from gguf_factory import (  # type: ignore[no-redef, unused-ignore]
        gguf_nbytes,
        llama_like_tensors,
        typed,
        write_gguf,
        write_llama_like,
        write_split_gguf,
    )


# -- hand-built headers, for what no well-behaved writer produces --------------------------------


def _str(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, vtype: int, payload: bytes) -> bytes:
    return _str(key) + struct.pack("<I", vtype) + payload


def _ti(name: str, dims: tuple[int, ...], ggml_type: int, offset: int = 0) -> bytes:
    return (
        _str(name)
        + struct.pack("<I", len(dims))
        + b"".join(struct.pack("<Q", d) for d in dims)
        + struct.pack("<IQ", ggml_type, offset)
    )


def _raw(
    kvs: Sequence[bytes] = (),
    tensors: Sequence[bytes] = (),
    *,
    version: int = 3,
    n_kv: int | None = None,
    n_tensors: int | None = None,
) -> bytes:
    head = b"GGUF" + struct.pack(
        "<IQQ",
        version,
        len(tensors) if n_tensors is None else n_tensors,
        len(kvs) if n_kv is None else n_kv,
    )
    return head + b"".join(kvs) + b"".join(tensors)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _bounded(fn: Callable[[], object], *, peak_bytes: int = 4 << 20) -> GGUFError:
    """Run fn, expect GGUFError, and check it came without a large allocation (a claimed count or length
    that is never looped over or allocated; bench/header_speed.py times the reader)."""
    tracemalloc.start()
    try:
        with pytest.raises(GGUFError) as info:
            fn()
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < peak_bytes, f"peak allocation {peak} bytes"
    return info.value


# -- type tables --------------------------------------------------------------------------------


# Where gguf-py 0.19 and current ggml disagree, ggml (what loads the file) wins. Q8_1 became
# {half d, half s, int8 qs[32]} in 2024 (ggml-common.h asserts 2*sizeof(ggml_half) + QK8_1);
# gguf-py still has the old {float d, float s, ...} size. Q8_1 is an activation format that
# model files do not use, so the difference never affects a real header.
_KNOWN_GGUF_PY_DIFFERENCES = {"Q8_1": ((32, 40), (32, 36))}


def test_ggml_type_table_matches_gguf_package() -> None:
    for qtype, (block, size) in gguf.GGML_QUANT_SIZES.items():
        ours = ggml_types.GGML_TYPES[int(qtype)]
        assert ours.name == qtype.name
        if qtype.name in _KNOWN_GGUF_PY_DIFFERENCES:
            theirs, expected = _KNOWN_GGUF_PY_DIFFERENCES[qtype.name]
            assert (block, size) == theirs, "gguf-py changed; revisit the known difference"
            assert (ours.block_size, ours.type_size) == expected
            continue
        assert (ours.block_size, ours.type_size) == (block, size), qtype.name
    for qtype in gguf.GGMLQuantizationType:
        assert int(qtype) in ggml_types.GGML_TYPES
    # Only types newer than the installed gguf-py may be ours alone.
    extra = set(ggml_types.GGML_TYPES) - {int(q) for q in gguf.GGMLQuantizationType}
    assert {ggml_types.GGML_TYPES[i].name for i in extra} <= {"Q2_0"}
    assert not set(ggml_types.REMOVED_GGML_TYPES) & set(ggml_types.GGML_TYPES)


def test_llama_ftype_names_match_gguf_package() -> None:
    for ft in gguf.LlamaFileType:
        if ft is gguf.LlamaFileType.GUESSED:
            continue
        expected = ft.name.removeprefix("MOSTLY_").removeprefix("ALL_")
        assert ggml_types.LLAMA_FTYPE_NAMES[int(ft)] == expected
    assert ggml_types.llama_ftype_name(15) == "Q4_K_M"
    assert ggml_types.llama_ftype_name(15 | ggml_types.LLAMA_FTYPE_GUESSED) == "Q4_K_M (guessed)"
    assert ggml_types.llama_ftype_name(999) is None


def test_tensor_nbytes_rules() -> None:
    q4k = ggml_types.GGML_TYPES_BY_NAME["Q4_K"].type_id
    assert ggml_types.tensor_nbytes(q4k, (512, 3)) == 512 * 3 // 256 * 144
    assert ggml_types.tensor_nbytes(q4k, (256, 0)) == 0  # empty tensors exist (ggml allows ne=0)
    with pytest.raises(ggml_types.GGMLTypeError, match="not a multiple of the Q4_K block size 256"):
        ggml_types.tensor_nbytes(q4k, (100, 2))
    with pytest.raises(ggml_types.GGMLTypeError, match="unknown ggml type 99"):
        ggml_types.tensor_nbytes(99, (1,))
    with pytest.raises(ggml_types.GGMLTypeError, match=r"31 \(Q4_0_4_4\) has been removed"):
        ggml_types.ggml_type(31)
    with pytest.raises(ggml_types.GGMLTypeError, match="overflows"):
        ggml_types.n_elements((1 << 32, 1 << 32))
    assert ggml_types.ggml_type_name(99) == "TYPE_99"


def test_tensor_info_properties() -> None:
    t = TensorInfo("w", (4096, 11008), ggml_types.GGML_TYPES_BY_NAME["Q6_K"].type_id, 0)
    assert t.n_elements == 4096 * 11008
    assert t.nbytes == 4096 * 11008 // 256 * 210
    assert t.type_name == "Q6_K"
    bad = TensorInfo("w", (100,), ggml_types.GGML_TYPES_BY_NAME["Q8_0"].type_id, 0)
    with pytest.raises(GGUFError, match=r"tensor 'w'.*block size 32"):
        _ = bad.nbytes
    assert TensorInfo("x", (1,), 99, 0).type_name == "TYPE_99"


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="max_tensors"):
        Limits(max_tensors=-1)


# -- metadata -----------------------------------------------------------------------------------

_EVERY_TYPE: dict[str, Any] = {
    "t.u8": typed(255, "uint8"),
    "t.i8": typed(-128, "int8"),
    "t.u16": typed(65535, "uint16"),
    "t.i16": typed(-32768, "int16"),
    "t.u32": typed(4294967295, "uint32"),
    "t.i32": typed(-2147483648, "int32"),
    "t.u64": typed(2**64 - 1, "uint64"),
    "t.i64": typed(-(2**63), "int64"),
    "t.f32": typed(0.1, "float32"),
    "t.f64": typed(0.1, "float64"),
    "t.true": typed(True, "bool"),
    "t.false": typed(False, "bool"),
    "t.str": "héllo ✓ wörld",
    "t.empty": "",
    "t.arr_u8": typed([0, 1, 255], "array", "uint8"),
    "t.arr_i8": typed([-1, 0, 1], "array", "int8"),
    "t.arr_u16": typed([1, 65535], "array", "uint16"),
    "t.arr_i16": typed([-32768, 7], "array", "int16"),
    "t.arr_u32": typed([1, 2**32 - 1], "array", "uint32"),
    "t.arr_i32": typed([-5, 5], "array", "int32"),
    "t.arr_u64": typed([2**64 - 1, 0], "array", "uint64"),
    "t.arr_i64": typed([-(2**63), 2**63 - 1], "array", "int64"),
    "t.arr_f32": typed([0.5, -1.25], "array", "float32"),
    "t.arr_f64": typed([1e300, -2.5e-300], "array", "float64"),
    "t.arr_bool": typed([True, False, True], "array", "bool"),
    "t.arr_str": typed(["a", "", "ü"], "array", "string"),
    "t.nested": typed([[1, 2], [3], [4, 5, 6]], "array", "array"),
    "t.nested_str": typed([["x", "y"], ["z"]], "array", "array"),
}


def _expected(value: Any) -> Any:
    v = value.value if hasattr(value, "vtype") else value
    if hasattr(value, "vtype") and value.vtype == gguf.GGUFValueType.FLOAT32:
        return float(np.float32(v))
    if hasattr(value, "sub_type") and value.sub_type == gguf.GGUFValueType.FLOAT32:
        return [float(np.float32(x)) for x in v]
    return v


def test_metadata_of_every_type_round_trips(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "types.gguf", metadata=_EVERY_TYPE)
    h = read_header(path)
    for key, value in _EVERY_TYPE.items():
        got = h.metadata[key]
        assert got == _expected(value), key
        assert type(got) is type(_expected(value)), key
    assert h.metadata["general.architecture"] == "llama"
    # The same bytes from memory give the same result.
    h2 = read_header_from_bytes(path.read_bytes(), "mem")
    assert h2.metadata == h.metadata


def test_long_arrays_become_summaries_and_parsing_continues(tmp_path: Path) -> None:
    md = {
        "a.strings": typed([f"s{i}" for i in range(10)], "array", "string"),
        "a.floats": typed([float(i) for i in range(10)], "array", "float32"),
        "a.nested": typed([[i, i] for i in range(10)], "array", "array"),
        "a.kept": typed(list(range(4)), "array", "int32"),
        "z.after": "still read",
    }
    path = write_gguf(tmp_path / "arrays.gguf", metadata=md)
    h = read_header(path, limits=Limits(max_array_keep=4))
    assert h.metadata["a.strings"] == ArraySummary(ValueType.STRING, 10)
    assert h.metadata["a.floats"] == ArraySummary(ValueType.FLOAT32, 10)
    assert h.metadata["a.nested"] == ArraySummary(ValueType.ARRAY, 10)
    assert len(h.metadata["a.strings"]) == 10
    assert h.metadata["a.strings"].item_type_name == "string"
    assert h.metadata["a.kept"] == [0, 1, 2, 3]  # exactly max_array_keep: kept
    assert h.metadata["z.after"] == "still read"
    assert h.tensors == read_header(path).tensors


def test_kept_item_budget_bounds_many_short_arrays(tmp_path: Path) -> None:
    md = {f"k.{i}": typed([1, 2, 3], "array", "uint8") for i in range(5)}
    h = read_header(write_gguf(tmp_path / "budget.gguf", metadata=md), limits=Limits(max_kept_items=7))
    kept = [k for k in md if isinstance(h.metadata[k], list)]
    assert kept == ["k.0", "k.1"]
    assert h.metadata["k.2"] == ArraySummary(ValueType.UINT8, 3)


def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    data = _raw([_kv("bad", ValueType.STRING, _str(b"ok\xff\xfe"))])
    h = read_header(_write(tmp_path / "utf.gguf", data))
    assert h.metadata["bad"] == "ok\ufffd\ufffd"


# -- tensors ------------------------------------------------------------------------------------


def test_tensor_infos_match_gguf_reader_for_every_type(tmp_path: Path) -> None:
    specs = [
        (f"t.{q.name}", (256, 3, 2) if i % 2 else (512, 5), q.name)
        for i, q in enumerate(gguf.GGML_QUANT_SIZES)
        if q.name not in _KNOWN_GGUF_PY_DIFFERENCES
    ]
    path = write_gguf(tmp_path / "all_types.gguf", tensors=specs)
    h = read_header(path)
    reference = gguf.GGUFReader(path)
    assert len(h.tensors) == len(reference.tensors) == len(specs)
    for ours, ref, (name, shape, type_name) in zip(h.tensors, reference.tensors, specs, strict=True):
        assert ours.name == ref.name == name
        assert ours.shape == tuple(int(d) for d in ref.shape) == tuple(shape)
        assert ours.ggml_type == int(ref.tensor_type)
        assert ours.type_name == type_name
        assert ours.nbytes == int(ref.n_bytes) == gguf_nbytes(shape, type_name)
        assert ours.n_elements == int(ref.n_elements)
        assert h.data_offset + ours.offset == int(ref.data_offset)
    assert h.tensor_bytes == sum(int(t.n_bytes) for t in reference.tensors)


def test_header_fields_and_derived_values(tmp_path: Path) -> None:
    kw: dict[str, Any] = dict(n_layer=3, n_embd=256, n_head=4, n_head_kv=2, n_ff=768, n_vocab=300)
    path = write_llama_like(tmp_path / "m.gguf", ctx=4096, chat_template="{{ messages }}", **kw)
    h = read_header(path)
    assert (h.version, h.architecture, h.name) == (3, "llama", "Tiny Llama")
    assert h.n_layer == 3 and h.context_length == 4096
    assert h.arch_value("embedding_length") == 256
    assert h.arch_value("attention.head_count_kv") == 2
    assert h.arch_value("no.such.key", "dflt") == "dflt"
    assert h.has_chat_template
    assert h.file_type == int(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    assert h.metadata["tokenizer.ggml.tokens"][:3] == ["<unk>", "<s>", "</s>"]
    assert len(h.metadata["tokenizer.ggml.tokens"]) == 300

    specs = llama_like_tensors(quant="Q4_K", **kw)
    assert [t.name for t in h.tensors] == [s[0] for s in specs]
    assert h.n_params == sum(math.prod(s[1]) for s in specs)
    assert h.tensor_bytes == sum(gguf_nbytes(s[1], s[2]) for s in specs)
    assert h.bits_per_weight == pytest.approx(h.tensor_bytes * 8 / h.n_params)
    assert h.type_mix == {
        "Q4_K": sum(gguf_nbytes(s[1], s[2]) for s in specs if s[2] == "Q4_K"),
        "F32": sum(gguf_nbytes(s[1], s[2]) for s in specs if s[2] == "F32"),
    }
    assert list(h.type_mix) == ["Q4_K", "F32"]  # largest first
    assert h.alignment == 32 and h.data_offset % 32 == 0
    assert h.header_size <= h.data_offset < h.header_size + 32
    assert h.tensor("blk.2.ffn_down.weight") == h.tensors[-3]
    assert h.tensor("nope") is None
    assert h.split_count == 1


def test_custom_alignment(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "a.gguf", alignment=256)
    h = read_header(path)
    ref = gguf.GGUFReader(path)
    assert h.alignment == 256 and h.data_offset % 256 == 0
    assert [h.data_offset + t.offset for t in h.tensors] == [int(t.data_offset) for t in ref.tensors]
    assert not h.is_truncated


def test_unknown_and_removed_ggml_types_are_named(tmp_path: Path) -> None:
    for type_id, pattern in ((99, "unknown ggml type 99"), (31, r"ggml type 31 \(Q4_0_4_4\)")):
        path = _write(tmp_path / f"t{type_id}.gguf", _raw(tensors=[_ti("blk.0.w", (32, 2), type_id)]))
        with pytest.raises(GGUFError, match=rf"^t{type_id}\.gguf: tensor 'blk\.0\.w': {pattern}"):
            read_header(path)


@pytest.mark.parametrize(
    ("tensors", "kvs", "message"),
    [
        (
            [_ti("w", (100, 2), 8)],
            [],
            r"tensor 'w': row length 100 is not a multiple of the Q8_0 block size 32",
        ),
        ([_ti("w", (4,), 0, offset=16)], [], r"tensor 'w' has offset 16, not a multiple of the alignment 32"),
        ([_ti("w", (4,), 0), _ti("w", (4,), 0, 32)], [], r"duplicate tensor name 'w'"),
        ([], [_kv("k", 4, b"\0" * 4), _kv("k", 4, b"\0" * 4)], r"duplicate metadata key 'k'"),
        ([], [_kv("k", 77, b"")], r"unknown metadata value type 77"),
        ([], [_kv("k", 9, struct.pack("<IQ", 42, 1))], r"unknown array item type 42"),
        ([], [_kv("general.alignment", 4, struct.pack("<I", 48))], r"general.alignment is 48"),
        ([_ti("w", (1 << 40, 1 << 40), 0)], [], r"tensor 'w': element count overflows"),
        ([_ti("w", (1 << 63,), 0)], [], r"tensor 'w': dimension \d+ is out of range"),
        ([_ti("w", (32,), 0, offset=(1 << 63) - 32)], [], r"tensor 'w' has offset \d+, beyond any"),
    ],
)
def test_corrupt_fields_are_reported(tmp_path: Path, tensors: list[bytes], kvs: list[bytes], message: str) -> None:
    path = _write(tmp_path / "bad.gguf", _raw(kvs, tensors))
    with pytest.raises(GGUFError, match=f"^bad.gguf: {message}"):
        read_header(path)


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    payload = struct.pack("<IQ", 9, 1) * 20 + struct.pack("<IQ", 0, 0)
    path = _write(tmp_path / "deep.gguf", _raw([_kv("k", 9, payload)]))
    _bounded(lambda: read_header(path))
    with pytest.raises(GGUFError, match="nested more than 8 deep"):
        read_header(path)
    # The same nesting inside an array too long to keep is refused on the skip path as well.
    skipped = struct.pack("<IQ", 9, 5) + payload * 5
    path2 = _write(tmp_path / "deep2.gguf", _raw([_kv("k", 9, skipped)]))
    with pytest.raises(GGUFError, match="nested more than 8 deep"):
        read_header(path2, limits=Limits(max_array_keep=2))


def test_zero_dim_scalar_and_empty_tensors(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.gguf", _raw(tensors=[_ti("scalar", (), 0), _ti("empty", (0, 4), 0, 32)]))
    h = read_header(path)
    assert [(t.shape, t.n_elements, t.nbytes) for t in h.tensors] == [((), 1, 4), ((0, 4), 0, 0)]


# -- sparse, truncated and partial files --------------------------------------------------------


def test_sparse_header_only_file(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "sparse.gguf", n_layer=4, n_embd=512, n_ff=1024)
    h = read_header(path)
    size = path.stat().st_size
    assert h.file_size == size
    assert h.expected_file_size <= size < h.expected_file_size + h.alignment
    assert not h.is_truncated
    dense = read_header(write_llama_like(tmp_path / "dense.gguf", n_layer=4, n_embd=512, n_ff=1024, sparse=False))
    assert (dense.metadata, dense.tensors, dense.file_size) == (h.metadata, h.tensors, h.file_size)


def test_file_cut_after_header_reads_and_is_truncated(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "cut.gguf")
    full = read_header(path)
    os.truncate(path, full.data_offset + 1000)
    h = read_header(path)
    assert h.tensors == full.tensors and h.metadata == full.metadata
    assert h.file_size == full.data_offset + 1000
    assert h.expected_file_size == full.expected_file_size
    assert h.is_truncated
    os.truncate(path, full.header_size)  # not even the alignment padding
    assert read_header(path).is_truncated


def test_file_cut_inside_header_names_the_place(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "cut.gguf")
    full = read_header(path)
    data = path.read_bytes()
    last = len(full.tensors) - 1
    _write(path, data[: full.header_size - 5])
    err = _bounded(lambda: read_header(path))
    assert re.match(
        rf"^cut\.gguf: file ends inside the header \(at byte \d+ reading tensor info {last} 'output\.weight'",
        str(err),
    ), str(err)
    _write(path, data[:2000])
    with pytest.raises(
        GGUFError,
        match=r"^cut\.gguf: file ends inside the header \(at byte \d+ reading metadata key \d+ 'tokenizer\.",
    ):
        read_header(path)
    _write(path, data[:40])  # too short for the number of keys and tensors it announces
    with pytest.raises(GGUFError, match=r"reading the tensor and metadata counts; .* cannot fit"):
        read_header(path)
    _write(path, data[:10])
    with pytest.raises(GGUFError, match=r"file ends inside the header \(at byte 8 reading the tensor and metadata"):
        read_header(path)
    # Every cut inside the header is an error, never another exception and never a success.
    for cut in range(0, full.header_size, 97):
        _write(path, data[:cut])
        with pytest.raises(GGUFError):
            read_header(path)


def test_bytes_prefix_reads_and_retries(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "p.gguf", n_vocab=20000)
    full = read_header(path)
    data = path.read_bytes()
    size = len(data)

    h = read_header_from_bytes(data[: full.header_size], "https://example/p.gguf", file_size=size)
    assert (h.metadata, h.tensors, h.data_offset) == (full.metadata, full.tensors, full.data_offset)
    assert h.source == "https://example/p.gguf"
    assert not h.is_truncated and h.file_size == size

    # A caller that starts small and follows `needed` gets there in a few rounds.
    have, rounds = 1024, 0
    while True:
        try:
            h = read_header_from_bytes(data[:have], "u", file_size=size)
            break
        except HeaderIncomplete as e:
            assert e.have == have
            assert have < e.needed <= size
            assert str(e).startswith("u: header continues past the")
            have, rounds = e.needed, rounds + 1
    assert h.tensors == full.tensors
    assert 1 <= rounds <= 8

    # Without a file size the request is still growing and bounded by the header limit.
    with pytest.raises(HeaderIncomplete) as info:
        read_header_from_bytes(data[:5000], "u")
    assert 5000 < info.value.needed <= Limits().max_header_bytes
    head = data[: full.header_size]
    doubled = bytearray(2 * len(head))
    doubled[::2] = head
    whole_words = -(-full.header_size // 4) * 4
    views: list[bytes | bytearray | memoryview] = [
        bytearray(data[: full.header_size]),
        memoryview(data)[: full.header_size],
        memoryview(doubled)[::2],  # not contiguous
        memoryview(data[:whole_words]).cast("I"),  # not bytes-formatted
    ]
    for view in views:
        assert read_header_from_bytes(view, "u").tensors == full.tensors


def test_bytes_that_are_the_whole_file_do_not_ask_for_more(tmp_path: Path) -> None:
    data = write_llama_like(tmp_path / "w.gguf").read_bytes()[:3000]
    with pytest.raises(GGUFError, match="file ends inside the header") as info:
        read_header_from_bytes(data, "w.gguf", file_size=3000)
    assert not isinstance(info.value, HeaderIncomplete)
    with pytest.raises(HeaderIncomplete) as partial:
        read_header_from_bytes(b"", "w.gguf")
    assert partial.value.needed >= 4
    with pytest.raises(HeaderIncomplete, match="retry with 100 bytes"):
        read_header_from_bytes(b"GG", "w.gguf", file_size=100)


# -- not GGUF at all ----------------------------------------------------------------------------


def test_not_gguf_inputs_are_clear_errors(tmp_path: Path) -> None:
    zpath = tmp_path / "model.gguf"
    with zipfile.ZipFile(zpath, "w") as z:
        z.writestr("data.pkl", b"x" * 100)
    with pytest.raises(GGUFError) as info:
        read_header(zpath)
    assert str(info.value).startswith("model.gguf: not a GGUF file (it starts with 50 4B 03 04, PK..; looks like a ZIP")
    assert info.value.source == "model.gguf"

    with pytest.raises(GGUFError, match=r"^empty\.gguf: empty file \(0 bytes\), not a GGUF file$"):
        read_header(_write(tmp_path / "empty.gguf", b""))
    with pytest.raises(GGUFError, match=r"^short\.gguf: file is only 2 bytes, too short"):
        read_header(_write(tmp_path / "short.gguf", b"GG"))
    with pytest.raises(GGUFError, match=r"not a GGUF file \(it starts with 3C 21 44 4F, <!DO; looks like an HTML page"):
        read_header(_write(tmp_path / "page.gguf", b"<!DOCTYPE html><html></html>"))
    with pytest.raises(GGUFError, match=r"legacy GGJT"):
        read_header(_write(tmp_path / "old.bin", b"tjgg" + b"\0" * 100))
    noise = random.Random(1234).randbytes(4096)
    with pytest.raises(GGUFError, match=r"^noise\.gguf: not a GGUF file \(it starts with [0-9A-F ]+, "):
        read_header(_write(tmp_path / "noise.gguf", noise))
    with pytest.raises(GGUFError, match=r"^http://x/y: not a GGUF file"):
        read_header_from_bytes(noise, "http://x/y")


def test_unreadable_paths_are_gguf_errors(tmp_path: Path) -> None:
    with pytest.raises(GGUFError, match=r"^missing\.gguf: cannot open"):
        read_header(tmp_path / "missing.gguf")
    with pytest.raises(GGUFError):
        read_header(tmp_path)


def test_version_1_is_rejected(tmp_path: Path) -> None:
    data = b"GGUF" + struct.pack("<III", 1, 0, 0)
    with pytest.raises(GGUFError, match=r"^v1\.gguf: GGUF version 1 is not supported"):
        read_header(_write(tmp_path / "v1.gguf", data))
    with pytest.raises(GGUFError, match=r"unsupported GGUF version 7"):
        read_header(_write(tmp_path / "v7.gguf", _raw(version=7)))
    assert read_header(_write(tmp_path / "v2.gguf", _raw(version=2))).version == 2


def test_big_endian_file_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "be.gguf"
    writer = gguf.GGUFWriter(path, "llama", endianess=gguf.GGUFEndian.BIG)
    writer.add_uint32("llama.block_count", 2)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.close()
    with pytest.raises(GGUFError, match=r"^be\.gguf: big-endian GGUF file \(version 3\); only little-endian"):
        read_header(path)


# -- hostile counts -----------------------------------------------------------------------------

_HOSTILE: dict[str, tuple[bytes, str]] = {
    "tensor_count": (
        _raw(n_tensors=4_000_000_000),
        "header claims 4000000000 tensors, more than the 65536 allowed",
    ),
    "tensor_count_2_40": (_raw(n_tensors=1 << 40), "header claims 1099511627776 tensors"),
    "kv_count": (_raw(n_kv=1 << 40), "header claims 1099511627776 metadata keys, more than the 100000"),
    "counts_beyond_file": (_raw(n_kv=90_000, n_tensors=60_000), "file ends inside the header"),
    "array_len": (
        _raw([_kv("k", 9, struct.pack("<IQ", 0, 1 << 50))]),
        "array claims 1125899906842624 items, more than the 50000000 allowed",
    ),
    "array_beyond_file": (
        _raw([_kv("k", 9, struct.pack("<IQ", 10, 20_000_000))]),
        "file ends inside the header",
    ),
    "array_beyond_header_limit": (
        _raw([_kv("k", 9, struct.pack("<IQ", 10, 40_000_000))]),
        "header is larger than the 256 MiB allowed",
    ),
    "string_array_beyond_file": (
        _raw([_kv("k", 9, struct.pack("<IQ", 8, 10_000_000))]),
        "file ends inside the header",
    ),
    "value_string_len": (
        _raw([_kv("k", 8, struct.pack("<Q", 1 << 62))]),
        "string at byte 37 claims 4611686018427387904 bytes, more than the 16 MiB allowed",
    ),
    "key_string_len": (b"GGUF" + struct.pack("<IQQQ", 3, 0, 1, 1 << 62), "claims 4611686018427387904 bytes"),
    "string_beyond_file": (_raw([_kv("k", 8, struct.pack("<Q", 10_000_000))]), "file ends inside the header"),
    "n_dims": (
        _raw(tensors=[_str("w") + struct.pack("<I", 1000)]),
        "tensor 'w' claims 1000 dimensions, more than the 8 allowed",
    ),
    "nested_skip_len": (
        # 5000 inner arrays (too many to keep) whose first claims 2^50 items; the zeros make the
        # outer count plausible so the skip path is what meets the bad inner count.
        _raw([_kv("k", 9, struct.pack("<IQ", 9, 5000) + struct.pack("<IQ", 0, 1 << 50) + bytes(60000))]),
        "array claims 1125899906842624 items",
    ),
}


@pytest.mark.parametrize("case", sorted(_HOSTILE))
def test_hostile_counts_fail_fast_without_allocating(tmp_path: Path, case: str) -> None:
    data, message = _HOSTILE[case]
    path = _write(tmp_path / "x.gguf", data + b"\0" * 1000)
    err = _bounded(lambda: read_header(path))
    assert str(err).startswith("x.gguf: ") and message in str(err), str(err)
    # From memory, knowing the file size: the same verdict.
    err = _bounded(lambda: read_header_from_bytes(path.read_bytes(), "x.gguf", file_size=len(data) + 1000))
    assert message in str(err), str(err)
    # From a prefix of unknown length, claims that could still be true ask for more bytes
    # (bounded by the header limit); the others fail outright.
    err = _bounded(lambda: read_header_from_bytes(data, "x.gguf"))
    if isinstance(err, HeaderIncomplete):
        assert len(data) < err.needed <= Limits().max_header_bytes


def test_bytes_longer_than_the_header_limit_are_not_read_past_it(tmp_path: Path) -> None:
    data = write_llama_like(tmp_path / "l.gguf", n_vocab=5000, sparse=False).read_bytes()
    with pytest.raises(GGUFError, match=r"header is larger than the 64 KiB allowed") as info:
        read_header_from_bytes(data, "u", file_size=len(data), limits=Limits(max_header_bytes=64 << 10))
    assert not isinstance(info.value, HeaderIncomplete)


def test_errors_survive_pickling() -> None:
    import pickle

    err = HeaderIncomplete("u: header continues", needed=200, have=100, source="u")
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is HeaderIncomplete and str(back) == "u: header continues"
    assert (back.needed, back.have, back.source) == (200, 100, "u")
    plain = pickle.loads(pickle.dumps(GGUFError("x: bad", source="x")))
    assert type(plain) is GGUFError and str(plain) == "x: bad" and plain.source == "x"


def test_header_size_limit(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "big.gguf", n_vocab=5000)
    small = Limits(max_header_bytes=64 << 10)
    assert read_header(path).header_size > 64 << 10
    with pytest.raises(GGUFError, match=r"header is larger than the 64 KiB allowed"):
        read_header(path, limits=small)
    data = path.read_bytes()
    # A short prefix cannot tell yet, and the retry it asks for is capped at the limit...
    with pytest.raises(HeaderIncomplete) as more:
        read_header_from_bytes(data[: 32 << 10], "u", limits=small)
    assert more.value.needed == 64 << 10
    # ...where the verdict is final rather than another request for more.
    with pytest.raises(GGUFError, match=r"header is larger than the 64 KiB allowed") as info:
        read_header_from_bytes(data[: more.value.needed], "u", limits=small)
    assert not isinstance(info.value, HeaderIncomplete)


# -- split models -------------------------------------------------------------------------------


def test_split_model_of_three_parts(tmp_path: Path) -> None:
    kw: dict[str, Any] = dict(n_layer=2, n_vocab=300, chat_template="t")
    single = read_header(write_llama_like(tmp_path / "single.gguf", **kw))
    first = write_llama_like(tmp_path / "Model.gguf", n_parts=3, **kw)
    assert first.name == "Model-00001-of-00003.gguf"
    parts = split_parts(tmp_path / "Model-00002-of-00003.gguf")
    assert [p.name for p in parts] == [f"Model-0000{i}-of-00003.gguf" for i in (1, 2, 3)]

    h = read_model(parts[1])
    assert h.source == str(parts[0])
    assert len(h.parts) == 3
    assert h.file_size == sum(p.stat().st_size for p in parts)
    assert [t.name for t in h.tensors] == [t.name for t in single.tensors]
    assert [(t.shape, t.ggml_type) for t in h.tensors] == [(t.shape, t.ggml_type) for t in single.tensors]
    assert sorted({t.part for t in h.tensors}) == [0, 1, 2]
    assert h.tensor_bytes == single.tensor_bytes and h.n_params == single.n_params
    assert h.quant_name == "Q4_K_M" and h.n_layer == 2 and h.has_chat_template
    assert h.split_count == 3
    assert not h.is_truncated
    assert h.expected_file_size == sum(p.expected_file_size for p in h.parts)
    for i, part in enumerate(h.parts):
        assert part.metadata["split.no"] == i
        assert [t.name for t in part.tensors] == [t.name for t in h.tensors if t.part == i]

    os.truncate(parts[2], h.parts[2].data_offset)  # last part's weights missing
    assert read_model(parts[0]).is_truncated


def test_split_model_missing_part_is_named(tmp_path: Path) -> None:
    paths = write_split_gguf(
        tmp_path / "m.gguf", 3, tensors=[(f"t{i}", (32,), "F32") for i in range(3)], metadata={"a": 1}
    )
    paths[1].unlink()
    for p in (paths[0], paths[2]):
        with pytest.raises(GGUFError, match=r"split model part is missing: m-00002-of-00003\.gguf"):
            read_model(p)
        with pytest.raises(GGUFError, match=r"m-00002-of-00003\.gguf"):
            split_parts(p)


def test_split_name_edge_cases(tmp_path: Path) -> None:
    plain = write_llama_like(tmp_path / "plain.gguf")
    assert split_parts(plain) == [plain]
    assert read_model(plain).tensors == read_header(plain).tensors
    with pytest.raises(GGUFError, match="not a valid split name"):
        split_parts(tmp_path / "x-00004-of-00003.gguf")


def test_split_names_are_parsed_in_one_place() -> None:
    split = parse_split_name("Qwen3.5-27B-Q4_K_M-00002-of-00003.GGUF")
    assert split == SplitName("Qwen3.5-27B-Q4_K_M", 2, 3, ".GGUF")
    assert split.part_name(1) == "Qwen3.5-27B-Q4_K_M-00001-of-00003.GGUF"
    for name in ("model.gguf", "m-0001-of-0003.gguf", "m-00001-of-00003.gguf.part", "-00001-of-00003.gguf"):
        assert parse_split_name(name) is None, name


def test_split_part_out_of_order_is_detected(tmp_path: Path) -> None:
    paths = write_split_gguf(tmp_path / "m.gguf", 2, tensors=[("a", (32,), "F32"), ("b", (32,), "F32")])
    a, b = paths[0].read_bytes(), paths[1].read_bytes()
    paths[0].write_bytes(b)
    paths[1].write_bytes(a)
    with pytest.raises(GGUFError, match=r"is split part 2, expected part 1"):
        read_model(paths[0])


# -- quantisation name --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("file_type", "expected"),
    [
        (gguf.LlamaFileType.MOSTLY_Q4_K_M, "Q4_K_M"),
        (gguf.LlamaFileType.MOSTLY_Q3_K_S, "Q3_K_S"),
        (gguf.LlamaFileType.MOSTLY_IQ3_XXS, "IQ3_XXS"),
        (gguf.LlamaFileType.MOSTLY_Q4_1, "Q4_1"),
        (gguf.LlamaFileType.MOSTLY_Q4_0, "Q4_0"),
        (gguf.LlamaFileType.MOSTLY_F16, "F16"),
        (gguf.LlamaFileType.MOSTLY_BF16, "BF16"),
        (gguf.LlamaFileType.ALL_F32, "F32"),
        (gguf.LlamaFileType.MOSTLY_MXFP4_MOE, "MXFP4_MOE"),
    ],
)
def test_quant_name_from_file_type(tmp_path: Path, file_type: int, expected: str) -> None:
    h = read_header(write_llama_like(tmp_path / "q.gguf", file_type=int(file_type)))
    assert h.quant_name == expected


def test_quant_name_guessed_from_block_weights(tmp_path: Path) -> None:
    # Embedding and output in Q6_K outweigh the blocks of this small model, but the blocks carry
    # the quantisation the user chose.
    path = write_llama_like(
        tmp_path / "g.gguf",
        n_vocab=8192,
        quant="Q4_K",
        output_quant="Q6_K",
        embd_quant="Q6_K",
        file_type=None,
    )
    h = read_header(path)
    assert h.file_type is None
    assert h.type_mix["Q6_K"] > h.type_mix["Q4_K"]
    assert h.quant_name == "Q4_K (guessed)"
    unknown = read_header(write_llama_like(tmp_path / "u.gguf", quant="Q5_0", file_type=999))
    assert unknown.quant_name == "Q5_0 (guessed)"
    flat = read_header(write_gguf(tmp_path / "flat.gguf", tensors=[("w", (64, 64), "Q8_0"), ("n", (64,), "F32")]))
    assert flat.quant_name == "Q8_0 (guessed)"
    empty = read_header(write_gguf(tmp_path / "e.gguf", tensors=[]))
    assert empty.quant_name == "unknown"
    assert empty.expected_file_size == empty.header_size and not empty.is_truncated


def test_header_is_a_plain_dataclass_with_parts_default() -> None:
    h = GGUFHeader("s", 3, {}, [], 32, 32, 24, None)
    assert h.parts == [] and not h.is_truncated and h.bits_per_weight == 0.0
    assert h.architecture is None and h.n_layer is None and h.arch_value("x", 5) == 5


# -- memory on a realistic vocabulary (bench/header_speed.py times it) --------------------------


@pytest.fixture(scope="module")
def big_vocab_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 262144 tokens (Gemma-3's vocabulary) with 62 layers: a ~6.7 MB header, like a 27B model.
    path = tmp_path_factory.mktemp("big") / "big.gguf"
    return write_llama_like(path, n_vocab=262144, n_layer=62, n_embd=512, n_ff=1024)


def test_large_vocabulary_is_skipped(big_vocab_model: Path) -> None:
    tracemalloc.start()
    h = read_header(big_vocab_model)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert h.metadata["tokenizer.ggml.tokens"] == ArraySummary(ValueType.STRING, 262144)
    assert h.metadata["tokenizer.ggml.scores"] == ArraySummary(ValueType.FLOAT32, 262144)
    assert h.header_size > 6_000_000 and len(h.tensors) == 2 + 62 * 9 + 1
    assert peak < 8 << 20, peak  # a read chunk and the tensor list, not the vocabulary


# -- fuzzing ------------------------------------------------------------------------------------


def _fuzz_seed() -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        md = dict(_EVERY_TYPE)
        md["tokenizer.ggml.tokens"] = typed([f"tok{i}" for i in range(40)], "array", "string")
        path = write_llama_like(Path(d) / "seed.gguf", n_layer=1, n_vocab=260, extra_metadata=md)
        h = read_header(path)
        return path.read_bytes()[: h.data_offset]


_SEED = _fuzz_seed()
_FUZZ_LIMITS = Limits(max_array_keep=16)
_INTERESTING_U64 = [0, 1, 7, 8, 9, 255, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1]


@st.composite
def _mutations(draw: st.DrawFn) -> tuple[bytes, int | None]:
    data = bytearray(_SEED)
    for _ in range(draw(st.integers(0, 6))):
        pos = draw(st.integers(0, len(data) - 1))
        kind = draw(st.sampled_from(["byte", "u64", "u32", "delete", "insert"]))
        if kind == "byte":
            data[pos] = draw(st.integers(0, 255))
        elif kind == "u64":
            data[pos : pos + 8] = struct.pack("<Q", draw(st.sampled_from(_INTERESTING_U64)))
        elif kind == "u32":
            data[pos : pos + 4] = struct.pack("<I", draw(st.integers(0, 2**32 - 1)))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 64))]
        else:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=32))
    cut = draw(st.integers(0, len(data)))
    data = data[:cut] if draw(st.booleans()) else data
    file_size = draw(st.sampled_from([None, len(data), len(data) + 4096]))
    return bytes(data), file_size


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutations())
def test_fuzzed_headers_parse_or_raise_gguf_error(case: tuple[bytes, int | None]) -> None:
    data, file_size = case
    try:
        h = read_header_from_bytes(data, "fuzz", file_size=file_size, limits=_FUZZ_LIMITS)
    except HeaderIncomplete as e:
        assert len(data) < e.needed
        if file_size is not None:
            assert e.needed <= file_size
    except GGUFError as e:
        assert str(e).startswith("fuzz: ")
    else:
        assert h.header_size <= len(data)
        # Everything derived from a header that parsed must be computable.
        assert h.tensor_bytes >= 0 and h.n_params >= 0
        assert isinstance(h.quant_name, str) and h.expected_file_size >= h.header_size
        _ = (h.type_mix, h.is_truncated, h.n_layer, h.context_length, h.bits_per_weight)


def _iter_cuts(data: bytes) -> Iterator[int]:
    yield from range(0, min(len(data), 400))
    yield from range(400, len(data), 53)


def test_every_prefix_of_a_real_header_asks_for_more(tmp_path: Path) -> None:
    data = _SEED
    full = read_header_from_bytes(data, "seed", limits=_FUZZ_LIMITS)
    for cut in _iter_cuts(data[: full.header_size]):
        with pytest.raises(HeaderIncomplete) as info:
            read_header_from_bytes(data[:cut], "seed", file_size=len(data), limits=_FUZZ_LIMITS)
        assert cut < info.value.needed <= len(data)


def test_factory_gpt2_vocabulary_is_consistent(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "bpe.gguf", tokenizer="gpt2", n_vocab=1000, tie_embeddings=True)
    h = read_header(path, limits=Limits(max_array_keep=100_000))
    tokens, merges = h.metadata["tokenizer.ggml.tokens"], h.metadata["tokenizer.ggml.merges"]
    assert len(tokens) == 1000 and tokens[-1] == "<|endoftext|>"
    assert len(set(tokens)) == len(tokens)
    vocab = set(tokens)
    assert all(a in vocab and b in vocab and a + b in vocab for a, b in (m.split(" ") for m in merges))
    assert h.metadata["tokenizer.ggml.eos_token_id"] == 999
    assert h.tensor("output.weight") is None and h.tensor("token_embd.weight") is not None
