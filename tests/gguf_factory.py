"""Write real GGUF files for tests, with gguf-py's own GGUFWriter.

Importable as ``tests.gguf_factory`` and as ``gguf_factory`` (no relative imports).

Shapes here are in GGUF order, row length first (``ne[0], ne[1], ...``), the order llama.cpp
prints and ``TensorInfo.shape`` reports; GGUFWriter takes numpy order, so they are reversed on
the way in.

:func:`copy_gguf` rewrites a real model with some metadata keys left out (a model without its chat
template, say), every other key and every tensor copied as they are.

By default files are *sparse*: header and tensor infos are written, then the file is extended to
its full size with ``truncate`` and no weight bytes are written. Such a file has the size and
layout of a real model at a cost of a few kilobytes of disk, which is what a header reader and
a memory planner need.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from gguf import (
    GGML_QUANT_SIZES,
    GGMLQuantizationType,
    GGUFReader,
    GGUFValueType,
    GGUFWriter,
    LlamaFileType,
)

__all__ = [
    "FTYPE_FOR_QUANT",
    "TensorSpec",
    "Typed",
    "copy_gguf",
    "gguf_nbytes",
    "llama_like_metadata",
    "llama_like_tensors",
    "typed",
    "write_gguf",
    "write_llama_like",
    "write_split_gguf",
]

# (name, shape in GGUF order, ggml type name such as "Q4_K")
TensorSpec = tuple[str, Sequence[int], str]


@dataclass(frozen=True)
class Typed:
    """A metadata value with an explicit GGUF type, for when inference would pick another."""

    value: Any
    vtype: GGUFValueType
    sub_type: GGUFValueType | None = None


def typed(value: Any, vtype: GGUFValueType | str, sub_type: GGUFValueType | str | None = None) -> Typed:
    """``typed(7, "uint64")``, ``typed([1, 2], "array", "int16")``."""

    def conv(t: GGUFValueType | str) -> GGUFValueType:
        return t if isinstance(t, GGUFValueType) else GGUFValueType[t.upper()]

    return Typed(value, conv(vtype), None if sub_type is None else conv(sub_type))


# general.file_type a quantiser would record for a model whose matrices are mostly this type.
FTYPE_FOR_QUANT: Mapping[str, LlamaFileType] = {
    "F32": LlamaFileType.ALL_F32,
    "F16": LlamaFileType.MOSTLY_F16,
    "BF16": LlamaFileType.MOSTLY_BF16,
    "Q4_0": LlamaFileType.MOSTLY_Q4_0,
    "Q4_1": LlamaFileType.MOSTLY_Q4_1,
    "Q5_0": LlamaFileType.MOSTLY_Q5_0,
    "Q5_1": LlamaFileType.MOSTLY_Q5_1,
    "Q8_0": LlamaFileType.MOSTLY_Q8_0,
    "Q2_K": LlamaFileType.MOSTLY_Q2_K,
    "Q3_K": LlamaFileType.MOSTLY_Q3_K_M,
    "Q4_K": LlamaFileType.MOSTLY_Q4_K_M,
    "Q5_K": LlamaFileType.MOSTLY_Q5_K_M,
    "Q6_K": LlamaFileType.MOSTLY_Q6_K,
    "IQ2_XXS": LlamaFileType.MOSTLY_IQ2_XXS,
    "IQ2_XS": LlamaFileType.MOSTLY_IQ2_XS,
    "IQ2_S": LlamaFileType.MOSTLY_IQ2_S,
    "IQ3_XXS": LlamaFileType.MOSTLY_IQ3_XXS,
    "IQ3_S": LlamaFileType.MOSTLY_IQ3_S,
    "IQ1_S": LlamaFileType.MOSTLY_IQ1_S,
    "IQ1_M": LlamaFileType.MOSTLY_IQ1_M,
    "IQ4_NL": LlamaFileType.MOSTLY_IQ4_NL,
    "IQ4_XS": LlamaFileType.MOSTLY_IQ4_XS,
    "TQ1_0": LlamaFileType.MOSTLY_TQ1_0,
    "TQ2_0": LlamaFileType.MOSTLY_TQ2_0,
    "MXFP4": LlamaFileType.MOSTLY_MXFP4_MOE,
}

_DEFAULT_TENSORS: tuple[TensorSpec, ...] = (("weight", (32, 4), "F32"),)


def gguf_nbytes(shape: Sequence[int], type_name: str) -> int:
    """Bytes of a tensor according to gguf-py's table (independent of the code under test)."""
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[type_name]]
    count = math.prod(shape)
    if (shape[0] if shape else 1) % block:
        raise ValueError(f"row length {shape[0]} is not a multiple of {type_name}'s block size {block}")
    return count // block * size


