"""GGUF headers with hyper-parameters no model has, for the reader's and planner's tests and the bench.

Importable as ``tests.hostile_headers`` and as ``hostile_headers``.

Each case is a small llama-shaped model (two blocks) whose metadata is overridden with one hostile
value, written with gguf-py like any test file. ``key`` is the metadata key the error must name.
``EXTREMES`` are real model shapes pushed to the edge of what llama.cpp loads (512 blocks, 512
experts, the longest context): they must be accepted and planned quickly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

try:
    from tests.gguf_factory import typed, write_llama_like
    from tests.model_shapes import SHAPES, ModelShape
except ImportError:  # run from inside tests/
    from gguf_factory import typed, write_llama_like  # type: ignore[no-redef]
    from model_shapes import SHAPES, ModelShape  # type: ignore[no-redef]

__all__ = ["EXTREMES", "HOSTILE_HEADERS", "HostileHeader", "write_hostile"]


@dataclass(frozen=True)
class HostileHeader:
    name: str
    key: str  # the key the error names, without the "llama." prefix
    value: Any  # a plain value, or typed(...) to force its GGUF type
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys the hostile one needs beside it


def _u32(v: int) -> Any:
    return typed(v, "uint32")


def _i32(v: int) -> Any:
    return typed(v, "int32")


def _u64(v: int) -> Any:
    return typed(v, "uint64")


_SWA = {"llama.attention.sliding_window": _u32(4096)}
_SSM = {"llama.ssm.state_size": _u32(16), "llama.ssm.inner_size": _u32(64), "llama.ssm.conv_kernel": _u32(4)}

HOSTILE_HEADERS: tuple[HostileHeader, ...] = (
    HostileHeader("a million blocks", "block_count", _u32(1_000_000)),
    HostileHeader("2**32-1 blocks", "block_count", _u32(2**32 - 1)),
    HostileHeader("-5 blocks", "block_count", _i32(-5)),
    HostileHeader("513 blocks", "block_count", _u32(513)),
    HostileHeader("2**64-1 blocks", "block_count", _u64(2**64 - 1)),
    HostileHeader("blocks as text", "block_count", "many"),
    HostileHeader("blocks as a float", "block_count", typed(2.5, "float32")),
    HostileHeader("-1 heads", "attention.head_count", _i32(-1)),
    HostileHeader("2**32-1 heads", "attention.head_count", _u32(2**32 - 1)),
    HostileHeader("head counts of text", "attention.head_count", ["a", "b"]),
    HostileHeader("KV heads for 3 of 2 blocks", "attention.head_count_kv", typed([2, 2, 2], "array", "int32")),
    HostileHeader("KV heads for 1 of 2 blocks", "attention.head_count_kv", typed([2], "array", "int32")),
    HostileHeader("negative KV heads", "attention.head_count_kv", typed([2, -1], "array", "int32")),
    HostileHeader("-1 feed-forward", "feed_forward_length", _i32(-1)),
    HostileHeader("feed-forward for 5 of 2 blocks", "feed_forward_length", typed([512] * 5, "array", "int32")),
    HostileHeader("2**40 feed-forward", "feed_forward_length", _u64(2**40)),
    HostileHeader("-4096 embedding", "embedding_length", _i32(-4096)),
    HostileHeader("2**40 embedding", "embedding_length", _u64(2**40)),
    HostileHeader("-1 context", "context_length", _i32(-1)),
    HostileHeader("2**40 context", "context_length", _u64(2**40)),
    HostileHeader("100,000 experts", "expert_count", _u32(100_000), {"llama.expert_used_count": _u32(2)}),
    HostileHeader("-8 experts", "expert_count", _i32(-8)),
    HostileHeader("9 of 8 experts used", "expert_used_count", _u32(9), {"llama.expert_count": _u32(8)}),
    HostileHeader("-1 expert feed-forward", "expert_feed_forward_length", _i32(-1)),
    HostileHeader("-1 sliding window", "attention.sliding_window", _i32(-1)),
    HostileHeader("2**40 sliding window", "attention.sliding_window", _u64(2**40)),
    HostileHeader("-3 sliding-window period", "attention.sliding_window_pattern", _i32(-3), _SWA),
    HostileHeader(
        "sliding-window flags for 4 of 2 blocks",
        "attention.sliding_window_pattern",
        typed([True, False, True, False], "array", "bool"),
        _SWA,
    ),
    HostileHeader("-1 key length", "attention.key_length", _i32(-1)),
    HostileHeader("2**40 value length", "attention.value_length", _u64(2**40)),
    HostileHeader("-1 SSM inner size", "ssm.inner_size", _i32(-1), _SSM),
    HostileHeader("2**40 SSM state size", "ssm.state_size", _u64(2**40), _SSM),
    HostileHeader("2**32-1 SSM conv kernel", "ssm.conv_kernel", _u32(2**32 - 1), _SSM),
    HostileHeader("-2 SSM groups", "ssm.group_count", _i32(-2), _SSM),
    HostileHeader("-3 MTP blocks", "nextn_predict_layers", _i32(-3)),
    HostileHeader("10 MTP blocks of 2", "nextn_predict_layers", _u32(10)),
    HostileHeader("-2 full-attention interval", "full_attention_interval", _i32(-2), _SSM),
)


def write_hostile(path: str | os.PathLike[str], case: HostileHeader) -> Path:
    """A two-block llama-shaped model with ``case``'s key set to its value."""
    return write_llama_like(path, extra_metadata={**case.extra, f"llama.{case.key}": case.value})


EXTREMES: dict[str, ModelShape] = {
    "512 dense blocks": replace(SHAPES["llama-1b"], n_layer=512, ctx=1 << 30),
    "512 blocks of 512 experts": replace(SHAPES["qwen3moe-30b"], n_layer=512, n_expert=512, n_ff_exp=256),
    "512 hybrid blocks": replace(SHAPES["qwen35-2b"], n_layer=512),
    "512 sliding-window blocks": replace(SHAPES["gemma3-4b"], n_layer=512),
}
