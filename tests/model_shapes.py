"""Header-only GGUF files shaped like real model families, for the memory planner's tests.

Tensor names, shapes and metadata keys follow the installed llama.cpp's loader (``src/models/*.cpp``
and ``src/llama-arch.cpp``), so its dry run accepts these files as it would the real model. Files
are sparse (the weights are a hole), so a 27B shape costs a few MB of header on disk.

Importable as ``tests.model_shapes`` and as ``model_shapes``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gguf import GGUFValueType, LlamaFileType

try:
    from tests.gguf_factory import FTYPE_FOR_QUANT, TensorSpec, typed, write_gguf
except ImportError:  # run from inside tests/
    from gguf_factory import FTYPE_FOR_QUANT, TensorSpec, typed, write_gguf  # type: ignore[no-redef]

__all__ = ["SHAPES", "ModelShape", "shape_tensors", "write_shape"]

_U32 = GGUFValueType.UINT32
_F32 = GGUFValueType.FLOAT32


@dataclass(frozen=True)
class ModelShape:
    """The hyper-parameters of one model, enough to write its header."""

    arch: str
    name: str
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    n_ff: int
    n_vocab: int
    ctx: int = 8192
    head_dim: int | None = None  # attention.key_length / value_length; None: n_embd // n_head
    quant: str = "Q4_K"
    file_type: str | None = None  # general.file_type's name when it differs from the quant's usual one
    # Per-role overrides of the quant, e.g. {"ffn_down": "Q6_K", "output": "Q6_K"}.
    quant_mix: Mapping[str, str] = field(default_factory=dict)
    tie_embeddings: bool = False
    # MoE
    n_expert: int = 0
    n_expert_used: int = 0
    n_ff_exp: int = 0
    # sliding window
    n_swa: int = 0
    # hybrid Gated DeltaNet (qwen35)
    full_attention_interval: int = 0
    ssm_conv: int = 4
    ssm_state: int = 128
    ssm_groups: int = 16
    ssm_v_heads: int = 48
    n_rot: int | None = None  # rope.dimension_count when only part of the head rotates; None: the head size

    @property
    def hd(self) -> int:
        return self.head_dim if self.head_dim is not None else self.n_embd // self.n_head

    def q(self, role: str) -> str:
        return self.quant_mix.get(role, self.quant)

    def with_quant(self, quant: str, **mix: str) -> ModelShape:
        return replace(self, quant=quant, quant_mix=dict(mix))


def _norm(name: str, n: int) -> TensorSpec:
    return (name, (n,), "F32")


def _gptneox_block(s: ModelShape, b: str) -> list[TensorSpec]:
    # GPT-NeoX (Pythia): layer norms with biases, one fused QKV projection, no gate (src/models/gptneox.cpp).
    e, f = s.n_embd, s.n_ff
    qkv = e + 2 * s.hd * s.n_head_kv
    return [
        _norm(f"{b}.attn_norm.weight", e),
        _norm(f"{b}.attn_norm.bias", e),
        (f"{b}.attn_qkv.weight", (e, qkv), s.q("attn_qkv")),
        _norm(f"{b}.attn_qkv.bias", qkv),
        (f"{b}.attn_output.weight", (e, e), s.q("attn_output")),
        _norm(f"{b}.attn_output.bias", e),
        _norm(f"{b}.ffn_norm.weight", e),
        _norm(f"{b}.ffn_norm.bias", e),
        (f"{b}.ffn_up.weight", (e, f), s.q("ffn_up")),
        _norm(f"{b}.ffn_up.bias", f),
        (f"{b}.ffn_down.weight", (f, e), s.q("ffn_down")),
        _norm(f"{b}.ffn_down.bias", e),
    ]


def _glm4_block(s: ModelShape, b: str) -> list[TensorSpec]:
    # GLM-4 (0414): pre and post norms around attention and FFN, gate and up fused into one ffn_up.
    e, hd = s.n_embd, s.hd
    return [
        _norm(f"{b}.attn_norm.weight", e),
        (f"{b}.attn_q.weight", (e, hd * s.n_head), s.q("attn_q")),
        (f"{b}.attn_k.weight", (e, hd * s.n_head_kv), s.q("attn_k")),
        (f"{b}.attn_v.weight", (e, hd * s.n_head_kv), s.q("attn_v")),
        (f"{b}.attn_output.weight", (hd * s.n_head, e), s.q("attn_output")),
        _norm(f"{b}.post_attention_norm.weight", e),
        _norm(f"{b}.ffn_norm.weight", e),
        (f"{b}.ffn_up.weight", (e, 2 * s.n_ff), s.q("ffn_up")),
        (f"{b}.ffn_down.weight", (s.n_ff, e), s.q("ffn_down")),
        _norm(f"{b}.post_ffw_norm.weight", e),
    ]


def _gpt_oss_block(s: ModelShape, b: str) -> list[TensorSpec]:
    # gpt-oss (src/models/openai-moe.cpp): biased projections, attention sinks, MoE with biased experts.
    e, hd, n_exp, f = s.n_embd, s.hd, s.n_expert, s.n_ff_exp
    q_dim, kv_dim = hd * s.n_head, hd * s.n_head_kv
    return [
        _norm(f"{b}.attn_norm.weight", e),
        (f"{b}.attn_q.weight", (e, q_dim), s.q("attn_q")),
        _norm(f"{b}.attn_q.bias", q_dim),
        (f"{b}.attn_k.weight", (e, kv_dim), s.q("attn_k")),
        _norm(f"{b}.attn_k.bias", kv_dim),
        (f"{b}.attn_v.weight", (e, kv_dim), s.q("attn_v")),
        _norm(f"{b}.attn_v.bias", kv_dim),
        (f"{b}.attn_output.weight", (q_dim, e), s.q("attn_output")),
        _norm(f"{b}.attn_output.bias", e),
        _norm(f"{b}.attn_sinks.weight", s.n_head),
        _norm(f"{b}.post_attention_norm.weight", e),
        (f"{b}.ffn_gate_inp.weight", (e, n_exp), "F32"),
        _norm(f"{b}.ffn_gate_inp.bias", n_exp),
        (f"{b}.ffn_gate_exps.weight", (e, f, n_exp), s.q("ffn_gate")),
        (f"{b}.ffn_gate_exps.bias", (f, n_exp), "F32"),
        (f"{b}.ffn_up_exps.weight", (e, f, n_exp), s.q("ffn_up")),
        (f"{b}.ffn_up_exps.bias", (f, n_exp), "F32"),
        (f"{b}.ffn_down_exps.weight", (f, e, n_exp), s.q("ffn_down")),
        (f"{b}.ffn_down_exps.bias", (e, n_exp), "F32"),
    ]


# Architectures whose blocks differ from the llama layout in more than a tensor or two.
_BLOCKS = {"gptneox": _gptneox_block, "glm4": _glm4_block, "gpt-oss": _gpt_oss_block}


def shape_tensors(s: ModelShape) -> list[TensorSpec]:
    """The tensor list llama.cpp's loader expects for ``s.arch``, in GGUF (ne0-first) order."""
    e, hd = s.n_embd, s.hd
    q_dim, kv_dim = hd * s.n_head, hd * s.n_head_kv
    out: list[TensorSpec] = [("token_embd.weight", (e, s.n_vocab), s.q("token_embd"))]
    for i in range(s.n_layer):
        b = f"blk.{i}"
        block = _BLOCKS.get(s.arch)
        if block is not None:
            out += block(s, b)
            continue
        out.append(_norm(f"{b}.attn_norm.weight", e))
        recurrent = s.arch == "qwen35" and (i + 1) % s.full_attention_interval != 0
        if recurrent:
            key_dim = s.ssm_state * s.ssm_groups
            value_dim = s.ssm_state * s.ssm_v_heads
            conv_dim = 2 * key_dim + value_dim
            out += [
                (f"{b}.attn_qkv.weight", (e, conv_dim), s.q("attn_qkv")),
                (f"{b}.attn_gate.weight", (e, value_dim), s.q("attn_gate")),
                (f"{b}.ssm_conv1d.weight", (s.ssm_conv, conv_dim), "F32"),
                (f"{b}.ssm_dt.bias", (s.ssm_v_heads,), "F32"),
                (f"{b}.ssm_a", (s.ssm_v_heads,), "F32"),
                (f"{b}.ssm_beta.weight", (e, s.ssm_v_heads), "F32"),
                (f"{b}.ssm_alpha.weight", (e, s.ssm_v_heads), "F32"),
                (f"{b}.ssm_norm.weight", (s.ssm_state,), "F32"),
                (f"{b}.ssm_out.weight", (value_dim, e), s.q("ssm_out")),
            ]
        else:
            # Qwen3.5's attention projects a gate alongside Q, hence twice the width.
            q_out = 2 * q_dim if s.arch == "qwen35" else q_dim
            out += [
                (f"{b}.attn_q.weight", (e, q_out), s.q("attn_q")),
                (f"{b}.attn_k.weight", (e, kv_dim), s.q("attn_k")),
                (f"{b}.attn_v.weight", (e, kv_dim), s.q("attn_v")),
                (f"{b}.attn_output.weight", (q_dim, e), s.q("attn_output")),
            ]
            if s.arch == "qwen2":
                out += [_norm(f"{b}.attn_q.bias", q_dim), _norm(f"{b}.attn_k.bias", kv_dim)]
                out += [_norm(f"{b}.attn_v.bias", kv_dim)]
            if s.arch in ("qwen3", "qwen3moe", "qwen35", "gemma3"):
                out += [_norm(f"{b}.attn_q_norm.weight", hd), _norm(f"{b}.attn_k_norm.weight", hd)]
            if s.arch == "gpt-oss":
                # Biases on every projection, and one attention sink per head.
                out += [_norm(f"{b}.attn_q.bias", q_dim), _norm(f"{b}.attn_k.bias", kv_dim)]
                out += [_norm(f"{b}.attn_v.bias", kv_dim), _norm(f"{b}.attn_output.bias", e)]
                out.append(_norm(f"{b}.attn_sinks.weight", s.n_head))
        if s.arch in ("gemma2", "gemma3", "qwen35", "gpt-oss"):
            out.append(_norm(f"{b}.post_attention_norm.weight", e))
        if s.arch not in ("qwen35", "gpt-oss"):
            out.append(_norm(f"{b}.ffn_norm.weight", e))
        if s.n_expert:
            f = s.n_ff_exp
            out += [
                (f"{b}.ffn_gate_inp.weight", (e, s.n_expert), "F32"),
                (f"{b}.ffn_gate_exps.weight", (e, f, s.n_expert), s.q("ffn_gate")),
                (f"{b}.ffn_up_exps.weight", (e, f, s.n_expert), s.q("ffn_up")),
                (f"{b}.ffn_down_exps.weight", (f, e, s.n_expert), s.q("ffn_down")),
            ]
            if s.arch == "gpt-oss":
                out += [_norm(f"{b}.ffn_gate_inp.bias", s.n_expert)]
                out += [(f"{b}.ffn_{r}_exps.bias", (n, s.n_expert), "F32") for r, n in (("gate", f), ("up", f))]
                out.append((f"{b}.ffn_down_exps.bias", (e, s.n_expert), "F32"))
        else:
            out += [
                (f"{b}.ffn_gate.weight", (e, s.n_ff), s.q("ffn_gate")),
                (f"{b}.ffn_up.weight", (e, s.n_ff), s.q("ffn_up")),
                (f"{b}.ffn_down.weight", (s.n_ff, e), s.q("ffn_down")),
            ]
        if s.arch in ("gemma2", "gemma3"):
            out.append(_norm(f"{b}.post_ffw_norm.weight", e))
    out.append(_norm("output_norm.weight", e))
    if s.arch == "gptneox":
        out.append(_norm("output_norm.bias", e))
    if not s.tie_embeddings:
        out.append(("output.weight", (e, s.n_vocab), s.q("output")))
    return out