def _infer(value: Any) -> Typed:
    if isinstance(value, Typed):
        return value
    if isinstance(value, bool):
        return Typed(value, GGUFValueType.BOOL)
    if isinstance(value, int):
        if 0 <= value < 1 << 32:
            return Typed(value, GGUFValueType.UINT32)
        if -(1 << 31) <= value < 0:
            return Typed(value, GGUFValueType.INT32)
        return Typed(value, GGUFValueType.UINT64 if value > 0 else GGUFValueType.INT64)
    if isinstance(value, float):
        return Typed(value, GGUFValueType.FLOAT32)
    if isinstance(value, str):
        return Typed(value, GGUFValueType.STRING)
    if isinstance(value, (list, tuple)):
        items = list(value)
        if not items:
            raise ValueError("GGUFWriter cannot write an empty array")
        first = items[0]
        if isinstance(first, bool):
            sub = GGUFValueType.BOOL
        elif isinstance(first, int):
            fits32 = all(-(1 << 31) <= v < 1 << 31 for v in items)
            sub = GGUFValueType.INT32 if fits32 else GGUFValueType.INT64
        elif isinstance(first, float):
            sub = GGUFValueType.FLOAT32
        elif isinstance(first, str):
            sub = GGUFValueType.STRING
        elif isinstance(first, (list, tuple)):
            sub = GGUFValueType.ARRAY
            items = [list(v) for v in items]
        else:
            raise TypeError(f"cannot infer a GGUF type for array items of {type(first).__name__}")
        return Typed(items, GGUFValueType.ARRAY, sub)
    raise TypeError(f"cannot infer a GGUF type for {type(value).__name__}; wrap it in typed()")


def _build_writer(
    path: Path,
    arch: str,
    metadata: Mapping[str, Any] | None,
    tensors: Iterable[TensorSpec],
    file_type: int | None,
    alignment: int | None,
    split_max_tensors: int = 0,
) -> GGUFWriter:
    writer = GGUFWriter(path, arch, split_max_tensors=split_max_tensors)
    if alignment is not None:
        writer.add_custom_alignment(alignment)
    if file_type is not None:
        writer.add_file_type(int(file_type))
    for key, value in (metadata or {}).items():
        t = _infer(value)
        writer.add_key_value(key, t.value, t.vtype, t.sub_type)
    f32 = np.dtype(np.float32)
    for name, shape, type_name in tensors:
        qtype = GGMLQuantizationType[type_name]
        # A non-uint8 dtype with raw_dtype makes GGUFWriter take the shape as elements, not bytes.
        writer.add_tensor_info(
            name,
            tuple(int(d) for d in reversed(tuple(shape))),
            f32,
            gguf_nbytes(shape, type_name),
            raw_dtype=qtype,
        )
    return writer


def _finish(writer: GGUFWriter, sparse: bool) -> list[Path]:
    assert writer.path is not None
    names = writer.format_shard_names(writer.path)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    assert writer.fout is not None
    align = writer.data_alignment
    for fout, tensors in zip(writer.fout, writer.tensors, strict=True):
        header_end = fout.tell()
        data_offset = GGUFWriter.ggml_pad(header_end, align)
        # GGUFWriter pads after every tensor, the last one included; mirror that size exactly.
        data_size = sum(GGUFWriter.ggml_pad(ti.nbytes, align) for ti in tensors.values())
        if sparse:
            fout.flush()
            fout.truncate(data_offset + data_size)
        else:
            fout.write(bytes(data_offset - header_end))
            remaining = data_size
            zeros = bytes(min(remaining, 1 << 20))
            while remaining:
                n = min(remaining, len(zeros))
                fout.write(zeros[:n])
                remaining -= n
    writer.close()
    return names


