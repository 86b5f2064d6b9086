"""Memory planner: where every MiB of each card goes for a load, before the load.

Everything here follows the arithmetic of the llama.cpp vendored in llama-cpp-python 0.3.36
(see docs/memory-model.md): layer placement (``llama-model.cpp: load_tensors``) with the experts
that --cpu-moe / --n-cpu-moe keep in host memory (``common/common.h``), KV cells and
padding (``llama-context.cpp``, ``llama-kv-cache.cpp``, ``llama-kv-cache-iswa.cpp``), recurrent
state (``llama-memory-recurrent.cpp``, ``llama-hparams.cpp: n_embd_r/n_embd_s``) and the output
buffer (``llama_context::output_reserve``). The compute buffer has no closed form in llama.cpp (it
is the peak of ggml's graph allocator), so it is a calibrated model of the few tensors that
dominate it.

Which blocks carry KV, recurrent state or a sliding window is read from the header: the tensors
each block has (``ssm_*`` means recurrent, ``attn_k``/``attn_qkv`` otherwise means attention) and
the metadata keys llama.cpp reads (``head_count_kv`` arrays, ``sliding_window``,
``sliding_window_pattern``, ``full_attention_interval``, ``ssm.*``). The only per-architecture
facts are llama.cpp's own defaults for the sliding-window pattern, which are not in the file.

Pure Python: no Qt, llama_cpp, pynvml or psutil. ``plan()`` is arithmetic over facts derived
once per header (:func:`model_shape`), so a slider drag costs well under a millisecond. Those facts
come from hyper-parameters checked against llama.cpp's own bounds (``check_hparams``): a header with
a value no model can have raises a HeaderValueError, a ValueError naming the key, before any of it.
"""

from __future__ import annotations

import bisect
import os
import re
import struct
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import Any

from gui.core.ggml_types import GGML_TYPES_BY_NAME
from gui.core.gguf_reader import ArraySummary, GGUFHeader, check_hparams
from gui.core.params import (
    ALL_LAYERS,
    CONTEXT,
    FLOAT_CACHE_TYPES,
    MARGIN,
    LoadSettings,
    NetworkLink,
    split_proportions,
)
from gui.core.words import Text, Words, english, mark, words

__all__ = [
    "OLDER_BUILDS",
    "VENDORED_RULES",
    "Breakdown",
    "Device",
    "DevicePlan",
    "EngineRules",
    "ModelShape",
    "Plan",
    "TensorOverride",
    "Verdict",
    "auto_fit",
    "cuda_flash_attn_gaps",
    "cuda_overhead_mib",
    "model_shape",
    "plan",
    "plan_to_json",
]

MiB = 1 << 20
_F32 = 4
# Every context size llama.cpp allocates is padded to this many cells (llama-context.cpp).
_CTX_PAD = 256

# llama.cpp's default sliding-window layout per architecture, used when the file has no
# sliding_window_pattern key: (n_pattern, dense_first, default n_swa or 0 = "only if the file says").
# From the load_swa_pattern / set_swa_pattern calls in src/models/*.cpp.
_SWA_DEFAULTS: dict[str, tuple[int, bool, int]] = {
    "gemma2": (2, False, 4096),
    "gemma3": (6, False, 0),
    "gemma-embedding": (6, False, 0),
    "gemma3n": (5, False, 0),
    "cohere2": (4, False, 0),
    "cohere2moe": (4, True, 0),
    "gpt-oss": (2, False, 0),
    "exaone4": (4, False, 0),
    "olmo2": (4, False, 0),
    "llama4": (4, False, 0),
    "afmoe": (4, False, 0),
}
# Architectures whose hybrid recurrent blocks default to "every Nth block is full attention".
_FULL_ATTN_INTERVAL_DEFAULT = 4

_BLOCK = re.compile(r"^blk\.(\d+)\.(.+)$")
# A block's expert tensors, as llama.cpp's --cpu-moe / --n-cpu-moe select them (common/common.h:
# LLM_FFN_EXPS_REGEX); matched against the name after "blk.N.".
_EXPERTS = re.compile(r"ffn_(up|down|gate|gate_up)_(ch|)exps")
_ATTN_TENSORS = ("attn_k.", "attn_qkv.", "attn_kv_a_mqa.", "attn_k_b.")


# ---- public data -------------------------------------------------------------------------------


class Verdict(StrEnum):
    """Whether a load fits: the one word the planner, the quant table, the CLI and the views use."""

    FITS = mark("fits", "planner")
    TIGHT = mark("tight", "planner")  # fits, but inside the safety margin
    WONT_FIT = mark("will not fit", "planner")

    @property
    def rank(self) -> int:
        """Worse is higher: a plan's verdict is its worst device's."""
        return (Verdict.FITS, Verdict.TIGHT, Verdict.WONT_FIT).index(self)

    @property
    def answer(self) -> str:
        """The short answer to "does it fit?" (the quant table's column)."""
        return {
            Verdict.FITS: mark("yes", "planner"),
            Verdict.TIGHT: mark("tight", "planner"),
            Verdict.WONT_FIT: mark("no", "planner"),
        }[self]


@dataclass(frozen=True)
class Device:
    """One GPU as the planner sees it. ``free_mib < total_mib`` means other processes hold memory."""

    name: str
    total_mib: float
    free_mib: float
    bandwidth_gbs: float | None = None
    sm_count: int | None = None
    compute_capability: str | None = None
    # Learned from loads on this card (gui/core/memory_check.py): what the driver measured beyond the plan,
    # added to the CUDA context and runtime term, the one part the plan assumes.
    overhead_correction_mib: float = 0.0
    # "host:port" for a device of another machine reached through llama.cpp's RPC backend (--rpc); "" here.
    remote: str = ""


@dataclass(frozen=True)
class Breakdown:
    weights_mib: float = 0.0
    kv_mib: float = 0.0
    recurrent_mib: float = 0.0
    compute_mib: float = 0.0
    output_mib: float = 0.0
    overhead_mib: float = 0.0

    @property
    def total(self) -> float:
        return (
            self.weights_mib + self.kv_mib + self.recurrent_mib + self.compute_mib + self.output_mib + self.overhead_mib
        )


@dataclass(frozen=True)
class DevicePlan:
    name: str
    total_mib: float
    free_mib: float
    other_mib: float  # held by other processes: total - free
    weights_mib: float
    kv_mib: float
    recurrent_mib: float
    compute_mib: float  # llama.cpp's compute buffer, less what staged_mib adds to it
    # Op offload: host-resident weights (and host blocks' KV) copied here for prompt batches, the growth
    # of the compute buffer they cause; part of llama.cpp's compute buffer, shown apart
    staged_mib: float
    output_mib: float
    overhead_mib: float  # CUDA context and runtime
    needed_mib: float
    free_after_mib: float  # free - needed
    margin_mib: float
    verdict: Verdict
    layers: int  # repeating blocks placed here (the output layer not counted)
    has_output: bool
    # The blocks placed here, first_block .. first_block + layers - 1 (llama.cpp gives each device one run of
    # consecutive blocks); first_block is where the run would start when layers is 0.
    first_block: int = 0
    # Whether llama.cpp uses the device at all: with split mode none only the main GPU is (no CUDA context,
    # no buffers on the others).
    in_use: bool = True
    remote: str = ""  # "host:port" of an RPC server's device (Device.remote)


@dataclass(frozen=True)
class Plan:
    devices: tuple[DevicePlan, ...]
    host: Breakdown
    weights_mib: float
    kv_mib: float
    recurrent_mib: float
    compute_mib: float
    staged_mib: float  # on the GPUs: see DevicePlan.staged_mib
    layers_on_gpu: int  # llama.cpp's count: blocks on a GPU + 1 for the output layer
    n_layer: int
    fits: bool
    verdict: Verdict
    predicted_tg_tok_s: float | None
    notes: tuple[Text, ...]
    suggestions: tuple[Text, ...]
    weights_bytes: int  # exact bytes of all placed weights (a tied output copied to a GPU counts twice)
    settings: LoadSettings
    cpu_expert_layers: int = 0  # blocks on a GPU whose expert tensors stay in host memory
    # The network's share of a decoded token with RPC devices (docs/rpc.md): the hops a token makes between
    # this machine and remote devices, and their time on the stated link; included in predicted_tg_tok_s.
    link_hops: int = 0
    link_ms_per_token: float = 0.0

    @property
    def partial(self) -> bool:
        """Some of the model that could be on the GPUs is in host memory (layers, or experts)."""
        return bool(self.devices) and (self.layers_on_gpu < self.n_layer + 1 or self.cpu_expert_layers > 0)

    @property
    def output_mib(self) -> float:
        return self.host.output_mib + sum(d.output_mib for d in self.devices)


# ---- facts derived once per header -------------------------------------------------------------