def _spm_tokens(n_vocab: int) -> tuple[list[str], list[float], list[int]]:
    # A valid SentencePiece vocabulary of any size: unknown, BOS, EOS, the 256 byte tokens, then
    # filler pieces. The planner only needs the count; llama.cpp needs it to be loadable.
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    tokens += [f"\u2581t{i}" for i in range(len(tokens), n_vocab)]
    types += [1] * (n_vocab - len(types))
    return tokens[:n_vocab], [0.0] * n_vocab, types[:n_vocab]


def shape_metadata(s: ModelShape) -> dict[str, Any]:
    a = s.arch
    md: dict[str, Any] = {
        "general.name": s.name,
        f"{a}.block_count": typed(s.n_layer, _U32),
        f"{a}.context_length": typed(s.ctx, _U32),
        f"{a}.embedding_length": typed(s.n_embd, _U32),
        f"{a}.feed_forward_length": typed(s.n_ff, _U32),
        f"{a}.attention.head_count": typed(s.n_head, _U32),
        f"{a}.attention.head_count_kv": typed(s.n_head_kv, _U32),
        f"{a}.attention.key_length": typed(s.hd, _U32),
        f"{a}.attention.value_length": typed(s.hd, _U32),
        f"{a}.rope.dimension_count": typed(s.n_rot or s.hd, _U32),
        f"{a}.rope.freq_base": typed(1_000_000.0, _F32),
        f"{a}.attention.layer_norm_rms_epsilon": typed(1e-6, _F32),
        "general.quantization_version": typed(2, _U32),
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.unknown_token_id": typed(0, _U32),
        "tokenizer.ggml.bos_token_id": typed(1, _U32),
        "tokenizer.ggml.eos_token_id": typed(2, _U32),
    }
    tokens, scores, types = _spm_tokens(s.n_vocab)
    md["tokenizer.ggml.tokens"] = typed(tokens, "array", "string")
    md["tokenizer.ggml.scores"] = typed(scores, "array", "float32")
    md["tokenizer.ggml.token_type"] = typed(types, "array", "int32")
    if s.n_expert:
        md[f"{a}.expert_count"] = typed(s.n_expert, _U32)
        md[f"{a}.expert_used_count"] = typed(s.n_expert_used, _U32)
        md[f"{a}.expert_feed_forward_length"] = typed(s.n_ff_exp, _U32)
    if s.n_swa:
        md[f"{a}.attention.sliding_window"] = typed(s.n_swa, _U32)
    if a == "gptneox":
        # LayerNorm, not RMSNorm, and the parallel residual of the Pythia family.
        md[f"{a}.attention.layer_norm_epsilon"] = typed(1e-5, _F32)
        md[f"{a}.use_parallel_residual"] = True
    if a == "qwen35":
        # Partial rotary (a quarter of the head) split into M-RoPE sections, as the converter writes.
        md[f"{a}.rope.dimension_count"] = typed(s.hd // 4, _U32)
        md[f"{a}.rope.dimension_sections"] = typed([11, 11, 10, 0], "array", "int32")
        md[f"{a}.full_attention_interval"] = typed(s.full_attention_interval, _U32)
        md[f"{a}.ssm.conv_kernel"] = typed(s.ssm_conv, _U32)
        md[f"{a}.ssm.state_size"] = typed(s.ssm_state, _U32)
        md[f"{a}.ssm.group_count"] = typed(s.ssm_groups, _U32)
        md[f"{a}.ssm.time_step_rank"] = typed(s.ssm_v_heads, _U32)
        md[f"{a}.ssm.inner_size"] = typed(s.ssm_state * s.ssm_v_heads, _U32)
    return md


def write_shape(path: str | os.PathLike[str], s: ModelShape) -> Path:
    """Write ``s`` as a sparse GGUF file of its true size."""
    ftype = LlamaFileType[f"MOSTLY_{s.file_type}"] if s.file_type else FTYPE_FOR_QUANT.get(s.quant)
    return write_gguf(path, s.arch, shape_metadata(s), shape_tensors(s), sparse=True, file_type=ftype)


# Shapes of published models (hyper-parameters from their config.json), with small-vocab twins
# for fast tests. "M" mixes follow what llama.cpp's quantiser picks for the _M variants: the
# value and down projections and the output layer one step up.
_QWEN35_27B = ModelShape(
    arch="qwen35",
    name="Qwen3.5-27B-shaped",
    n_layer=64,
    n_embd=5120,
    n_head=24,
    n_head_kv=4,
    head_dim=256,
    n_ff=17408,
    n_vocab=248320,
    ctx=262144,
    full_attention_interval=4,
)
# ~15.9 GiB (17.1 GB) of Q4_K_M tensors and ~11.3 GiB (12.1 GB) of Q3_K_S.
QWEN35_27B_Q4_K_M = _QWEN35_27B.with_quant("Q4_K", attn_v="Q6_K", ffn_down="Q6_K", output="Q6_K")
QWEN35_27B_Q3_K_S = replace(_QWEN35_27B.with_quant("Q3_K", output="Q6_K"), file_type="Q3_K_S")

SHAPES: dict[str, ModelShape] = {
    "llama-1b": ModelShape("llama", "Llama-3.2-1B-shaped", 16, 2048, 32, 8, 8192, 32000, head_dim=64),
    # ~13.2 GB (10^9 bytes) of Q8_0: docs/memory-model.md's speed-ceiling example on a 900 GB/s V100.
    "llama-13gb": ModelShape("llama", "Llama-13B-class", 38, 5120, 40, 40, 13824, 32000, quant="Q8_0"),
    # Llama-3.1-8B: 128k trained context, a 128k vocabulary; the long-context rows of the dry-run matrix.
    "llama31-8b": ModelShape(
        "llama", "Llama-3.1-8B-shaped", 32, 4096, 32, 8, 14336, 128256, head_dim=128, ctx=131072, quant="Q4_K"
    ),
    "llama-70b": ModelShape("llama", "Llama-3-70B-shaped", 80, 8192, 64, 8, 28672, 128256, quant="Q4_K"),
    "qwen2-0.5b": ModelShape("qwen2", "Qwen2.5-0.5B-shaped", 24, 896, 14, 2, 4864, 16384, quant="Q8_0"),
    "qwen3-4b": ModelShape("qwen3", "Qwen3-4B-shaped", 36, 2560, 32, 8, 9728, 32768, head_dim=128),
    "qwen3moe-30b": ModelShape(
        "qwen3moe",
        "Qwen3-30B-A3B-shaped",
        48,
        2048,
        32,
        4,
        6144,
        32768,
        head_dim=128,
        n_expert=128,
        n_expert_used=8,
        n_ff_exp=768,
        quant="Q4_0",
    ),
    # Mixtral-8x7B: llama blocks whose FFN is 8 experts, 2 active per token.
    "mixtral-8x7b": ModelShape(
        "llama", "Mixtral-8x7B-shaped", 32, 4096, 32, 8, 14336, 32000, n_expert=8, n_expert_used=2, n_ff_exp=14336
    ),
    # gpt-oss-20b: MXFP4 experts (32, 4 active), every other block a 128-token sliding window, a 201k vocabulary.
    "gpt-oss-20b": ModelShape(
        "gpt-oss",
        "gpt-oss-20b-shaped",
        24,
        2880,
        64,
        8,
        2880,
        201088,
        head_dim=64,
        n_expert=32,
        n_expert_used=4,
        n_ff_exp=2880,
        n_swa=128,
        ctx=131072,
        quant="Q8_0",
        quant_mix={"ffn_gate": "MXFP4", "ffn_up": "MXFP4", "ffn_down": "MXFP4"},
        file_type="MXFP4_MOE",  # as the published files say
    ),
    "qwen35-27b": QWEN35_27B_Q4_K_M,
    "qwen35-27b-q3ks": QWEN35_27B_Q3_K_S,
    "qwen35-2b": replace(
        _QWEN35_27B,
        name="Qwen3.5-2B-shaped",
        n_layer=24,
        n_embd=2048,
        n_head=8,
        n_head_kv=2,
        n_ff=6144,
        n_vocab=32768,
        ssm_v_heads=16,
        quant="Q8_0",
    ),
    "gemma2-2b": ModelShape(
        "gemma2",
        "Gemma-2-2B-shaped",
        26,
        2304,
        8,
        4,
        9216,
        32768,
        head_dim=256,
        n_swa=4096,
        tie_embeddings=True,
        quant="Q8_0",
    ),
    "gemma3-4b": ModelShape(
        "gemma3",
        "Gemma-3-4B-shaped",
        34,
        2560,
        8,
        4,
        10240,
        32768,
        head_dim=256,
        n_swa=1024,
        tie_embeddings=True,
        ctx=131072,
    ),
    "gemma3-27b": ModelShape(
        "gemma3",
        "Gemma-3-27B-shaped",
        62,
        5376,
        32,
        16,
        21504,
        262144,
        head_dim=128,
        n_swa=1024,
        tie_embeddings=True,
        ctx=131072,
    ),
}