def write_gguf(
    path: str | os.PathLike[str],
    arch: str = "llama",
    metadata: Mapping[str, Any] | None = None,
    tensors: Iterable[TensorSpec] | None = None,
    sparse: bool = True,
    file_type: int | None = None,
    *,
    alignment: int | None = None,
) -> Path:
    """Write one GGUF file. Metadata values are typed by inference or with :func:`typed`."""
    writer = _build_writer(
        Path(path), arch, metadata, _DEFAULT_TENSORS if tensors is None else tensors, file_type, alignment
    )
    return _finish(writer, sparse)[0]


def write_split_gguf(
    path: str | os.PathLike[str],
    n_parts: int,
    arch: str = "llama",
    metadata: Mapping[str, Any] | None = None,
    tensors: Iterable[TensorSpec] | None = None,
    sparse: bool = True,
    file_type: int | None = None,
    *,
    alignment: int | None = None,
) -> list[Path]:
    """Write a model split into ``n_parts`` files named ``<stem>-0000i-of-0000n.gguf``.

    Tensors are spread evenly; GGUFWriter adds the ``split.*`` keys to every part and the other
    metadata to part 1 only, as llama.cpp's gguf-split does.
    """
    specs = list(_DEFAULT_TENSORS if tensors is None else tensors)
    per_part = math.ceil(len(specs) / n_parts)
    if n_parts < 2 or math.ceil(len(specs) / per_part) != n_parts:
        raise ValueError(f"cannot spread {len(specs)} tensors evenly over {n_parts} parts")
    writer = _build_writer(Path(path), arch, metadata, specs, file_type, alignment, per_part)
    return _finish(writer, sparse)


