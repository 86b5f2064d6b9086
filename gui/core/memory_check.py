"""Planned against measured GPU memory after a load, and the correction the planner learns from it.

After every load on a GPU the window reads what the driver says the engine process holds on each card
(NVML's per-process used memory) and sets it beside the plan's figure for that card and llama.cpp's own
buffer sizes from its load log. What the plan cannot know exactly is the CUDA context and runtime: the
"overhead" term, an assumption from the SM count. The difference measured on a card, for a driver and an
engine build, is kept (the last few loads), and the planner adds their median to that card's overhead
term from then on — and says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gui.core.words import Text, english, words

__all__ = [
    "KEEP_LOADS",
    "Correction",
    "MemoryCheck",
    "correction_for",
    "correction_key",
    "recorded",
]

KEEP_LOADS = 10  # the differences kept per card, driver and build: newer loads replace older ones


@dataclass(frozen=True)
class MemoryCheck:
    """One card after one load."""

    device: str  # "GPU 0: Tesla V100-SXM2-16GB"
    planned_mib: float  # the plan's figure for the engine on this card, without any learned correction
    measured_mib: float  # NVML: what the engine process holds on this card
    llama_mib: float | None  # llama.cpp's own buffers on this card, from its load log
    simulated: bool = False

    @property
    def difference_mib(self) -> float:
        return self.measured_mib - self.planned_mib

    @property
    def difference_pct(self) -> float:
        return 100.0 * self.difference_mib / self.planned_mib if self.planned_mib > 0 else 0.0

    def describe(self) -> Text:
        """One sentence (gui/core/words.py: the window translates it with ``core_text``)."""
        figures = {
            "what": words("the simulated card reports") if self.simulated else words("the driver reports"),
            "measured": f"{self.measured_mib:,.0f}",
            "device": self.device,
            "planned": f"{self.planned_mib:,.0f}",
            "difference": f"{self.difference_mib:+,.0f}",
            "pct": f"{self.difference_pct:+.1f}",
        }
        if self.llama_mib is None:
            return words(
                "Measured after loading: {what} {measured} MiB for the engine on {device} "
                "(planned {planned} MiB: {difference} MiB, {pct}%).",
                **figures,
            )
        return words(
            "Measured after loading: {what} {measured} MiB for the engine on {device} "
            "(planned {planned} MiB: {difference} MiB, {pct}%); llama.cpp's own buffers there: {llama} MiB.",
            **figures,
            llama=f"{self.llama_mib:,.0f}",
        )


@dataclass(frozen=True)
class Correction:
    mib: float
    loads: int

    def describe(self) -> Text:
        """One phrase (gui/core/words.py: the window translates it with ``core_text``)."""
        loads = words("1 load") if self.loads == 1 else words("{n} loads", n=self.loads)
        return words("corrected by {mib} MiB from {loads} on this card", mib=f"{self.mib:+,.0f}", loads=loads)


def correction_key(card: str, driver: str | None, build: Text) -> str:
    """Where a card's differences are kept: the card, the driver and the engine build each change them."""
    return f"{english(card)}|{english(driver or 'driver ?')}|{english(build)}"


def recorded(table: Mapping[str, Sequence[float]], key: str, difference_mib: float) -> dict[str, list[float]]:
    """The table with one more difference for ``key``, keeping the last KEEP_LOADS."""
    kept = [*table.get(key, ()), float(difference_mib)][-KEEP_LOADS:]
    return {**{k: list(v) for k, v in table.items()}, key: kept}


def correction_for(table: Mapping[str, Sequence[float]], key: str) -> Correction | None:
    """The median difference of the loads kept for ``key`` (robust to one odd load); None without any."""
    differences = list(table.get(key, ()))[-KEEP_LOADS:]
    if not differences:
        return None
    return Correction(statistics.median(differences), len(differences))