@dataclass(frozen=True)
class ModelShape:
    """What the planner needs from a header, derived once. Sizes in bytes or elements."""

    arch: str
    n_layer: int  # n_layer_all: every block in the file (MTP/NextN blocks included)
    n_embd: int
    n_vocab: int
    n_head_max: int
    q_dim_max: int  # n_head * head_dim_k, the widest layer
    n_ff_max: int
    ctx_train: int
    n_expert: int
    n_expert_used: int
    n_ff_exp: int
    layer_bytes: tuple[int, ...]
    layer_read_bytes: tuple[float, ...]  # bytes one decoded token reads (only the active experts)
    expert_bytes: tuple[int, ...]  # per block: its expert tensors (part of layer_bytes)
    expert_read_bytes: tuple[float, ...]  # per block: what a token reads of them (part of layer_read_bytes)
    embd_bytes: int
    embd_row_bytes: int
    output_bytes: int  # output + output_norm (+ token_embd when tied and placed on a GPU)
    tied_output_bytes: int  # token_embd bytes duplicated as the output matrix; 0 when untied
    other_bytes: int  # tensors outside blocks, input and output: kept on the host
    total_bytes: int
    # (block, K elements per cell, V elements per cell, sliding-window)
    kv_layers: tuple[tuple[int, int, int, bool], ...]
    k_max: int  # K elements per cell of the widest attention layer
    v_max: int
    v_variable: bool
    n_swa: int
    rec_layers: tuple[int, ...]
    rs_floats: int  # n_embd_r + n_embd_s: F32 values of recurrent state per layer per row
    rs_state_floats: int  # n_embd_s of those
    rs_conv_dim: int  # channels of the recurrent blocks' convolution (d_inner + 2 n_group d_state)
    # What op offload copies to the first GPU for a prompt batch: per block its largest tensor outside
    # the experts and its largest expert tensor; the output matrix (token_embd when tied).
    dense_max_bytes: tuple[int, ...] = ()
    expert_max_bytes: tuple[int, ...] = ()
    output_matrix_bytes: int = 0
    # Every attention layer's (head size K, head size V, query heads per KV head), for flash attention's
    # kernels (ggml-cuda/fattn.cu).
    attn_heads: frozenset[tuple[int, int, int]] = frozenset()
    # (name, block or -1 for the output layer or -2 for host tensors, bytes, bytes a token reads), for
    # tensor buffer-type overrides (-ot).
    tensors: tuple[tuple[str, int, int, float], ...] = ()

    @cached_property
    def has_swa(self) -> bool:
        # Asked several times per plan; a file at llama.cpp's 512 blocks would walk them each time.
        return any(swa for _, _, _, swa in self.kv_layers)

    @cached_property
    def has_full_attention(self) -> bool:
        return any(not swa for _, _, _, swa in self.kv_layers)

    @cached_property
    def sums(self) -> _BlockSums:
        return _BlockSums.of(self)


def _prefix(values: Sequence[float]) -> list[float]:
    out = [0.0]
    for v in values:
        out.append(out[-1] + v)
    return out


def _prefix_max(values: Sequence[int], n: int) -> list[int]:
    out = [0]
    for v in list(values)[:n] + [0] * max(0, n - len(values)):
        out.append(max(out[-1], v))
    return out


@dataclass(frozen=True)
class _BlockSums:
    """Running totals over the blocks, so that what a range of blocks holds costs a subtraction
    whatever the block count (a plan asks for a few ranges, a search for dozens of plans)."""

    weights: list[float]
    read: list[float]
    experts: list[float]
    experts_read: list[float]
    recurrent: list[float]
    # attention layers counted per (K elements, V elements, sliding-window) kind
    kv_kinds: dict[tuple[int, int, bool], list[float]]
    # the largest tensor (outside the experts; of the experts) among blocks 0..k-1, at index k
    dense_max: list[int]
    expert_max: list[int]

    @staticmethod
    def of(shape: ModelShape) -> _BlockSums:
        n = shape.n_layer
        rec = set(shape.rec_layers)
        kinds: dict[tuple[int, int, bool], list[float]] = {}
        for il, k, v, swa in shape.kv_layers:
            kinds.setdefault((k, v, swa), [0.0] * n)[il] = 1.0
        return _BlockSums(
            weights=_prefix(shape.layer_bytes),
            read=_prefix(shape.layer_read_bytes),
            experts=_prefix(shape.expert_bytes),
            experts_read=_prefix(shape.expert_read_bytes),
            recurrent=_prefix([1.0 if il in rec else 0.0 for il in range(n)]),
            kv_kinds={kind: _prefix(marks) for kind, marks in kinds.items()},
            dense_max=_prefix_max(shape.dense_max_bytes, n),
            expert_max=_prefix_max(shape.expert_max_bytes, n),
        )


_SHAPES: dict[int, tuple[weakref.ref[GGUFHeader], ModelShape]] = {}


def model_shape(header: GGUFHeader) -> ModelShape:
    """The header's :class:`ModelShape`, computed once per header object."""
    key = id(header)
    hit = _SHAPES.get(key)
    if hit is not None and hit[0]() is header:
        return hit[1]
    shape = _derive_shape(header)

    # Keyed by id() because a GGUFHeader is unhashable; the weak reference drops the entry when
    # the header goes, so a recycled id can never return another file's shape.
    def forget(_ref: weakref.ref[GGUFHeader], k: int = key) -> None:
        _SHAPES.pop(k, None)

    _SHAPES[key] = (weakref.ref(header, forget), shape)
    return shape


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return default


def _per_layer(value: Any, n: int, default: int) -> list[int]:
    """A metadata value that is either one number or one per block (llama.cpp get_key_or_arr)."""
    if isinstance(value, list):
        vals = [_int(v, default) for v in value[:n]]
        return vals + [default] * (n - len(vals))
    if isinstance(value, ArraySummary):
        return [default] * n
    return [_int(value, default)] * n


