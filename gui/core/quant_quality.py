"""A relative quality ranking of llama.cpp quant types, with a short hint a user can read.

Source: the type table of llama.cpp's quantiser, ``tools/quantize/quantize.cpp`` (``QUANT_OPTIONS``),
reproduced in ``tools/quantize/README.md`` and in ``llama-quantize --help``. For the legacy and
k-quant types it gives the perplexity increase over the F16 model on Llama-3-8B (F16/BF16 on
Mistral-7B), e.g. ``Q3_K_S: 3.41G, +1.6321 ppl @ Llama-3-8B`` and ``Q4_K_M: 4.58G, +0.1754 ppl``.
The i-quants (IQ1_*..IQ4_*) are listed there with bits per weight only (``IQ3_XXS: 3.06 bpw``), so
they are placed by their nominal bits per weight next to the k-quants of similar size; their
``ppl_increase`` is ``None`` and their hint says the place is by size.

The ranking is relative and model-dependent: the same type loses more on a small model than on a
large one, and an importance matrix helps the low-bit types. It orders the quants of one model;
it does not compare different models. Levels (by perplexity increase on Llama-3-8B):
reference (F32/F16/BF16), near-lossless (< 0.03), very low loss (< 0.15), low loss (< 0.2),
low-medium loss (< 0.6), medium loss (< 2), obvious loss (< 4), severe loss (1-bit class). With the
table's figures that puts Q5_K_M at very low loss, Q4_K_M low, Q4_K_S low-medium, Q3_K_S and IQ3_XXS
medium, Q2_K obvious.

Pure Python; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["QUALITY", "SOURCE", "QuantQuality", "normalize_quant_name", "quality_of"]

SOURCE = (
    "llama.cpp tools/quantize (quantize.cpp QUANT_OPTIONS / README): perplexity increase vs F16 on "
    "Llama-3-8B; i-quants placed by bits per weight"
)


@dataclass(frozen=True)
class QuantQuality:
    """Where one quant type stands. ``rank`` 1 is the best; equal quality never shares a rank."""

    name: str
    rank: int
    level: str  # "reference", "near-lossless", "very low loss", ... "severe loss"
    hint: str  # one short line for a table cell or tooltip
    ppl_increase: float | None  # from the llama.cpp table; None where it gives bpw only


# (name, level, ppl increase or None, bits per weight (what places a type the table gives no ppl for), extra words),
# best first.
_TABLE: tuple[tuple[str, str, float | None, float | None, str], ...] = (
    ("F32", "reference", 0.0, 32.0, "unquantised; twice the size of F16 for no gain"),
    ("BF16", "reference", -0.0050, 16.0, "unquantised"),
    ("F16", "reference", 0.0020, 16.0, "unquantised"),
    ("Q8_0", "near-lossless", 0.0026, None, "indistinguishable from F16"),
    ("Q6_K", "near-lossless", 0.0217, None, "practically lossless"),
    ("Q5_K_M", "very low loss", 0.0569, None, ""),
    ("Q5_K_S", "very low loss", 0.1049, None, ""),
    ("Q5_1", "very low loss", 0.1062, None, "legacy type; Q5_K_M is smaller and better"),
    ("Q5_0", "very low loss", 0.1316, None, "legacy type"),
    ("Q4_K_M", "low loss", 0.1754, None, "the common default"),
    ("Q4_K_S", "low-medium loss", 0.2689, None, ""),
    ("IQ4_XS", "low-medium loss", None, 4.25, ""),
    ("IQ4_NL", "low-medium loss", None, 4.50, ""),
    ("Q4_1", "low-medium loss", 0.4511, None, "legacy type"),
    ("Q4_0", "low-medium loss", 0.4685, None, "legacy type"),
    ("Q3_K_L", "low-medium loss", 0.5562, None, ""),
    ("Q3_K_M", "medium loss", 0.6569, None, ""),
    ("IQ3_M", "medium loss", None, 3.66, ""),
    ("IQ3_S", "medium loss", None, 3.44, ""),
    ("IQ3_XS", "medium loss", None, 3.30, ""),
    ("Q3_K_S", "medium loss", 1.6321, None, ""),
    ("IQ3_XXS", "medium loss", None, 3.06, ""),
    ("Q2_K_S", "obvious loss", 3.1836, None, ""),
    ("Q2_K", "obvious loss", 3.5199, None, ""),
    ("IQ2_M", "obvious loss", None, 2.70, ""),
    ("IQ2_S", "obvious loss", None, 2.50, ""),
    ("IQ2_XS", "obvious loss", None, 2.31, ""),
    ("IQ2_XXS", "obvious loss", None, 2.06, ""),
    ("IQ1_M", "severe loss", None, 1.75, "for very large models only"),
    ("IQ1_S", "severe loss", None, 1.56, "for very large models only"),
)


def _hint(level: str, ppl: float | None, bpw: float | None, extra: str) -> str:
    parts = [level]
    if ppl is not None and level != "reference":
        parts.append(f"+{ppl:.4f} ppl on Llama-3-8B")
    elif ppl is None and bpw is not None:
        parts.append(f"placed by size ({bpw:g} bpw)")
    if extra:
        parts.append(extra)
    return "; ".join(parts)


QUALITY: Mapping[str, QuantQuality] = MappingProxyType(
    {
        name: QuantQuality(name, rank, level, _hint(level, ppl, bpw, extra), ppl)
        for rank, (name, level, ppl, bpw, extra) in enumerate(_TABLE, start=1)
    }
)

# Names the quantiser accepts as aliases, and older spellings found in file names and headers.
_ALIASES = {"Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M", "Q3_K": "Q3_K_M", "Q4_1_SOME_F16": "Q4_1", "FP16": "F16"}
_GUESSED = re.compile(r"\s*\(guessed\)\s*$", re.IGNORECASE)


def normalize_quant_name(name: str) -> str:
    """``"q4_k_m"`` → ``"Q4_K_M"``, ``"Q4_K"`` → ``"Q4_K_M"``, ``"Q6_K (guessed)"`` → ``"Q6_K"``."""
    text = _GUESSED.sub("", name.strip()).upper().replace("-", "_")
    return _ALIASES.get(text, text)


def quality_of(quant_name: str | None) -> QuantQuality | None:
    """The ranking entry for a quant name as headers and file names spell it; None if unknown."""
    if not quant_name:
        return None
    return QUALITY.get(normalize_quant_name(quant_name))
