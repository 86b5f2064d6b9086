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

from gui.core.words import Text, joined, words

__all__ = ["QUALITY", "SOURCE", "QuantQuality", "normalize_quant_name", "quality_of"]

SOURCE = words(
    "llama.cpp tools/quantize (quantize.cpp QUANT_OPTIONS / README): perplexity increase vs F16 on "
    "Llama-3-8B; i-quants placed by bits per weight"
)


@dataclass(frozen=True)
class QuantQuality:
    """Where one quant type stands. ``rank`` 1 is the best; equal quality never shares a rank."""

    name: str
    rank: int
    level: Text  # "reference", "near-lossless", "very low loss", ... "severe loss" (words, as is the hint)
    hint: Text  # one short line for a table cell or tooltip
    ppl_increase: float | None  # from the llama.cpp table; None where it gives bpw only


# (name, level, ppl increase or None, bits per weight (what places a type the table gives no ppl for), extra words),
# best first.
_TABLE: tuple[tuple[str, Text, float | None, float | None, Text], ...] = (
    ("F32", words("reference"), 0.0, 32.0, words("unquantised; twice the size of F16 for no gain")),
    ("BF16", words("reference"), -0.0050, 16.0, words("unquantised")),
    ("F16", words("reference"), 0.0020, 16.0, words("unquantised")),
    ("Q8_0", words("near-lossless"), 0.0026, None, words("indistinguishable from F16")),
    ("Q6_K", words("near-lossless"), 0.0217, None, words("practically lossless")),
    ("Q5_K_M", words("very low loss"), 0.0569, None, ""),
    ("Q5_K_S", words("very low loss"), 0.1049, None, ""),
    ("Q5_1", words("very low loss"), 0.1062, None, words("legacy type; Q5_K_M is smaller and better")),
    ("Q5_0", words("very low loss"), 0.1316, None, words("legacy type")),
    ("Q4_K_M", words("low loss"), 0.1754, None, words("the common default")),
    ("Q4_K_S", words("low-medium loss"), 0.2689, None, ""),
    ("IQ4_XS", words("low-medium loss"), None, 4.25, ""),
    ("IQ4_NL", words("low-medium loss"), None, 4.50, ""),
    ("Q4_1", words("low-medium loss"), 0.4511, None, words("legacy type")),
    ("Q4_0", words("low-medium loss"), 0.4685, None, words("legacy type")),
    ("Q3_K_L", words("low-medium loss"), 0.5562, None, ""),
    ("Q3_K_M", words("medium loss"), 0.6569, None, ""),
    ("IQ3_M", words("medium loss"), None, 3.66, ""),
    ("IQ3_S", words("medium loss"), None, 3.44, ""),
    ("IQ3_XS", words("medium loss"), None, 3.30, ""),
    ("Q3_K_S", words("medium loss"), 1.6321, None, ""),
    ("IQ3_XXS", words("medium loss"), None, 3.06, ""),
    ("Q2_K_S", words("obvious loss"), 3.1836, None, ""),
    ("Q2_K", words("obvious loss"), 3.5199, None, ""),
    ("IQ2_M", words("obvious loss"), None, 2.70, ""),
    ("IQ2_S", words("obvious loss"), None, 2.50, ""),
    ("IQ2_XS", words("obvious loss"), None, 2.31, ""),
    ("IQ2_XXS", words("obvious loss"), None, 2.06, ""),
    ("IQ1_M", words("severe loss"), None, 1.75, words("for very large models only")),
    ("IQ1_S", words("severe loss"), None, 1.56, words("for very large models only")),
)


def _hint(level: Text, ppl: float | None, bpw: float | None, extra: Text) -> Text:
    parts: list[Text] = [level]
    if ppl is not None and level != "reference":
        parts.append(words("+{ppl} ppl on Llama-3-8B", ppl=f"{ppl:.4f}"))
    elif ppl is None and bpw is not None:
        parts.append(words("placed by size ({bpw} bpw)", bpw=f"{bpw:g}"))
    if extra:
        parts.append(extra)
    return joined("; ", parts)


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
