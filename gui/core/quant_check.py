"""Whether the quant a header names is the quant its tensors are.

A GGUF header says what it is twice: ``general.file_type``, one integer any tool may write ("Q4_K_M"),
and the ggml type of every tensor, which is what the weights are. A file renamed, re-packed or written
by a tool that copied the field from its input can name a quant its weights are not. The library shows
the name checked against the tensors, never the field alone.

The rule follows llama.cpp's quantiser (``src/llama-quant.cpp``). A file type has a default tensor
type (``llama_ftype_get_default_type``: Q4_K for Q4_K_S and Q4_K_M) and a mix
(``llama_tensor_get_type``) that moves some tensors of the repeated blocks to other types: attn_v,
ffn_down and attn_output a step or two up in the _M and _L variants, q, k, gate and up a step down in
some i-quant mixes. Only those block matrices are judged:

- the token embedding and output matrices follow rules of their own and are often set by hand
  (bartowski's "Q4_K_L" keeps them Q8_0), so they are left out;
- so are the tensors llama.cpp never quantises (norms, the expert router, the SSM convolution);
- and so is a tensor whose row length is not whole blocks of the default type: llama.cpp moved it to
  a fallback type itself (Q4_K to Q5_0 on a model 576 wide).

Over the judged tensors, two things must hold for the name to stand:

1. Most weights (by count) are of a type the mix leaves most weights in: Q4_K for Q4_K_M; Q3_K or
   Q5_K for Q3_K_L, whose ffn_down, attn_v and attn_output are Q5_K and can outweigh the rest.
2. Their bits per weight lie between the lightest and the heaviest type the mix gives a large tensor
   (Q4_K_M: 4.50 to 6.56, Q4_K to Q6_K), with 2 % to spare: a weighted mean of the mix cannot leave
   that range. (An 8-expert model's attn_k and attn_v go to Q8_0 in every mix; they are too small to
   move the mean and are not counted as the mix's types.)

Hand-made mixes that keep the name (unsloth's "UD-Q4_K_XL" files say Q4_K_M over mostly Q4_K) pass
both; a header that says Q4_K_M over tensors that are mostly Q8_0 fails both. A header without a file
type, or with one this table has no mix for, gets no verdict: there is no claim to check.

Pure Python; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from gui.core.ggml_types import GGML_TYPES, GGML_TYPES_BY_NAME, LLAMA_FTYPE_GUESSED, LLAMA_FTYPE_NAMES
from gui.core.gguf_reader import GGUFHeader, TensorInfo
from gui.core.words import Text, words

__all__ = ["MIXES", "QuantCheck", "QuantMix", "check_quant"]

# Room for what the rule cannot see: small F32 matrices a converter keeps, rounding of tiny models.
_SLACK = 0.02

# Parts of tensor names llama.cpp's quantiser leaves in the type they came in (tensor_allows_quantization).
_NEVER_QUANTISED = (
    "_norm",
    "ffn_gate_inp",
    "ssm_conv1d",
    "shortconv.conv",
    "attn_rel_b",
    "altup",
    "laurel",
    "per_layer_model_proj",
)


@dataclass(frozen=True)
class QuantMix:
    """What llama.cpp's quantiser does to the block matrices for one file type."""

    default: str  # the default tensor type (its block size decides which tensors fell back)
    dominant: tuple[str, ...]  # types the mix can leave most weights in
    types: tuple[str, ...]  # every type the mix gives a large block tensor

    @property
    def bpw_range(self) -> tuple[float, float]:
        bits = [GGML_TYPES_BY_NAME[t].bits_per_weight for t in self.types]
        return min(bits), max(bits)


def _mix(default: str, *upgrades: str, dominant: tuple[str, ...] = ()) -> QuantMix:
    return QuantMix(default, dominant or (default,), (default, *upgrades))


