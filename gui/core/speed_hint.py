"""Why a reply decoded far slower than the plan's ceiling, in words, with the change to try.

The ceiling is memory bandwidth over the bytes a token reads; a measured rate far below it has a few
usual causes on the machines Tightfit is for, each visible in facts the window already has: llama.cpp's
threads spin while they wait, so with as many threads as logical cores one busy core stalls them all;
layers kept in host memory are read at RAM speed; a GPU held back by its power or temperature limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gui.core.words import Words, joined, words

__all__ = ["CPU_SLOW_FRACTION", "SLOW_FRACTION", "SpeedFacts", "speed_hint"]

# Below this share of the ceiling, a reply is "far below" it (real runs reach 60-95 %).
SLOW_FRACTION = 0.4
# On the CPU alone the bandwidth ceiling is not reached by a small model: its decode is bound by arithmetic.
# The demo model (135M, Q4_1) on two idle cores decodes at ~125 tok/s with 2 threads and ~85 with 1, a
# third of its ~380 tok/s ceiling; the stall this hint names (a spinning thread on a busy core) costs about
# tenfold. So a CPU-only load is "far below" only under this share.
CPU_SLOW_FRACTION = 0.15
# Replies shorter than this say little about the decode rate.
MIN_TOKENS = 16


@dataclass(frozen=True)
class SpeedFacts:
    decode_tok_s: float  # llama.cpp's own decode rate for the reply
    n_gen: int
    ceiling_tok_s: float | None  # the plan's, for the settings the model was loaded with
    threads: int
    logical_cores: int | None
    physical_cores: int | None
    cpu_busy_pct: Sequence[float] = ()  # per core, the last reading of the host
    layers_on_gpu: int = 0
    n_layers: int = 0  # llama.cpp's count: blocks + the output layer
    gpu_offload: bool = False
    throttle_reasons: Sequence[str] = ()  # the GPU's, from the last reading


def speed_hint(facts: SpeedFacts) -> Words | None:
    """A sentence on why decoding is slow and what to change, or None when it is not far below the ceiling
    (gui/core/words.py: the window translates it)."""
    ceiling = facts.ceiling_tok_s
    slow = SLOW_FRACTION if facts.gpu_offload else CPU_SLOW_FRACTION
    if not ceiling or facts.n_gen < MIN_TOKENS or facts.decode_tok_s >= slow * ceiling:
        return None
    rate = facts.decode_tok_s
    share = words(
        "{rate} tok/s is {share} of this load's ceiling ({ceiling} tok/s)",
        rate=f"{rate:.1f}",
        share=f"{rate / ceiling:.0%}",
        ceiling=f"{ceiling:.0f}",
    )
    reasons: list[Words] = []
    busy = sorted(facts.cpu_busy_pct, reverse=True)
    if facts.logical_cores and facts.threads >= facts.logical_cores:
        fewer = max(1, (facts.physical_cores or facts.logical_cores) - 1)
        reasons.append(
            words(
                "{threads} threads use every logical core, and llama.cpp's threads spin: one core busy with "
                "something else can cut the speed tenfold. Try {fewer}",
                threads=facts.threads,
                fewer=_threads(fewer),
            )
        )
    elif facts.physical_cores and facts.threads > facts.physical_cores:
        reasons.append(
            words(
                "{threads} threads is more than the {cores} physical cores; hyper-threads slow llama.cpp down. "
                "Try {fewer}",
                threads=facts.threads,
                cores=facts.physical_cores,
                fewer=_threads(facts.physical_cores),
            )
        )
    if facts.gpu_offload and facts.n_layers and facts.layers_on_gpu < facts.n_layers:
        on_cpu = facts.n_layers - facts.layers_on_gpu
        reasons.append(
            words(
                "{on_cpu} of {n} layers run from host memory, read at RAM speed each token. A smaller quant or a "
                "shorter context lets more of them onto the GPU",
                on_cpu=on_cpu,
                n=facts.n_layers,
            )
        )
    # A GPU held back slows only a load that runs on it: a CPU-only engine's replies owe nothing to the card's cap.
    held = facts.throttle_reasons if facts.gpu_offload else ()
    throttled = [r for r in held if "power" in r or "thermal" in r]
    if throttled:
        reasons.append(
            words(
                "the GPU is held back ({reasons}). Check its cooling, or the power cap",
                reasons=joined(", ", throttled),
            )
        )
    if not reasons and busy and busy[0] > 80:
        reasons.append(words("other programs keep the CPU busy. Close them, or use fewer threads"))
    if not reasons:
        return None
    return words("{share}: {reasons}.", share=share, reasons=joined("; ", reasons))


def _threads(n: int) -> Words:
    return words("1 thread") if n == 1 else words("{n} threads", n=n)