def copy_gguf(source: str | os.PathLike[str], path: str | os.PathLike[str], *, drop: Iterable[str] = ()) -> Path:
    """Write ``path`` as a copy of the GGUF file ``source`` without the metadata keys in ``drop``: every other
    key with its own type, and every tensor with its type, shape and bytes, in the same order."""
    reader = GGUFReader(source)
    writer = GGUFWriter(path, reader.fields["general.architecture"].contents())
    # The writer writes the architecture itself, and the alignment once it is told the value.
    own = {"general.architecture", "general.alignment"}
    if "general.alignment" in reader.fields:
        writer.add_custom_alignment(reader.alignment)
    dropped = set(drop)
    for name, field in reader.fields.items():
        if name.startswith("GGUF.") or name in own or name in dropped:  # "GGUF.*": the reader's header fields
            continue
        vtype = field.types[0]
        if vtype == GGUFValueType.ARRAY and len(field.types) > 2:
            raise NotImplementedError(f"{name}: arrays of arrays are not copied")
        writer.add_key_value(name, field.contents(), vtype, field.types[-1] if vtype == GGUFValueType.ARRAY else None)
    for tensor in reader.tensors:
        data = tensor.data  # quantized data comes as bytes per row: the writer turns that back into elements
        writer.add_tensor_info(tensor.name, data.shape, data.dtype, data.nbytes, tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        writer.write_tensor_data(tensor.data)
    writer.close()
    return Path(path)


# -- llama-shaped models ------------------------------------------------------------------------


def llama_like_tensors(
    *,
    n_layer: int,
    n_embd: int,
    n_head: int,
    n_head_kv: int,
    n_ff: int,
    n_vocab: int,
    quant: str,
    output_quant: str | None = None,
    embd_quant: str | None = None,
    norm_type: str = "F32",
    tie_embeddings: bool = False,
) -> list[TensorSpec]:
    """Tensor list of a llama-architecture decoder, named as llama.cpp names them."""
    head_dim = n_embd // n_head
    n_embd_kv = head_dim * n_head_kv
    out: list[TensorSpec] = [("token_embd.weight", (n_embd, n_vocab), embd_quant or quant)]
    for i in range(n_layer):
        b = f"blk.{i}"
        out += [
            (f"{b}.attn_norm.weight", (n_embd,), norm_type),
            (f"{b}.attn_q.weight", (n_embd, n_embd), quant),
            (f"{b}.attn_k.weight", (n_embd, n_embd_kv), quant),
            (f"{b}.attn_v.weight", (n_embd, n_embd_kv), quant),
            (f"{b}.attn_output.weight", (n_embd, n_embd), quant),
            (f"{b}.ffn_norm.weight", (n_embd,), norm_type),
            (f"{b}.ffn_gate.weight", (n_embd, n_ff), quant),
            (f"{b}.ffn_up.weight", (n_embd, n_ff), quant),
            (f"{b}.ffn_down.weight", (n_ff, n_embd), quant),
        ]
    out.append(("output_norm.weight", (n_embd,), norm_type))
    if not tie_embeddings:
        out.append(("output.weight", (n_embd, n_vocab), output_quant or quant))
    return out


def _bytes_to_unicode() -> list[str]:
    # GPT-2's byte-level alphabet: printable bytes map to themselves, the rest to U+0100 onwards.
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    extra = 0
    chars = []
    for b in range(256):
        if b in printable:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


def _gpt2_vocab(n_vocab: int) -> tuple[list[str], list[str], list[int]]:
    base = _bytes_to_unicode()
    if n_vocab < len(base) + 1:
        raise ValueError("a gpt2 vocabulary needs at least 257 entries")
    tokens = list(base)
    merges: list[str] = []
    seen = set(tokens)
    letters = "abcdefghijklmnopqrstuvwxyz"
    # Breadth-first "a"+"b" -> "ab", "ab"+"c" -> "abc", ...: every merge joins two existing tokens,
    # so the merge table is consistent with the vocabulary as BPE requires.
    queue: deque[str] = deque(letters)
    while len(tokens) < n_vocab - 1:
        left = queue.popleft()
        for letter in letters:
            if len(tokens) >= n_vocab - 1:
                break
            new = left + letter
            if new in seen:
                continue
            seen.add(new)
            tokens.append(new)
            merges.append(f"{left} {letter}")
            queue.append(new)
    tokens.append("<|endoftext|>")
    types = [1] * (len(tokens) - 1) + [3]  # normal..., control
    return tokens, merges, types


def _spm_vocab(n_vocab: int) -> tuple[list[str], list[float], list[int]]:
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256  # unknown, control, control, byte...
    tokens += [f"▁t{i}" for i in range(len(tokens), n_vocab)]
    types += [1] * (n_vocab - len(types))
    tokens, types = tokens[:n_vocab], types[:n_vocab]
    scores = [0.0 if t != 1 else -float(i) for i, t in enumerate(types)]
    return tokens, scores, types


def llama_like_metadata(
    *,
    arch: str = "llama",
    name: str = "Tiny Llama",
    n_layer: int,
    n_embd: int,
    n_head: int,
    n_head_kv: int,
    n_ff: int,
    n_vocab: int,
    ctx: int,
    tokenizer: Literal["llama", "gpt2"] = "llama",
    chat_template: str | None = None,
    rope_freq_base: float = 10000.0,
    rms_eps: float = 1e-5,
) -> dict[str, Any]:
    """Metadata keys llama.cpp reads for a llama-architecture model, with a small vocabulary."""
    u32 = GGUFValueType.UINT32
    md: dict[str, Any] = {
        "general.name": name,
        f"{arch}.block_count": typed(n_layer, u32),
        f"{arch}.context_length": typed(ctx, u32),
        f"{arch}.embedding_length": typed(n_embd, u32),
        f"{arch}.feed_forward_length": typed(n_ff, u32),
        f"{arch}.attention.head_count": typed(n_head, u32),
        f"{arch}.attention.head_count_kv": typed(n_head_kv, u32),
        f"{arch}.rope.dimension_count": typed(n_embd // n_head, u32),
        f"{arch}.rope.freq_base": typed(rope_freq_base, GGUFValueType.FLOAT32),
        f"{arch}.attention.layer_norm_rms_epsilon": typed(rms_eps, GGUFValueType.FLOAT32),
        "general.quantization_version": typed(2, u32),
        "tokenizer.ggml.model": tokenizer,
    }
    if tokenizer == "llama":
        tokens, scores, types = _spm_vocab(n_vocab)
        md["tokenizer.ggml.tokens"] = typed(tokens, "array", "string")
        md["tokenizer.ggml.scores"] = typed(scores, "array", "float32")
        md["tokenizer.ggml.token_type"] = typed(types, "array", "int32")
        md["tokenizer.ggml.unknown_token_id"] = typed(0, u32)
        md["tokenizer.ggml.bos_token_id"] = typed(1, u32)
        md["tokenizer.ggml.eos_token_id"] = typed(2, u32)
    else:
        tokens, merges, types = _gpt2_vocab(n_vocab)
        md["tokenizer.ggml.pre"] = "default"
        md["tokenizer.ggml.tokens"] = typed(tokens, "array", "string")
        md["tokenizer.ggml.token_type"] = typed(types, "array", "int32")
        if merges:
            md["tokenizer.ggml.merges"] = typed(merges, "array", "string")
        md["tokenizer.ggml.bos_token_id"] = typed(len(tokens) - 1, u32)
        md["tokenizer.ggml.eos_token_id"] = typed(len(tokens) - 1, u32)
    if chat_template is not None:
        md["tokenizer.chat_template"] = chat_template
    return md


def write_llama_like(
    path: str | os.PathLike[str],
    *,
    arch: str = "llama",
    name: str = "Tiny Llama",
    n_layer: int = 2,
    n_embd: int = 256,
    n_head: int = 4,
    n_head_kv: int = 2,
    n_ff: int = 512,
    n_vocab: int = 512,
    ctx: int = 2048,
    quant: str = "Q4_K",
    output_quant: str | None = None,
    embd_quant: str | None = None,
    norm_type: str = "F32",
    tie_embeddings: bool = False,
    file_type: int | Literal["auto"] | None = "auto",
    tokenizer: Literal["llama", "gpt2"] = "llama",
    chat_template: str | None = None,
    extra_metadata: Mapping[str, Any] | None = None,
    extra_tensors: Iterable[TensorSpec] = (),
    sparse: bool = True,
    alignment: int | None = None,
    n_parts: int = 1,
) -> Path:
    """A llama-shaped model (sparse by default). Returns the path of the file, or of part 1.

    ``file_type="auto"`` records the usual file type for ``quant`` (Q4_K -> Q4_K_M); ``None``
    leaves ``general.file_type`` out so readers have to guess. Row lengths (``n_embd``, ``n_ff``)
    must be multiples of the quant's block size (256 for k-quants).
    """
    tensors = llama_like_tensors(
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_head_kv=n_head_kv,
        n_ff=n_ff,
        n_vocab=n_vocab,
        quant=quant,
        output_quant=output_quant,
        embd_quant=embd_quant,
        norm_type=norm_type,
        tie_embeddings=tie_embeddings,
    ) + list(extra_tensors)
    metadata = llama_like_metadata(
        arch=arch,
        name=name,
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_head_kv=n_head_kv,
        n_ff=n_ff,
        n_vocab=n_vocab,
        ctx=ctx,
        tokenizer=tokenizer,
        chat_template=chat_template,
    )
    metadata.update(extra_metadata or {})
    ftype = FTYPE_FOR_QUANT[quant] if file_type == "auto" else file_type
    if n_parts > 1:
        return write_split_gguf(path, n_parts, arch, metadata, tensors, sparse, ftype, alignment=alignment)[0]
    return write_gguf(path, arch, metadata, tensors, sparse, ftype, alignment=alignment)
