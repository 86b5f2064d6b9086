"""Who holds the window's one engine, and who waits for whom.

The chat, a load, the benchmark and power-cap sweeps and the API all decode on the same engine process. Each
says when it starts and stops using it; one table says what each must wait for, and the first of those under
way is the reason given to the one that waits (the chat's hint, the Tune tab's line, the API's /health).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

__all__ = ["WAITS_FOR", "EngineUse", "Use"]


class Use(StrEnum):
    """What uses the engine; the value is how the API's /health says it (in English, as the API speaks)."""

    CHAT = "a chat reply"
    LOAD = "a load"
    BENCH = "a benchmark sweep"
    POWER = "a power-cap sweep"
    API = "an API request"


# What each use waits for, in the order the reason is looked for. The chat waits for the sweeps and for API
# replies under way; a load for the sweeps (a sweep loads what it measures); the API for everything the window
# does itself; a sweep for everything, itself included (one sweep at a time).
WAITS_FOR: dict[Use, tuple[Use, ...]] = {
    Use.CHAT: (Use.BENCH, Use.POWER, Use.API),
    Use.LOAD: (Use.BENCH, Use.POWER),
    Use.API: (Use.CHAT, Use.LOAD, Use.BENCH, Use.POWER),
    Use.BENCH: (Use.BENCH, Use.POWER, Use.API, Use.CHAT, Use.LOAD),
    Use.POWER: (Use.BENCH, Use.POWER, Use.API, Use.CHAT, Use.LOAD),
}


class EngineUse:
    """The uses under way. ``set(use, active)`` from each feature; listeners hear every change."""

    def __init__(self) -> None:
        self._active: set[Use] = set()
        self._listeners: list[Callable[[], None]] = []

    def set(self, use: Use, active: bool) -> None:
        if active == (use in self._active):
            return
        if active:
            self._active.add(use)
        else:
            self._active.discard(use)
        for listener in list(self._listeners):
            listener()

    def active(self, use: Use) -> bool:
        return use in self._active

    def blocker(self, use: Use) -> Use | None:
        """The first use under way that ``use`` must wait for; None when it may go."""
        return next((other for other in WAITS_FOR[use] if other in self._active), None)

    def subscribe(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)