def _derive_shape(h: GGUFHeader) -> ModelShape:
    # The reader checks these already; a header built some other way is checked here, so that no
    # value reaches the arithmetic below unchecked.
    check_hparams(h.metadata, os.path.basename(h.source) or h.source)
    arch = h.architecture or "llama"
    n_layer = h.n_layer or 0
    n_embd = _int(h.arch_value("embedding_length"))
    embd = h.tensor("token_embd.weight")
    n_vocab = embd.shape[1] if embd is not None and len(embd.shape) > 1 else 0
    if n_vocab == 0:
        tokens = h.metadata.get("tokenizer.ggml.tokens")
        n_vocab = len(tokens) if isinstance(tokens, (list, ArraySummary)) else 0

    n_head = _per_layer(h.arch_value("attention.head_count"), n_layer, 0)
    kv_raw = h.arch_value("attention.head_count_kv")
    n_head_kv = n_head[:] if kv_raw is None else _per_layer(kv_raw, n_layer, 0)
    n_ff = _per_layer(h.arch_value("feed_forward_length"), n_layer, 0)
    head0 = max(n_head) if n_head else 0
    hd_k = _int(h.arch_value("attention.key_length"), n_embd // head0 if head0 else 0)
    hd_v = _int(h.arch_value("attention.value_length"), n_embd // head0 if head0 else 0)
    hd_k_swa = _int(h.arch_value("attention.key_length_swa"), hd_k)
    hd_v_swa = _int(h.arch_value("attention.value_length_swa"), hd_v)

    # Which tensors sit in which block.
    layer_bytes = [0] * n_layer
    layer_read = [0.0] * n_layer
    expert_bytes = [0] * n_layer
    expert_read = [0.0] * n_layer
    has_attn = [False] * n_layer
    has_ssm = [False] * n_layer
    dense_max = [0] * n_layer
    expert_max = [0] * n_layer
    tensors: list[tuple[str, int, int, float]] = []
    n_expert = _int(h.arch_value("expert_count"))
    used = h.arch_value("expert_used_count")
    n_expert_used = max(_per_layer(used, max(n_layer, 1), 0)) if used is not None else 0
    embd_bytes = output_bytes = other_bytes = 0
    has_output_matrix = False
    for t in h.tensors:
        m = _BLOCK.match(t.name)
        nbytes = t.nbytes
        if m is not None and int(m.group(1)) < n_layer:
            il, rest = int(m.group(1)), m.group(2)
            layer_bytes[il] += nbytes
            if _EXPERTS.match(rest):
                # A token reads only its experts' slices of the merged expert tensors.
                share = n_expert_used / n_expert if n_expert else 1.0
                expert_bytes[il] += nbytes
                expert_read[il] += nbytes * share
                layer_read[il] += nbytes * share
                expert_max[il] = max(expert_max[il], nbytes)
                tensors.append((t.name, il, nbytes, nbytes * share))
            else:
                layer_read[il] += nbytes
                dense_max[il] = max(dense_max[il], nbytes)
                tensors.append((t.name, il, nbytes, float(nbytes)))
            if rest.startswith("ssm_"):
                has_ssm[il] = True
            elif rest.startswith(_ATTN_TENSORS):
                has_attn[il] = True
        elif t.name.startswith("token_embd."):
            embd_bytes += nbytes
            tensors.append((t.name, -2, nbytes, 0.0))
        elif t.name.startswith(("output.", "output_norm.")):
            output_bytes += nbytes
            has_output_matrix = has_output_matrix or t.name == "output.weight"
            tensors.append((t.name, -1, nbytes, float(nbytes)))
        else:
            other_bytes += nbytes
            tensors.append((t.name, -2, nbytes, 0.0))
    tied = 0 if has_output_matrix else (embd.nbytes if embd is not None else 0)
    out_matrix = h.tensor("output.weight")
    output_matrix = out_matrix.nbytes if out_matrix is not None else tied
    embd_row = embd.nbytes // max(n_vocab, 1) if embd is not None else 0

    # Sliding-window layers: the file's pattern (array or period), else llama.cpp's default.
    n_swa = _int(h.arch_value("attention.sliding_window"))
    default = _SWA_DEFAULTS.get(arch)
    is_swa = [False] * n_layer
    pattern = h.arch_value("attention.sliding_window_pattern")
    if default is not None and default[2] and not n_swa:
        n_swa = default[2]
    if n_swa > 0:
        if isinstance(pattern, list):
            is_swa = [bool(v) for v in pattern[:n_layer]] + [False] * max(0, n_layer - len(pattern))
        elif default is not None or pattern is not None:
            period = _int(pattern, default[0] if default else 0)
            dense_first = default[1] if default else False
            for il in range(n_layer):
                if period == 0:
                    is_swa[il] = True
                elif dense_first:
                    is_swa[il] = il % period != 0
                else:
                    is_swa[il] = il % period < period - 1
    # MTP/NextN blocks at the end never slide (llama-hparams.cpp: set_swa_pattern).
    n_nextn = _int(h.arch_value("nextn_predict_layers"))
    for il in range(max(0, n_layer - n_nextn), n_layer):
        is_swa[il] = False

    # Recurrent blocks: those with ssm_* tensors. A hybrid file may also list them or give the
    # full-attention interval; the tensors are what llama.cpp ends up building, so they win.
    rec = [il for il in range(n_layer) if has_ssm[il]]
    if not rec and h.arch_value("full_attention_interval") is not None and h.arch_value("ssm.state_size"):
        interval = _int(h.arch_value("full_attention_interval"), _FULL_ATTN_INTERVAL_DEFAULT) or 1
        rec = [il for il in range(n_layer - n_nextn) if (il + 1) % interval != 0]
    rec_set = set(rec)

    def hd(il: int) -> tuple[int, int]:
        return (hd_k_swa, hd_v_swa) if is_swa[il] else (hd_k, hd_v)

    # Attention KV: every non-recurrent block in a hybrid; every block otherwise (llama.cpp
    # gives all layers a cache unless a filter says no; a layer with no KV heads costs nothing).
    kv_layers: list[tuple[int, int, int, bool]] = []
    attn_heads: set[tuple[int, int, int]] = set()
    for il in range(n_layer):
        if il in rec_set:
            continue
        if rec and not has_attn[il]:
            continue
        if il >= n_layer - n_nextn:
            continue  # the main context filters MTP blocks out of its cache
        k, v = hd(il)
        kv_layers.append((il, n_head_kv[il] * k, n_head_kv[il] * v, is_swa[il]))
        if n_head_kv[il]:
            attn_heads.add((k, v, n_head[il] // n_head_kv[il]))
    v_all = [n_head_kv[il] * hd(il)[1] for il in range(n_layer)]
    v_max = max(v_all) if v_all else 0
    v_variable = len(set(v_all)) > 1

    # Recurrent state widths (llama-hparams.cpp n_embd_r / n_embd_s, Mamba and Gated DeltaNet).
    d_conv = _int(h.arch_value("ssm.conv_kernel"))
    d_inner = _int(h.arch_value("ssm.inner_size"))
    d_state = _int(h.arch_value("ssm.state_size"))
    n_group = _int(h.arch_value("ssm.group_count"))
    conv_dim = d_inner + 2 * n_group * d_state
    n_embd_r = (d_conv - 1 if d_conv > 0 else 0) * conv_dim
    n_embd_s = d_state * d_inner

    q_dims = [n_head[il] * hd(il)[0] for il in range(n_layer)]
    return ModelShape(
        arch=arch,
        n_layer=n_layer,
        n_embd=n_embd,
        n_vocab=n_vocab,
        n_head_max=head0,
        q_dim_max=max(q_dims) if q_dims else 0,
        n_ff_max=max(n_ff) if n_ff else 0,
        ctx_train=h.context_length or 0,
        n_expert=n_expert,
        n_expert_used=n_expert_used,
        n_ff_exp=_int(h.arch_value("expert_feed_forward_length")),
        layer_bytes=tuple(layer_bytes),
        layer_read_bytes=tuple(layer_read),
        expert_bytes=tuple(expert_bytes),
        expert_read_bytes=tuple(expert_read),
        embd_bytes=embd_bytes,
        embd_row_bytes=embd_row,
        output_bytes=output_bytes,
        tied_output_bytes=tied,
        other_bytes=other_bytes,
        total_bytes=h.tensor_bytes,
        kv_layers=tuple(kv_layers),
        k_max=max((k for _, k, _, _ in kv_layers), default=0),
        v_max=v_max,
        v_variable=v_variable,
        n_swa=n_swa,
        rec_layers=tuple(rec),
        rs_floats=n_embd_r + n_embd_s,
        rs_state_floats=n_embd_s,
        rs_conv_dim=conv_dim if rec else 0,
        dense_max_bytes=tuple(dense_max),
        expert_max_bytes=tuple(expert_max),
        output_matrix_bytes=output_matrix,
        attn_heads=frozenset(attn_heads),
        tensors=tuple(tensors),
    )


# ---- llama.cpp's arithmetic --------------------------------------------------------------------


def _pad(x: int, n: int = _CTX_PAD) -> int:
    return -(-x // n) * n


@lru_cache(maxsize=1024)  # a few widths and cache types per model, asked for every layer of every plan
def _row_bytes(type_name: str, n: int) -> int:
    t = GGML_TYPES_BY_NAME[type_name.upper()]
    return n // t.block_size * t.type_size


# ---- llama.cpp build rules ---------------------------------------------------------------------


@dataclass(frozen=True)
class EngineRules:
    """llama.cpp rules that changed between builds and move the compute buffers.

    The defaults are the vendored engine's. Loads logged by older builds (``tests/data/cuda_logs``) are
    planned with :data:`OLDER_BUILDS`.
    """

    # llama.cpp#23764 (May 2026): with flash attention the mask is an F16 graph input
    # (llama-graph.cpp: build_attn_inp_kq_mask). Before it, the mask was an F32 input that the graph
    # cast to F16: the host held it in F32, and the first GPU an F32 copy beside the F16 cast.
    fa_mask_f16: bool = True
    # llama.cpp#23907 (June 2026): CUDA flash attention converts a K or V cache that is not F16 into
    # room reserved with its output (ggml-cuda/fattn.cu: ggml_cuda_flash_attn_ext_get_alloc_size), so
    # in the compute buffer. Before it, the converted copies came from CUDA's memory pool.
    cuda_fa_f16_scratch: bool = True


VENDORED_RULES = EngineRules()
OLDER_BUILDS = EngineRules(fa_mask_f16=False, cuda_fa_f16_scratch=False)

# ggml-cuda.cu: ggml_backend_cuda_device_offload_op: ops with at least this many rows (tokens of the
# micro-batch for a matrix product, n_outputs for the output layer) are worth copying weights for.
_OFFLOAD_MIN_BATCH = 32
# ggml-cuda/fattn.cu: the K/V types and head sizes the CUDA flash-attention kernels exist for.
_CUDA_FA_KV_TYPES = frozenset({"f32", "f16", "bf16", "q4_0", "q4_1", "q5_0", "q5_1", "q8_0"})
_CUDA_FA_HEADS = frozenset({40, 64, 72, 80, 96, 112, 128, 256})


def _cuda_fa_kernel(head_k: int, head_v: int, gqa: int) -> bool:
    """ggml_cuda_get_best_fattn_kernel != NONE for these head sizes and query heads per KV head.

    On NVIDIA cards the answer does not depend on the card: its compute capability picks among the
    MMA, tile and vector kernels, which all exist for these sizes. 192, 320, 512 and 576 need the
    grouped-query path (a mask, no ALiBi, >= 2 query heads per KV head; the cache is padded to 256).
    """
    if head_k in _CUDA_FA_HEADS:
        return head_v == head_k
    if head_k == 192:
        return head_v == 128 and gqa >= 2 and gqa % 8 == 0
    if head_k == 320:
        return head_v == 256 and gqa >= 2 and gqa % 32 == 0
    if head_k in (512, 576):
        return head_v == 512 and gqa >= 2
    return False


def cuda_flash_attn_gaps(
    attn_heads: Iterable[tuple[int, int, int]], cache_type_k: str, cache_type_v: str
) -> tuple[Text, ...]:
    """What CUDA's flash-attention kernels lack for these attention layers and cache types, in words
    ("head size 192/128 with 4 query heads per KV head", "iq4_nl V cache"); () when every layer has one."""
    missing = [
        words("{type} {kind} cache", type=t, kind=kind)
        for kind, t in (("K", cache_type_k), ("V", cache_type_v))
        if t not in _CUDA_FA_KV_TYPES
    ]
    for head_k, head_v, gqa in sorted(set(attn_heads)):
        if not _cuda_fa_kernel(head_k, head_v, gqa):
            size = f"{head_k}" if head_k == head_v else f"{head_k}/{head_v}"
            missing.append(words("head size {size} with {gqa} query heads per KV head", size=size, gqa=gqa))
    return tuple(missing)


def _flash_attn(shape: ModelShape, s: LoadSettings, gpu_layers: bool) -> bool:
    """Flash attention as llama.cpp resolves it.

    "auto" (llama-context.cpp: resolve_fused_ops) is on unless an attention layer's flash-attention
    node lands on another device than its layer, which happens when the layer's GPU has no kernel for
    its head size or cache types (ggml-cuda.cu: supports_op -> ggml_cuda_flash_attn_ext_supported). The
    CPU has a kernel for every size. A quantized V cache turns "auto" on before that
    (llama_init_from_model).
    """
    if s.flash_attn != "auto":
        return s.flash_attn == "on"
    if s.cache_type_v not in FLOAT_CACHE_TYPES or not gpu_layers:
        return True
    if s.cache_type_k not in _CUDA_FA_KV_TYPES or s.cache_type_v not in _CUDA_FA_KV_TYPES:
        return False
    return all(_cuda_fa_kernel(*heads) for heads in shape.attn_heads)


@dataclass(frozen=True)
class _Context:
    """The context sizes llama.cpp derives from the settings (llama_context constructor)."""

    n_seq: int
    n_stream: int
    cells: int  # per stream, full-attention layers
    swa_cells: int  # per stream, sliding-window layers
    n_ubatch: int
    n_outputs: int  # outputs of the worst-case micro-batch the compute buffer is reserved for
    flash_attn: bool
    cast_k: bool  # an F32 K cache that flash attention converts to F16
    cast_v: bool
    scratch_k: bool = False  # on a GPU, CUDA flash attention converts this K cache to F16 in the buffer
    scratch_v: bool = False
    host_mask_elt: int = 4  # bytes per mask element of the graph input, in host memory
    mask_cast: bool = False  # older builds with flash attention: the first GPU casts an F32 mask copy
    offload: bool = False  # op offload: prompt batches copy host-resident weights to the first GPU


def _context(
    shape: ModelShape,
    s: LoadSettings,
    rules: EngineRules = VENDORED_RULES,
    *,
    gpus: bool = False,
    gpu_layers: bool = False,
) -> _Context:
    n_seq = max(1, s.n_parallel)
    n_ctx = s.n_ctx if s.n_ctx > 0 else shape.ctx_train
    n_batch = min(n_ctx, s.n_batch)  # causal attention: a batch never exceeds the context
    n_ubatch = min(n_batch, s.n_ubatch)
    n_ctx = _pad(n_ctx)
    if s.kv_unified:
        # One stream that every sequence shares; a sliding window keeps each sequence's window.
        n_stream, cells, window = 1, n_ctx, shape.n_swa * n_seq
    else:
        # One stream per sequence, each padded to 256.
        n_stream, cells, window = n_seq, _pad(n_ctx // n_seq), shape.n_swa
    swa_cells = cells if s.swa_full else min(cells, _pad(window + n_ubatch))
    # The prompt graph is reserved for min(n_ubatch, n_outputs_max) outputs, where llama.cpp reads
    # 0 as the batch size (llama-context.cpp: sched_reserve).
    outputs_max = s.outputs_max or n_batch
    fa = _flash_attn(shape, s, gpu_layers)
    cast_k, cast_v = fa and s.cache_type_k == "f32", fa and s.cache_type_v == "f32"
    scratch = gpus and fa and rules.cuda_fa_f16_scratch
    return _Context(
        n_seq,
        n_stream,
        cells,
        swa_cells,
        n_ubatch,
        min(n_ubatch, outputs_max),
        fa,
        cast_k,
        cast_v,
        # An F32 cache is cast to F16 by the graph (cast_k/cast_v), so only the other types convert.
        scratch_k=scratch and s.cache_type_k not in ("f16", "f32"),
        scratch_v=scratch and s.cache_type_v not in ("f16", "f32"),
        host_mask_elt=2 if fa and rules.fa_mask_f16 else 4,
        mask_cast=gpus and fa and not rules.fa_mask_f16,
        offload=gpus and s.op_offload and n_ubatch >= _OFFLOAD_MIN_BATCH,
    )


def _kv_layer_bytes(shape: ModelShape, c: _Context, s: LoadSettings, k: int, v: int, swa: bool) -> int:
    """One attention layer's KV cache: every stream's cells of K and V."""
    cells = (c.swa_cells if swa else c.cells) * c.n_stream
    # Without flash attention V is stored transposed and padded to the widest layer.
    v_width = shape.v_max if (not c.flash_attn and shape.v_variable) else v
    return (_row_bytes(s.cache_type_k, k) + _row_bytes(s.cache_type_v, v_width)) * cells


def _kv_bytes(shape: ModelShape, c: _Context, s: LoadSettings, lo: int, hi: int) -> int:
    """The KV cache of the attention layers among blocks lo..hi-1."""
    total = 0
    for (k, v, swa), counts in shape.sums.kv_kinds.items():
        n = int(counts[hi] - counts[lo])
        if n:
            total += n * _kv_layer_bytes(shape, c, s, k, v, swa)
    return total


def _kv_layer_max(shape: ModelShape, c: _Context, s: LoadSettings, lo: int, hi: int) -> int:
    """The largest single layer's KV cache among blocks lo..hi-1."""
    best = 0
    for (k, v, swa), counts in shape.sums.kv_kinds.items():
        if counts[hi] - counts[lo] > 0:
            best = max(best, _kv_layer_bytes(shape, c, s, k, v, swa))
    return best


def _rs_bytes_per_layer(shape: ModelShape, c: _Context) -> int:
    # rows = mem_size * (1 + n_rs_seq); llama-cpp-python leaves n_rs_seq at 0.
    return shape.rs_floats * _F32 * max(1, c.n_seq)


@dataclass(frozen=True)
class _Phases:
    """The compute buffer's candidate peaks for one backend, in bytes (see :func:`_phases`)."""

    output: float  # the output layer: the logits and the rows that reach them
    layers: float  # the largest of a block's phases
    ffn: float  # the FFN (MoE) phase, masks included
    attn: float  # the attention phase, masks included, less the KV cache it reads
    cast: float  # older builds, flash attention, first GPU: the F32 mask copy and its F16 cast


def _mask_cells(shape: ModelShape, c: _Context) -> int:
    """Cells per token of the attention masks: one per cache (full and sliding-window), every stream."""
    if not shape.kv_layers:
        return 0
    return (c.cells if shape.has_full_attention else 0) + (c.swa_cells if shape.has_swa else 0)


def _phases(shape: ModelShape, c: _Context, *, gpu: bool) -> _Phases:
    """The tensors live at once during the worst-case micro-batch, phase by phase.

    Calibrated against the installed llama.cpp's dry runs (CPU) and published CUDA logs; see
    docs/memory-model.md. Per micro-batch: H the hidden state, Q the query, F one FFN projection,
    L the logits (one row per output the reserve pass asks for: n_outputs_max, at most the
    micro-batch), M the attention masks (F16 with flash attention, F32 without), KQ the attention
    scores without flash attention; for MoE, X one projection of the active experts and E the
    experts' outputs before they are summed. ``gpu``: the CUDA backend's own additions (flash
    attention's F16 copies of a quantized cache, the F32 mask cast of older builds).
    """
    ub = c.n_ubatch
    h = shape.n_embd * ub * _F32
    q = shape.q_dim_max * ub * _F32
    n_kv_max = c.cells if shape.has_full_attention else c.swa_cells
    mask_cells = _mask_cells(shape, c)
    # On the GPU, and on the CPU of a CPU-only load, the masks flash attention reads are F16 (the
    # input, or the cast of older builds), F32 without it.
    masks = mask_cells * ub * (2 if c.flash_attn else 4)
    moe = shape.n_expert_used * shape.n_ff_exp * ub * _F32 if shape.n_expert else 0

    logits = shape.n_vocab * c.n_outputs * _F32
    # After the last block only the output rows go on: the tensors there shrink with them.
    # Interleaved sliding-window models keep two more hidden-sized tensors live here. The masks'
    # last reader is the last attention layer, so they are free by now. In hybrid recurrent
    # models logits larger than the masks' freed block go above it (ggml-alloc.c: best fit among
    # the free blocks, else the end), which the dry runs show as the masks still counted.
    swa_extra = 2 * h if shape.has_swa else 0
    rows = (2 * q + moe + swa_extra) * c.n_outputs / ub
    output = logits + rows + (masks if shape.rec_layers and logits > masks else 0)

    if shape.n_expert:
        # Up, gate and their product live at once; or the experts' outputs, weighted, with the
        # product they came from.
        e = shape.n_embd * shape.n_expert_used * ub * _F32
        ffn = max(3 * moe + 4 * h, 2 * e + moe + h + q)
    else:
        # A query-sized tensor of the attention is still live in blocks that have attention;
        # without flash attention interleaved sliding-window models keep three more.
        live_q = 0 if shape.rec_layers else 4 if shape.has_swa and not c.flash_attn else 1
        ffn = 3 * shape.n_ff_max * ub * _F32 + 3 * h + live_q * q
    ffn += masks
    layers: float = ffn
    if shape.rec_layers and ub <= 64 * c.n_seq:
        # Recurrent blocks with at most 64 tokens per sequence (measured on qwen35 shapes): the
        # convolution's input and output, and each sequence's state, read and written.
        per_token = 3 * shape.rs_conv_dim + 3 * shape.n_embd
        per_seq = 1.8 * shape.rs_state_floats + 2 * (shape.rs_floats - shape.rs_state_floats)
        layers = max(layers, (per_token * ub + per_seq * c.n_seq) * _F32 + masks)
    attn = 0.0
    if shape.kv_layers and not c.flash_attn:
        kq = n_kv_max * ub * shape.n_head_max * _F32
        attn = kq + masks + 2 * h + 3 * q + (3 * h if shape.has_swa else 0)
        layers = max(layers, attn)
    elif shape.kv_layers:
        # Flash attention reads F16: an F32 cache is cast by the graph (llama-graph.cpp: build_attn_mha)
        # and, on a GPU, CUDA converts the other types (EngineRules.cuda_fa_f16_scratch); every cell of
        # the widest layer. Without a conversion this phase is below the FFN's.
        convert_k = c.cast_k or (gpu and c.scratch_k)
        convert_v = c.cast_v or (gpu and c.scratch_v)
        width = (shape.k_max if convert_k else 0) + (shape.v_max if convert_v else 0)
        attn = n_kv_max * c.n_stream * width * 2 + masks + 2 * h + 2 * q
        if width:
            layers = max(layers, attn)
    cast = 0.0
    if gpu and c.mask_cast and mask_cells:
        # The F32 mask copied from the host and its F16 cast, with the first attention's inputs.
        cast = mask_cells * ub * (4 + 2) + 2 * h + 2 * q
    return _Phases(output=output, layers=layers, ffn=ffn, attn=attn, cast=cast)


def _host_inputs(shape: ModelShape, c: _Context) -> float:
    """The graph inputs in host memory: the embedded tokens (token_embd stays on the host, and a row
    lookup is never offloaded) and the masks, F16 with flash attention or F32 (EngineRules.fa_mask_f16).
    This is the CUDA_Host compute buffer of a load whose layers all run on GPUs."""
    return shape.n_embd * c.n_ubatch * _F32 + _mask_cells(shape, c) * c.n_ubatch * c.host_mask_elt


def cuda_overhead_mib(device: Device) -> float:
    """CUDA context + cuBLAS/runtime workspace llama.cpp's process holds on a card.

    An assumption, not a measurement: ~200 MiB base plus ~3 MiB per SM, which gives ~440 MiB on a
    V100 (80 SMs), ~320 MiB on a T4 and ~580 MiB on a 4090. Unknown SM count: 400 MiB. Plus what loads on
    this card measured beyond the plan (``Device.overhead_correction_mib``), where the window learned it.
    """
    base = 400.0 if device.sm_count is None else 200.0 + 3.0 * device.sm_count
    return max(0.0, base + device.overhead_correction_mib)


# ---- placement -------------------------------------------------------------------------------


def _gpu_layers(settings: LoadSettings, n_layer: int, n_devices: int) -> int:
    if n_devices == 0:
        return 0
    if settings.n_gpu_layers >= ALL_LAYERS or settings.n_gpu_layers < 0:
        return n_layer + 1
    return min(settings.n_gpu_layers, n_layer + 1)


def _f32(x: float) -> float:
    """x rounded to a C float, as llama.cpp computes the split points."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


# Why the split mode "row" cannot be planned: the loader asks each device's backend for a split buffer type
# (llama-model.cpp: make_gpu_buft_list, "does not support split buffers"), and the CUDA backend of the vendored
# llama.cpp has none (ggml-cuda.cu: ggml_backend_cuda_reg_get_proc_address offers no
# "ggml_backend_split_buffer_type"; only the SYCL and Hexagon backends do). Neither has the RPC backend.
ROW_SPLIT_REFUSED = words(
    "split mode row: the CUDA backend of the bundled llama.cpp has no row-split buffers, so the load fails "
    '("does not support split buffers"); use --split-mode layer'
)


@dataclass(frozen=True)
class _Split:
    """How llama.cpp spreads the GPU layers over the devices: which devices it uses, and the split points."""

    used: tuple[bool, ...]  # per device: in llama.cpp's device list (split mode none keeps only the main GPU)
    points: tuple[float, ...]  # cumulative, normalized proportions of the used devices, as C floats
    note: Text = ""  # a Words when there is one
    by_memory: bool = False  # the proportions are the devices' free memory


def _split(s: LoadSettings, devices: Sequence[Device]) -> _Split:
    """llama.cpp's device list and split points (llama.cpp: llama_prepare_model_devices; llama-model.cpp:
    load_tensors, "calculate the split points").

    Split mode none keeps only devices[main_gpu] (a main GPU past the list fails the load). Otherwise every
    device, with the tensor split's proportions; where it gives none, or only zeros for these devices (a longer
    list's entries past the device count are not read), each device's free memory. The proportions are summed
    and normalized in C floats.
    """
    n = len(devices)
    if n == 0:
        return _Split((), ())
    if s.split_mode == "none":
        if s.main_gpu >= n:
            figures = {"gpu": s.main_gpu, "n": n, "last": n - 1}
            refused = (
                words("main GPU {gpu} is not one of the {n} GPUs (0-{last}): llama.cpp refuses the load", **figures)
                if n > 1
                else words("main GPU {gpu} is not one of the {n} GPU (0-{last}): llama.cpp refuses the load", **figures)
            )
            raise ValueError(refused)
        return _Split(tuple(i == s.main_gpu for i in range(n)), (1.0,))
    if s.split_mode == "row":
        raise ValueError(ROW_SPLIT_REFUSED)
    given = split_proportions(s.tensor_split)
    weights = [_f32(v) for v in given[:n]] + [0.0] * max(0, n - len(given))
    note: Text = ""
    if len(given) > n:
        note = words("the tensor split names {given} devices; llama.cpp reads the first {n}", given=len(given), n=n)
    by_memory = not any(weights)
    if by_memory:
        # By free memory (ggml_backend_dev_memory), in bytes converted to float.
        weights = [_f32(max(d.free_mib, 0.0) * MiB) for d in devices]
        if given:
            note = words("the tensor split gives these {n} GPUs nothing: llama.cpp splits by free memory instead", n=n)
    if not any(weights):
        weights = [1.0] * n
    total = 0.0
    cumulative = []
    for w in weights:
        total = _f32(total + w)
        cumulative.append(total)
    return _Split((True,) * n, tuple(_f32(c / total) for c in cumulative), note, by_memory)


def _placement(n_layer: int, ngl: int, split: _Split) -> list[int]:
    """Where each GPU's slots begin: slots are the blocks 0..n_layer-1 and, last, the output layer
    (slot n_layer); device d holds slots [first[d], first[d + 1]), the host those before first[0]
    (first has len(devices) + 1 entries, the last n_layer + 1). A device llama.cpp does not use holds none.

    llama-model.cpp (load_tensors, get_layer_buft_list): i_gpu_start = max(n_layer + 1 - ngl, 0),
    act_gpu_layers = min(ngl, n_layer + 1); slot il goes to the used device
    upper_bound(splits, float(il - i_gpu_start) / act_gpu_layers), splits being the cumulative proportions.
    """
    end = n_layer + 1
    n_dev = len(split.used)
    if ngl <= 0 or not n_dev:
        return [end] * (n_dev + 1)
    start = max(n_layer + 1 - ngl, 0)
    act = min(ngl, n_layer + 1)
    points = split.points
    used = [i for i, u in enumerate(split.used) if u]

    def device_of(slot: int) -> int:  # the index among the used devices
        return bisect.bisect_right(points, _f32(_f32(float(slot - start)) / act))

    # The first slot of each used device: the device only grows with the slot, so a binary search each.
    first_used = [start]
    for k in range(1, len(used)):
        lo, hi = first_used[-1], end
        while lo < hi:
            mid = (lo + hi) // 2
            if device_of(mid) >= k:
                hi = mid
            else:
                lo = mid + 1
        first_used.append(lo)
    first_used.append(end)
    # Devices outside llama.cpp's list hold an empty run where the next used device starts.
    first: list[int] = []
    k = 0
    for d in range(n_dev):
        first.append(first_used[k])
        if split.used[d]:
            k += 1
    return [*first, end]


# ---- the plan -------------------------------------------------------------------------------


@dataclass
class _Tally:
    weights: int = 0
    kv: int = 0
    rs: int = 0
    compute: float = 0.0
    staged: float = 0.0  # what op offload's copies of host-resident weights and KV add to the compute buffer
    output: int = 0
    layers: int = 0
    has_output: bool = False
    read_bytes: float = 0.0
    expert_layers: int = 0  # host: blocks on a GPU whose experts stay here
    expert_bytes: int = 0
    first_block: int = 0
    used: bool = True  # a GPU in llama.cpp's device list (see _split)


# A tensor buffer-type override as llama.cpp's -ot takes it: a regular expression searched in each tensor
# name, and the buffer: "CPU" (host memory) or "CUDA<n>" (the n-th GPU).
TensorOverride = tuple[str, str]


DEFAULT_LINK = NetworkLink()


@dataclass(frozen=True)
class _Env:
    """What a plan follows besides the settings: the engine's rules and tensor overrides (compiled, with
    their target: -1 for host memory, else the GPU's index)."""

    rules: EngineRules = VENDORED_RULES
    overrides: tuple[tuple[re.Pattern[str], int], ...] = ()
    link: NetworkLink = DEFAULT_LINK  # to the RPC servers


_ENV = _Env()


def _env(
    rules: EngineRules, overrides: Sequence[TensorOverride], n_devices: int, link: NetworkLink | None = None
) -> _Env:
    if rules == VENDORED_RULES and not overrides and (link is None or link == _ENV.link):
        return _ENV
    compiled: list[tuple[re.Pattern[str], int]] = []
    for pattern, buffer in overrides:
        if buffer.upper().startswith("CPU"):
            target = -1
        elif (m := re.fullmatch(r"CUDA(\d+)", buffer)) is not None and int(m.group(1)) < n_devices:
            target = int(m.group(1))
        else:
            raise ValueError(
                words(
                    "tensor override {pattern}={buffer}: the buffer must be CPU or CUDA0..CUDA{last}",
                    pattern=pattern,
                    buffer=buffer,
                    last=n_devices - 1,
                )
            )
        try:
            compiled.append((re.compile(pattern), target))
        except re.error as exc:
            error = words("tensor override {pattern}={buffer}: {error}", pattern=pattern, buffer=buffer, error=exc)
            raise ValueError(error) from exc
    return _Env(rules, tuple(compiled), link.validated() if link is not None else _ENV.link)


def _tally(
    shape: ModelShape, s: LoadSettings, devices: Sequence[Device], env: _Env = _ENV
) -> tuple[list[_Tally], _Tally, _Context]:
    n = shape.n_layer
    ngl = _gpu_layers(s, n, len(devices))
    # Blocks on a GPU when i_gpu_start = n_layer + 1 - ngl is below n_layer.
    c = _context(shape, s, env.rules, gpus=bool(devices), gpu_layers=ngl >= 2)
    sums = shape.sums
    split = _split(s, devices)
    first_used = next((d for d, used in enumerate(split.used) if used), None)
    if c.offload and first_used is not None and devices[first_used].remote:
        # The RPC backend offloads no operation (ggml-rpc.cpp: its device's offload_op is NULL, and
        # ggml_backend_dev_offload_op says no), so with an RPC device first nothing is staged: the CPU computes
        # the host's blocks.
        c = replace(c, offload=False)
    first = _placement(n, ngl, split)
    gpus = [_Tally(first_block=min(first[d], n), used=split.used[d]) for d in range(len(devices))]
    host = _Tally()
    rs_layer = _rs_bytes_per_layer(shape, c)
    cpu_experts = s.cpu_expert_layers(n)

    def take(t: _Tally, lo: int, hi: int) -> None:
        """Blocks lo..hi-1 onto ``t``."""
        t.weights += int(sums.weights[hi] - sums.weights[lo])
        t.read_bytes += sums.read[hi] - sums.read[lo]
        t.kv += _kv_bytes(shape, c, s, lo, hi)
        t.rs += int(sums.recurrent[hi] - sums.recurrent[lo]) * rs_layer

    take(host, 0, min(first[0], n))
    for d, t in enumerate(gpus):
        lo, hi = first[d], min(first[d + 1], n)
        if lo >= hi:
            continue
        take(t, lo, hi)
        t.layers = hi - lo
        moved = min(hi, cpu_experts)
        if lo < moved:
            # --n-cpu-moe / --cpu-moe: these blocks' expert tensors stay in host memory; the rest
            # (attention, router, shared experts, norms) is on the blocks' GPU.
            experts = int(sums.experts[moved] - sums.experts[lo])
            read = sums.experts_read[moved] - sums.experts_read[lo]
            t.weights -= experts
            t.read_bytes -= read
            host.weights += experts
            host.read_bytes += read
            host.expert_layers += moved - lo
            host.expert_bytes += experts
    on_gpu = first[0] <= n
    out_index = bisect.bisect_right(first, n) - 1 if on_gpu else -1
    out = gpus[out_index] if on_gpu else host
    out.has_output = True
    out.weights += shape.output_bytes
    out.read_bytes += shape.output_bytes
    if on_gpu:
        # A tied output matrix is token_embd, duplicated onto the GPU; on the host it is shared.
        out.weights += shape.tied_output_bytes
    out.read_bytes += shape.tied_output_bytes
    host.weights += shape.embd_bytes + shape.other_bytes
    host.read_bytes += shape.embd_row_bytes  # a lookup: one row per token
    host_dense = host_expert = 0  # the largest block tensors overrides leave in host memory
    if env.overrides:
        host_dense, host_expert = _apply_overrides(shape, env, first, cpu_experts, out_index, gpus, host)

    # Output buffer: logits for n_seq outputs, in host memory (pinned when a GPU is used).
    host.output = shape.n_vocab * c.n_seq * _F32

    if devices:
        # llama_context: pipeline parallelism when several devices hold every layer, split by layer, with the KV
        # cache on them and no tensor overrides (--n-cpu-moe and --cpu-moe are overrides).
        pipeline = (
            sum(split.used) > 1
            and ngl >= n + 1
            and s.split_mode == "layer"
            and not env.overrides
            and not s.cpu_moe
            and s.n_cpu_moe == 0
        )
        _gpu_compute(shape, s, c, first, cpu_experts, gpus, host, max(host_dense, host_expert), pipeline=pipeline)
    else:
        cpu = _phases(shape, c, gpu=False)
        host.compute = max(cpu.layers, cpu.output)
    return gpus, host, c


def _apply_overrides(
    shape: ModelShape,
    env: _Env,
    first: list[int],
    cpu_experts: int,
    out_index: int,
    gpus: list[_Tally],
    host: _Tally,
) -> tuple[int, int]:
    """Move the tensors an override names (llama-model-loader.cpp: the first matching pattern wins).

    Returns the largest dense and expert block tensors left in host memory by them."""
    n = shape.n_layer
    host_dense = host_expert = 0

    def tally(i: int) -> _Tally:
        return host if i < 0 else gpus[i]

    for name, il, nbytes, read in shape.tensors:
        target = next((t for pattern, t in env.overrides if pattern.search(name)), None)
        if target is None:
            continue
        expert = il >= 0 and _EXPERTS.match(name.split(".", 2)[2]) is not None
        if il >= 0:
            base = -1 if il < first[0] or (expert and il < cpu_experts) else bisect.bisect_right(first, il) - 1
            base = min(base, len(gpus) - 1)
        elif il == -1:
            base = out_index
        else:
            base = -1
        if target < 0 and 0 <= il < n:
            if expert:
                host_expert = max(host_expert, nbytes)
            else:
                host_dense = max(host_dense, nbytes)
        if base == target:
            continue
        tally(base).weights -= nbytes
        tally(base).read_bytes -= read
        tally(target).weights += nbytes
        tally(target).read_bytes += read
        if name == "output.weight":
            # The output layer is computed where its matrix is.
            tally(base).has_output = False
            tally(target).has_output = True
    return host_dense, host_expert


def _gpu_compute(
    shape: ModelShape,
    s: LoadSettings,
    c: _Context,
    first: list[int],
    cpu_experts: int,
    gpus: list[_Tally],
    host: _Tally,
    host_override_max: int,
    *,
    pipeline: bool = False,
) -> None:
    """Every backend's compute buffer with GPUs, and what op offload stages on the first GPU.

    With op offload (ggml-backend.cpp: ggml_backend_sched_backend_id_from_cur), an operation that reads
    a weight in host memory runs on the first GPU that accepts it when it has at least 32 rows
    (ggml-cuda.cu: offload_op): every matrix product of a prompt batch, the output layer's only when
    n_outputs reaches 32. The scheduler copies the weight into that GPU's compute buffer at the start
    of the operation's split and frees it after (one split per such weight: pass 5, need_new_split).
    The attention of a host block follows its neighbours onto the GPU (pass 2) and reads that block's
    K and V cache through copies too: the GPU cannot use host buffers (supports_buft). Without op
    offload, or at smaller batches, the CPU computes those blocks and its buffer holds their phases.

    The first GPU is the first of llama.cpp's devices (with split mode none, the main GPU). With pipeline
    parallelism the scheduler keeps _SCHED_COPIES copies of every split input (ggml-backend.cpp: pass 4 and
    pass 6, n_copies > 1), each marked input and output so that ggml-alloc never reuses it: a GPU's inputs are
    the hidden state from the device before it and the masks from the host, the host's its graph inputs. The
    planner adds every copy on top of the phases (an upper bound: one copy is already counted in them).
    """
    n = shape.n_layer
    sums = shape.sums
    gpu = _phases(shape, c, gpu=True)
    host_blocks = min(first[0], n)
    with_experts = max(host_blocks, min(cpu_experts, n))
    staged_weight = max(sums.dense_max[host_blocks], sums.expert_max[with_experts], host_override_max)
    staged_kv = _kv_layer_max(shape, c, s, 0, host_blocks)
    output_offloaded = host.has_output and c.n_outputs >= _OFFLOAD_MIN_BATCH
    cast_done = False
    first_gpu = next((d for d, t in enumerate(gpus) if t.used), 0)
    copies = _pipeline_inputs(shape, c) * _SCHED_COPIES if pipeline else 0.0
    for d, t in enumerate(gpus):
        if not t.used:
            continue
        runs_layers = t.layers > 0
        runs_output = t.has_output
        if d == first_gpu and c.offload:
            runs_layers = runs_layers or staged_weight > 0
            runs_output = runs_output or output_offloaded
        base = max(gpu.layers if runs_layers else 0.0, gpu.output if runs_output else 0.0)
        if runs_layers and not cast_done:
            # The mask's cast runs with the first attention, on the first GPU that computes layers.
            base = max(base, gpu.cast)
            cast_done = True
        t.compute = base + (copies if runs_layers or runs_output else 0.0)
        if d == first_gpu and c.offload:
            peak = max(
                staged_weight + gpu.ffn if staged_weight else 0.0,
                staged_kv + gpu.attn if staged_kv else 0.0,
                shape.output_matrix_bytes + gpu.output if output_offloaded else 0.0,
            )
            t.staged = max(0.0, peak - base)
    # The host's buffer holds the graph inputs, and the phases of whatever the CPU computes.
    cpu = _phases(shape, c, gpu=False)
    host.compute = _host_inputs(shape, c) * (_SCHED_COPIES if pipeline else 1)
    if not c.offload:
        if staged_weight:  # blocks, or experts, in host memory are computed there
            host.compute = max(host.compute, cpu.layers)
        if host.has_output:
            host.compute = max(host.compute, cpu.output)
    elif host.has_output and not output_offloaded:
        host.compute = max(host.compute, cpu.output)


# ggml-backend.cpp: GGML_SCHED_MAX_COPIES, the copies of each input the scheduler keeps with pipeline parallelism.
_SCHED_COPIES = 4


def _pipeline_inputs(shape: ModelShape, c: _Context) -> float:
    """What a GPU copies in per micro-batch with pipeline parallelism: the hidden state and the masks (F16 with
    flash attention, F32 without, as the GPU reads them)."""
    return shape.n_embd * c.n_ubatch * _F32 + _mask_cells(shape, c) * c.n_ubatch * (2 if c.flash_attn else 4)


def _verdict(free_after: float, margin: float) -> Verdict:
    if free_after < 0:
        return Verdict.WONT_FIT
    if free_after < margin:
        return Verdict.TIGHT
    return Verdict.FITS


def _evaluate(
    shape: ModelShape, s: LoadSettings, devices: Sequence[Device], margin: float, env: _Env = _ENV
) -> list[float]:
    """free_after_mib per device: the inner loop of every search."""
    gpus, _, _ = _tally(shape, s, devices, env)
    return [
        d.free_mib - ((t.weights + t.kv + t.rs) / MiB + (t.compute + t.staged) / MiB + _overhead(d, t))
        for d, t in zip(devices, gpus, strict=True)
    ]


def _overhead(device: Device, t: _Tally) -> float:
    """The CUDA context of a device llama.cpp uses; none on one it leaves alone (split mode none), and none on an
    RPC server's device: its server made its backends when it started (ggml_backend_rpc_start_server), before it
    said how much memory is free."""
    return cuda_overhead_mib(device) if t.used and not device.remote else 0.0


def _fits(shape: ModelShape, s: LoadSettings, devices: Sequence[Device], margin: float, env: _Env = _ENV) -> bool:
    return all(f >= margin for f in _evaluate(shape, s, devices, margin, env))


def _speed(
    shape: ModelShape, gpus: list[_Tally], host: _Tally, devices: Sequence[Device], ram_bandwidth_gbs: float | None
) -> float | None:
    """Decode ceiling: every byte a token reads, at each memory's bandwidth (GB = 10^9 bytes)."""
    seconds = 0.0
    for d, t in zip(devices, gpus, strict=True):
        if t.read_bytes <= 0:
            continue
        if not d.bandwidth_gbs:
            return None
        seconds += t.read_bytes / (d.bandwidth_gbs * 1e9)
    if ram_bandwidth_gbs:
        seconds += host.read_bytes / (ram_bandwidth_gbs * 1e9)
    elif host.read_bytes > shape.embd_row_bytes:
        # Weights are read from host memory and its bandwidth is unknown. (The embedding row
        # alone is negligible and is left out when the RAM figure is missing.)
        return None
    return 1.0 / seconds if seconds > 0 else None


def _link(shape: ModelShape, gpus: list[_Tally], devices: Sequence[Device], link: NetworkLink) -> tuple[int, float]:
    """The network hops of one decoded token with RPC devices, and their seconds (docs/rpc.md).

    A token goes from this machine (the embedding lookup, and any blocks left on the CPU) through each device
    that holds blocks, in device order, and its logits come back here. Each boundary carries the hidden state,
    n_embd float32 values; the last, from the output layer's device, the logits, n_vocab float32 values. A
    boundary costs bytes / bandwidth + one round trip when either side is a remote device; between two devices
    of one server the server copies (one round trip, no payload: ggml-rpc.cpp RPC_CMD_COPY_TENSOR); between
    two servers the data passes through this machine (two hops)."""
    path: list[str] = [""]  # "" for this machine's host and GPUs, else the RPC server
    for d, t in zip(devices, gpus, strict=True):
        if t.used and (t.layers or t.has_output):
            path.append(d.remote)
    path.append("")
    bandwidth, rtt = link.figures()
    hops, seconds = 0, 0.0
    for i in range(1, len(path)):
        a, b = path[i - 1], path[i]
        if not a and not b:
            continue
        nbytes = (shape.n_vocab if i == len(path) - 1 else shape.n_embd) * _F32
        if a and b and a == b:
            hops, seconds = hops + 1, seconds + rtt
        else:
            n = 2 if a and b else 1
            hops, seconds = hops + n, seconds + n * (nbytes / bandwidth + rtt)
    return hops, seconds


def plan(
    header: GGUFHeader,
    settings: LoadSettings,
    devices: Sequence[Device],
    *,
    margin_mib: float = MARGIN.default,
    ram_bandwidth_gbs: float | None = None,
    suggest: bool = True,
    rules: EngineRules = VENDORED_RULES,
    tensor_overrides: Sequence[TensorOverride] = (),
    link: NetworkLink | None = None,
) -> Plan:
    """Where every MiB goes for ``settings`` on ``devices`` (empty: a CPU-only load).

    With ``suggest``, a plan that does not fit, or fits with part of the model in host memory,
    comes with the changes that would help (searching them costs a few dozen more evaluations).
    ``rules`` and ``tensor_overrides`` plan loads made by other llama.cpp builds and command lines:
    the rules of an older build, and llama.cpp's ``-ot`` overrides (applied after --n-cpu-moe's
    placement, which they take precedence over, as in llama.cpp). ``link``: the network to the devices of RPC
    servers (``Device.remote``), for the decode speed (default: 1 GbE).
    """
    shape = model_shape(header)
    env = _env(rules, tensor_overrides, len(devices), link)
    return _plan(shape, settings, tuple(devices), margin_mib, ram_bandwidth_gbs, with_suggestions=suggest, env=env)


def _plan(
    shape: ModelShape,
    s: LoadSettings,
    devices: tuple[Device, ...],
    margin: float,
    ram_bw: float | None,
    *,
    with_suggestions: bool,
    env: _Env = _ENV,
) -> Plan:
    gpus, host, c = _tally(shape, s, devices, env)
    dplans: list[DevicePlan] = []
    for d, t in zip(devices, gpus, strict=True):
        overhead = _overhead(d, t)
        needed = (t.weights + t.kv + t.rs) / MiB + (t.compute + t.staged) / MiB + overhead
        free_after = d.free_mib - needed
        dplans.append(
            DevicePlan(
                name=d.name,
                total_mib=d.total_mib,
                free_mib=d.free_mib,
                other_mib=d.total_mib - d.free_mib,
                weights_mib=t.weights / MiB,
                kv_mib=t.kv / MiB,
                recurrent_mib=t.rs / MiB,
                compute_mib=t.compute / MiB,
                staged_mib=t.staged / MiB,
                output_mib=0.0,
                overhead_mib=overhead,
                needed_mib=needed,
                free_after_mib=free_after,
                margin_mib=margin,
                verdict=_verdict(free_after, margin),
                layers=t.layers,
                has_output=t.has_output,
                first_block=t.first_block,
                in_use=t.used,
                remote=d.remote,
            )
        )
    hb = Breakdown(
        weights_mib=host.weights / MiB,
        kv_mib=host.kv / MiB,
        recurrent_mib=host.rs / MiB,
        compute_mib=host.compute / MiB,
        output_mib=host.output / MiB,
    )
    verdict = max((p.verdict for p in dplans), key=lambda v: v.rank, default=Verdict.FITS)
    fits = verdict is Verdict.FITS
    all_t = [*gpus, host]
    notes = _notes(shape, s, c, devices, gpus, host)
    hops, link_s = _link(shape, gpus, devices, env.link) if any(d.remote for d in devices) else (0, 0.0)
    memory_tok_s = _speed(shape, gpus, host, devices, ram_bw)
    p = Plan(
        devices=tuple(dplans),
        host=hb,
        weights_mib=sum(t.weights for t in all_t) / MiB,
        kv_mib=sum(t.kv for t in all_t) / MiB,
        recurrent_mib=sum(t.rs for t in all_t) / MiB,
        compute_mib=sum(t.compute for t in all_t) / MiB,
        staged_mib=sum(t.staged for t in gpus) / MiB,
        layers_on_gpu=sum(t.layers for t in gpus) + (1 if any(t.has_output for t in gpus) else 0),
        n_layer=shape.n_layer,
        fits=fits,
        verdict=verdict,
        predicted_tg_tok_s=1.0 / (1.0 / memory_tok_s + link_s) if memory_tok_s and link_s else memory_tok_s,
        notes=notes,
        suggestions=(),
        weights_bytes=sum(t.weights for t in all_t),
        settings=s,
        cpu_expert_layers=host.expert_layers,
        link_hops=hops,
        link_ms_per_token=link_s * 1000,
    )
    if with_suggestions and devices and (not fits or p.partial):
        p = replace(p, suggestions=_suggestions(shape, s, devices, margin, ram_bw, p, env))
    return p


def _notes(
    shape: ModelShape, s: LoadSettings, c: _Context, devices: Sequence[Device], gpus: list[_Tally], host: _Tally
) -> tuple[Text, ...]:
    """What the figures alone do not say, one sentence each (gui/core/words.py: the window translates them)."""
    notes: list[Text] = []
    if shape.rec_layers:
        notes.append(
            words(
                "{kv} of {n} blocks use attention KV; {recurrent} keep a fixed recurrent state per sequence",
                kv=len(shape.kv_layers),
                n=shape.n_layer,
                recurrent=len(shape.rec_layers),
            )
        )
    if shape.has_swa and not s.swa_full:
        notes.append(
            words("sliding-window layers keep {cells} cells (window {window})", cells=c.swa_cells, window=shape.n_swa)
        )
    if c.n_seq > 1 and s.kv_unified:
        notes.append(words("{n} parallel slots share one cache of {cells} cells", n=c.n_seq, cells=c.cells))
    elif c.n_seq > 1:
        notes.append(words("{n} parallel slots: each sequence gets {cells} cells of context", n=c.n_seq, cells=c.cells))
    if host.expert_layers:
        notes.append(
            words(
                "the experts of {blocks} blocks stay in host memory ({gib} GiB); their attention is on the GPU",
                blocks=host.expert_layers,
                gib=f"{host.expert_bytes / (1 << 30):.2f}",
            )
        )
    if shape.tied_output_bytes and any(t.has_output for t in gpus):
        notes.append(words("the output layer shares token_embd; the GPU holds its own copy of it"))
    if not devices:
        notes.append(words("CPU-only: everything is in host memory"))
    elif len(devices) > 1:
        split = _split(s, devices)
        if s.split_mode == "none":
            notes.append(
                words(
                    "split mode none: the model is on GPU {gpu} ({name}) alone",
                    gpu=s.main_gpu,
                    name=devices[s.main_gpu].name,
                )
            )
        else:
            how = words("free memory") if split.by_memory else words("the tensor split {split}", split=s.tensor_split)
            notes.append(words("layers split over {n} GPUs by {how}", n=len(devices), how=how))
        if split.note:
            notes.append(split.note)
    if devices and s.n_ctx > 0 and shape.ctx_train and s.n_ctx > shape.ctx_train:
        notes.append(words("context {ctx} is past the trained {trained}", ctx=s.n_ctx, trained=shape.ctx_train))
    return tuple(notes)


# ---- suggestions and auto-fit -------------------------------------------------------------------


def _max_gpu_layers(
    shape: ModelShape, s: LoadSettings, devices: Sequence[Device], margin: float, env: _Env = _ENV
) -> int:
    """Most layers (llama.cpp count, 0..n_layer+1) that fit; fitting shrinks as layers grow."""
    lo, hi = 0, shape.n_layer + 1
    if not _fits(shape, s.with_values(n_gpu_layers=lo), devices, margin, env):
        return -1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _fits(shape, s.with_values(n_gpu_layers=mid), devices, margin, env):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _max_ctx(
    shape: ModelShape, s: LoadSettings, devices: Sequence[Device], margin: float, top: int, env: _Env = _ENV
) -> int | None:
    """Largest context (a multiple of 256, at least 256) that fits, or None."""
    step = CONTEXT.step
    lo, hi = 1, max(1, top // step)
    if not _fits(shape, s.with_values(n_ctx=lo * step), devices, margin, env):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _fits(shape, s.with_values(n_ctx=mid * step), devices, margin, env):
            lo = mid
        else:
            hi = mid - 1
    return lo * step


def _experts_movable(shape: ModelShape, s: LoadSettings, pinned: frozenset[str] = frozenset()) -> bool:
    """Whether a search may choose how many blocks keep their experts in host memory."""
    return any(shape.expert_bytes) and not s.cpu_moe and "n_cpu_moe" not in pinned


def _fit_experts(
    shape: ModelShape, s: LoadSettings, devices: Sequence[Device], margin: float, env: _Env = _ENV
) -> LoadSettings:
    """llama.cpp's --fit order for MoE models (common/fit.cpp): attention and dense weights of every
    layer on the GPUs first, with all experts in host memory; then as many blocks' experts back on
    the GPUs as fit. When not even the dense weights of every layer fit, the most layers that do,
    with their experts in host memory. Returns the settings with n_gpu_layers and n_cpu_moe chosen."""
    n = shape.n_layer
    every = s.with_values(n_gpu_layers=ALL_LAYERS)
    if _fits(shape, every.with_values(n_cpu_moe=0), devices, margin, env):
        return every.with_values(n_cpu_moe=0)
    if not _fits(shape, every.with_values(n_cpu_moe=n), devices, margin, env):
        dense = s.with_values(n_cpu_moe=n)
        return dense.with_values(n_gpu_layers=max(_max_gpu_layers(shape, dense, devices, margin, env), 0))
    lo, hi = 1, n  # fewest leading blocks whose experts go to host memory: fitting grows with it
    while lo < hi:
        mid = (lo + hi) // 2
        if _fits(shape, every.with_values(n_cpu_moe=mid), devices, margin, env):
            hi = mid
        else:
            lo = mid + 1
    return every.with_values(n_cpu_moe=lo)


def _suggestions(
    shape: ModelShape,
    s: LoadSettings,
    devices: Sequence[Device],
    margin: float,
    ram_bw: float | None,
    current: Plan,
    env: _Env = _ENV,
) -> tuple[Text, ...]:
    """What would make the plan fit or, when it fits with part of the model in host memory, put more
    on the GPU: each change with the MiB it frees on the fullest card and what that then allows."""
    out: list[Text] = []
    n_all = shape.n_layer + 1
    ngl = _gpu_layers(s, shape.n_layer, len(devices))
    short = not current.fits
    fullest = min(range(len(devices)), key=lambda i: current.devices[i].free_after_mib)
    before = current.devices[fullest].free_after_mib
    movable = _experts_movable(shape, s)
    # Every layer on the GPUs with the fewest blocks' experts in host memory, as auto-fit places a MoE model.
    placed = _fit_experts(shape, s, devices, margin, env) if movable else s
    experts_now = placed.cpu_expert_layers(shape.n_layer)

    def ceiling(alt: LoadSettings) -> Text:
        """The decode ceiling with ``alt``, as the end of a suggestion ('' when it is not known)."""
        p = _plan(shape, alt, tuple(devices), margin, ram_bw, with_suggestions=False, env=env)
        return (
            words(", decode ceiling ~{rate} tok/s", rate=f"{p.predicted_tg_tok_s:.0f}") if p.predicted_tg_tok_s else ""
        )

    def offer(what: Words, alt: LoadSettings) -> None:
        free = _evaluate(shape, alt, devices, margin, env)
        freed = free[fullest] - before
        if freed < 1:
            return
        then: Words | None = None
        if all(f >= margin for f in free):
            then = words("fits") if short else None
            if ngl < n_all:
                layers = _max_gpu_layers(shape, alt, devices, margin, env)
                if layers >= n_all:
                    then = words("then all of {n} layers fit", n=n_all)
                elif layers > ngl:
                    then = words("then {layers} of {n} layers fit", layers=layers, n=n_all)
            elif movable and current.cpu_expert_layers:
                fewer = _fit_experts(shape, alt, devices, margin, env).cpu_expert_layers(shape.n_layer)
                if fewer < experts_now:
                    then = words("then only {blocks} blocks' experts need host memory", blocks=fewer)
        elif short:
            then = words("not enough on its own")
        mib = f"{freed:,.0f}"
        if then is None:
            out.append(words("{change}: \u2212{mib} MiB", change=what, mib=mib))
        else:
            out.append(words("{change}: \u2212{mib} MiB, {then}", change=what, mib=mib, then=then))

    if short:
        best = _max_gpu_layers(shape, s, devices, margin, env)
        if 0 <= best < ngl:
            fewer = s.with_values(n_gpu_layers=best)
            out.append(
                words(
                    "Put {layers} of {n} layers on the GPU (--ngl {layers}) to keep the margin{ceiling}",
                    layers=best,
                    n=n_all,
                    ceiling=ceiling(fewer),
                )
            )
    if (
        movable
        and experts_now != s.cpu_expert_layers(shape.n_layer)
        and placed.n_gpu_layers >= ALL_LAYERS
        and _fits(shape, placed, devices, margin, env)
    ):
        # More experts in host memory to fit, or fewer when there is room (and every layer back on
        # the GPU when some are not).
        flags = f"--n-cpu-moe {experts_now}" + ("" if ngl >= n_all else f" --ngl {n_all}")
        where = (
            words("the experts of {blocks} blocks in host memory", blocks=experts_now)
            if experts_now
            else words("every expert")
        )
        out.append(
            words(
                "Every layer on the GPU with {where} ({flags}){ceiling}",
                where=where,
                flags=flags,
                ceiling=ceiling(placed),
            )
        )
    if short:
        ctx = _max_ctx(shape, s, devices, margin, min(s.n_ctx, shape.ctx_train or s.n_ctx) - 1, env)
    else:
        ctx = s.n_ctx // 2 // CONTEXT.step * CONTEXT.step
    if ctx is not None and CONTEXT.minimum <= ctx < s.n_ctx:
        offer(words("Context {ctx} (--ctx {ctx})", ctx=ctx), s.with_values(n_ctx=ctx))
    if s.cache_type_k in FLOAT_CACHE_TYPES or s.cache_type_v in FLOAT_CACHE_TYPES:
        fa = " --flash-attn on" if s.flash_attn == "off" else ""
        q8 = s.with_values(cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on" if fa else s.flash_attn)
        offer(words("q8_0 KV cache (--cache-type-k q8_0 --cache-type-v q8_0{flags})", flags=fa), q8)
    if s.outputs_max == 0 or s.outputs_max > s.n_parallel:
        one = s.with_values(n_outputs_max=s.n_parallel)
        offer(words("Room for one output per slot (--n-outputs-max {n})", n=s.n_parallel), one)
    if s.n_parallel > 1:
        offer(words("One sequence instead of {n} (--parallel 1)", n=s.n_parallel), s.with_values(n_parallel=1))
    if s.op_offload and current.staged_mib >= 1:
        # The copies of host-resident weights a prompt batch stages on the GPU; the CPU computes with them instead.
        offer(
            words("No staging of host weights (--no-op-offload; slower prompt processing)"),
            s.with_values(op_offload=False),
        )
    worst = min(d.free_after_mib - margin for d in current.devices)
    if short and worst < 0:
        total_gib = shape.total_bytes / (1 << 30)
        target = total_gib + worst / 1024
        if target > 0:
            out.append(
                words(
                    "A smaller quant: this file is {size} GiB; about {target} GiB or less would fit fully offloaded "
                    "at these settings",
                    size=f"{total_gib:.1f}",
                    target=f"{target:.1f}",
                )
            )
    return tuple(out)


def auto_fit(
    header: GGUFHeader,
    settings: LoadSettings,
    devices: Sequence[Device],
    *,
    pinned: frozenset[str] = frozenset(),
    margin_mib: float = MARGIN.default,
    max_ctx: int | None = None,
) -> LoadSettings:
    """The most of the model on the GPUs, then the largest context (steps of 256), that keep the margin.

    "Most of the model" is the most GPU layers; for a mixture-of-experts model, llama.cpp's own
    order: every layer's attention and dense weights first, then as many blocks' experts as fit
    (the rest stay in host memory, --n-cpu-moe). Fields named in ``pinned`` are left as given
    (with n_cpu_moe pinned, or --cpu-moe set, only the layers are searched). Context never goes
    past ``max_ctx`` or the trained context. If nothing fits, the result is the least demanding
    setting (no GPU layers, the smallest context) so the caller can show why.
    """
    shape = model_shape(header)
    devs = tuple(devices)
    s = settings
    top_ctx = max_ctx or shape.ctx_train or CONTEXT.maximum
    if shape.ctx_train:
        top_ctx = min(top_ctx, shape.ctx_train)
    top_ctx = max(CONTEXT.minimum, min(top_ctx, CONTEXT.maximum))
    if not devs:
        if "n_ctx" not in pinned:
            s = s.with_values(n_ctx=top_ctx // CONTEXT.step * CONTEXT.step)
        return s
    if "n_gpu_layers" not in pinned:
        probe = s if "n_ctx" in pinned else s.with_values(n_ctx=CONTEXT.minimum)
        if _experts_movable(shape, s, pinned):
            fitted = _fit_experts(shape, probe, devs, margin_mib)
            s = s.with_values(n_cpu_moe=fitted.n_cpu_moe)
            best = _gpu_layers(fitted, shape.n_layer, len(devs))
        else:
            best = _max_gpu_layers(shape, probe, devs, margin_mib)
        n_all = shape.n_layer + 1
        s = s.with_values(n_gpu_layers=ALL_LAYERS if best >= n_all else max(best, 0))
    if "n_ctx" not in pinned:
        ctx = _max_ctx(shape, s, devs, margin_mib, top_ctx)
        s = s.with_values(n_ctx=ctx if ctx is not None else CONTEXT.minimum)
    return s


# ---- JSON --------------------------------------------------------------------------------------


def _r(x: float) -> float:
    return round(float(x), 2)


def plan_to_json(p: Plan) -> dict[str, Any]:
    """The ``tightfit plan --json`` document (its fields are listed in README.md, "Command line"). Sizes in MiB."""
    devices = []
    for d in p.devices:
        devices.append(
            {
                "name": d.name,
                "total_mib": _r(d.total_mib),
                "free_mib": _r(d.free_mib),
                "other_mib": _r(d.other_mib),
                "weights_mib": _r(d.weights_mib),
                "kv_mib": _r(d.kv_mib),
                "recurrent_mib": _r(d.recurrent_mib),
                "compute_mib": _r(d.compute_mib),
                "staged_mib": _r(d.staged_mib),
                "output_mib": _r(d.output_mib),
                "overhead_mib": _r(d.overhead_mib),
                "needed_mib": _r(d.needed_mib),
                "free_after_mib": _r(d.free_after_mib),
                "margin_mib": _r(d.margin_mib),
                "verdict": d.verdict,
                "layers": d.layers,
                "first_block": d.first_block if d.layers else None,
                "last_block": d.first_block + d.layers - 1 if d.layers else None,
                "has_output": d.has_output,
                "in_use": d.in_use,
                "remote": d.remote or None,
            }
        )
    h = p.host
    return {
        "weights_mib": _r(p.weights_mib),
        "kv_mib": _r(p.kv_mib),
        "recurrent_mib": _r(p.recurrent_mib),
        "compute_mib": _r(p.compute_mib),
        "staged_mib": _r(p.staged_mib),
        "output_mib": _r(p.output_mib),
        "devices": devices,
        "host": {
            "weights_mib": _r(h.weights_mib),
            "kv_mib": _r(h.kv_mib),
            "recurrent_mib": _r(h.recurrent_mib),
            "compute_mib": _r(h.compute_mib),
            "output_mib": _r(h.output_mib),
            "overhead_mib": _r(h.overhead_mib),
            "needed_mib": _r(h.total),
        },
        "layers_on_gpu": p.layers_on_gpu,
        "cpu_expert_layers": p.cpu_expert_layers,
        "n_layer": p.n_layer,
        "fits": p.fits,
        "verdict": p.verdict,
        "predicted_tg_tok_s": None if p.predicted_tg_tok_s is None else round(p.predicted_tg_tok_s, 1),
        "link_hops": p.link_hops,
        "link_ms_per_token": round(p.link_ms_per_token, 3),
        "notes": [english(note) for note in p.notes],
        "suggestions": [english(suggestion) for suggestion in p.suggestions],
        "settings": asdict(p.settings),
    }