# Keyed by the file type's name as LLAMA_FTYPE_NAMES spells it. Read off llama_tensor_get_type: the
# types a file type's branches assign to attn_v, attn_output, attn_qkv, ffn_down, ffn_gate and ffn_up.
MIXES: Mapping[str, QuantMix] = MappingProxyType(
    {
        "F32": _mix("F32"),
        "F16": _mix("F16", "F32"),
        "BF16": _mix("BF16", "F32"),
        "Q8_0": _mix("Q8_0"),
        "Q4_0": _mix("Q4_0", "Q4_1"),  # first eighth of ffn_down with an importance matrix
        "Q4_1": _mix("Q4_1"),
        "Q4_1_SOME_F16": _mix("Q4_1", "F16"),
        "Q5_0": _mix("Q5_0", "Q5_1"),
        "Q5_1": _mix("Q5_1"),
        "Q2_K": _mix("Q2_K", "Q3_K", "Q4_K", "Q5_K", dominant=("Q2_K", "Q3_K")),
        "Q2_K_S": _mix("Q2_K", "Q4_K"),
        "Q3_K_S": _mix("Q3_K", "Q5_K"),
        "Q3_K_M": _mix("Q3_K", "Q4_K", "Q5_K", dominant=("Q3_K", "Q4_K")),
        "Q3_K_L": _mix("Q3_K", "Q4_K", "Q5_K", dominant=("Q3_K", "Q4_K", "Q5_K")),
        "Q4_K_S": _mix("Q4_K", "Q5_K"),
        "Q4_K_M": _mix("Q4_K", "Q5_K", "Q6_K"),
        "Q5_K_S": _mix("Q5_K"),
        "Q5_K_M": _mix("Q5_K", "Q6_K"),
        "Q6_K": _mix("Q6_K"),
        "IQ1_S": _mix("IQ1_S", "IQ2_XXS", "Q2_K", "Q4_K", "Q5_K"),
        "IQ1_M": _mix("IQ1_M", "IQ2_XXS", "Q2_K", "Q4_K", "Q5_K"),
        "IQ2_XXS": _mix("IQ2_XXS", "Q2_K", "Q4_K", "Q5_K"),
        "IQ2_XS": _mix("IQ2_XS", "Q2_K", "Q4_K", "Q5_K"),
        "IQ2_S": _mix("IQ2_XS", "IQ3_S", "Q4_K", "Q5_K"),
        "IQ2_M": _mix("IQ2_S", "IQ3_S", "Q4_K", "Q5_K"),
        "IQ3_XXS": _mix("IQ3_XXS", "IQ2_S", "IQ3_S", "Q3_K", "Q4_K", "Q5_K"),
        # The middle three quarters of ffn_gate and ffn_up go one step down, to IQ3_XXS.
        "IQ3_XS": _mix("IQ3_S", "IQ3_XXS", "Q4_K", "Q5_K", dominant=("IQ3_S", "IQ3_XXS")),
        "IQ3_S": _mix("IQ3_S", "Q4_K", "Q5_K"),
        "IQ3_M": _mix("IQ3_S", "Q4_K", "Q5_K"),
        "IQ4_NL": _mix("IQ4_NL", "Q5_K", "Q5_1"),  # Q5_1: Q5_K's own fallback on rows of 32s
        "IQ4_XS": _mix("IQ4_XS", "Q5_K"),
        "TQ1_0": _mix("TQ1_0"),
        "TQ2_0": _mix("TQ2_0"),
        # Expert tensors go to MXFP4, every other matrix to Q8_0: a dense model is all Q8_0.
        "MXFP4_MOE": _mix("MXFP4", "Q8_0", dominant=("MXFP4", "Q8_0")),
        "NVFP4": _mix("NVFP4"),
        "Q1_0": _mix("Q1_0"),
    }
)


@dataclass(frozen=True)
class QuantCheck:
    """The quant name a header gives, checked against its tensors.

    ``label`` is what to show: the header's name when the tensors agree (or nothing can be checked),
    otherwise the type most weights are in when that is what contradicts the name. ``problem`` says
    what contradicts what, in words; it is empty when the name stands.
    """

    label: str
    claimed: str | None = None  # the file type's name; None without one (or one without a known mix)
    dominant: str | None = None  # the ggml type most judged weights are in
    share: float = 0.0  # fraction of the judged weights in that type
    bits_per_weight: float | None = None  # over the judged weights
    expected: tuple[float, float] | None = None  # the mix's range of bits per weight
    problem: Text = ""

    @property
    def contradicts(self) -> bool:
        return bool(self.problem)


def _judged(tensors: Iterable[TensorInfo], block_size: int) -> list[TensorInfo]:
    return [
        t
        for t in tensors
        if t.name.startswith("blk.")
        and t.name.endswith("weight")
        and len(t.shape) >= 2
        and t.shape[0] % block_size == 0
        and t.ggml_type in GGML_TYPES
        and not any(part in t.name for part in _NEVER_QUANTISED)
    ]


def check_quant(header: GGUFHeader) -> QuantCheck:
    """Check ``header.quant_name`` against the block matrices' types (see the module's rule)."""
    shown = header.quant_name
    ftype = header.file_type
    claimed = LLAMA_FTYPE_NAMES.get(ftype & ~LLAMA_FTYPE_GUESSED) if ftype is not None else None
    mix = MIXES.get(claimed) if claimed is not None else None
    if claimed is None or mix is None:
        return QuantCheck(label=shown)
    judged = _judged(header.tensors, GGML_TYPES_BY_NAME[mix.default].block_size)
    weights: dict[str, int] = {}
    n_bytes = 0
    for t in judged:
        weights[t.type_name] = weights.get(t.type_name, 0) + t.n_elements
        n_bytes += t.nbytes
    total = sum(weights.values())
    if not total:
        return QuantCheck(label=shown, claimed=claimed)
    dominant, count = max(weights.items(), key=lambda kv: (kv[1], kv[0]))
    bpw = n_bytes * 8 / total
    low, high = mix.bpw_range
    found = QuantCheck(
        label=shown,
        claimed=claimed,
        dominant=dominant,
        share=count / total,
        bits_per_weight=bpw,
        expected=(low, high),
    )
    wrong_type = dominant not in mix.dominant
    wrong_bits = not low * (1 - _SLACK) <= bpw <= high * (1 + _SLACK)
    if not (wrong_type or wrong_bits):
        return found
    problem = words(
        "The header says {claimed} (general.file_type {ftype}), but {share} of the weights in its layers are "
        "{dominant}, at {bpw} bits per weight on average. llama.cpp's {claimed} keeps most of them {kept}, at "
        "{low} to {high} bits per weight. Sizes and memory plans follow the tensors, not the name.",
        claimed=claimed,
        ftype=ftype,
        share=f"{found.share:.0%}",
        dominant=dominant,
        bpw=f"{bpw:.2f}",
        kept=_either(mix.dominant),
        low=f"{low:.2f}",
        high=f"{high:.2f}",
    )
    return replace(found, label=dominant if wrong_type else shown, problem=problem)


def _either(names: tuple[str, ...]) -> Text:
    """The names joined by "or", one pair at a time, so that the window translates each "or"."""
    said: Text = names[0]
    for name in names[1:]:
        said = words("{first} or {second}", first=said, second=name)
    return said
