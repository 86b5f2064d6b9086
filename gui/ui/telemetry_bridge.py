"""Turns the telemetry service's ticks (arriving on its own thread) into a Qt signal on the UI thread.

The service calls its listener on the telemetry thread. A signal connected to a plain Python callable
would run that callable on the emitting thread, so the bridge first hops through a private signal,
queued to its own slot (this object lives on the UI thread), and only there emits `tick`. Everything
connected to `tick` therefore runs on the UI thread.

The bridge also carries the engine's activity: `set_engine_rate(tok_s)` is stamped onto every tick (the
tokens/s chart) and, when the GPU is simulated, sets the simulated load, so the fake card heats up while
tokens really stream.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal, Slot

from gui.services.telemetry import SimulatedSource, TelemetryService, Tick

__all__ = ["LiveTick", "ServiceFactory", "TelemetryBridge"]

ServiceFactory = Callable[[Callable[[Tick], None]], TelemetryService]


@dataclass(frozen=True)
class LiveTick:
    tick: Tick
    engine_tok_s: float  # the engine's generation rate when the tick was taken; NaN when never reported


class TelemetryBridge(QObject):
    tick = Signal(object)  # LiveTick, on the UI thread
    _arrived = Signal(object)  # LiveTick, from the telemetry thread

    def __init__(
        self,
        service_factory: ServiceFactory,
        *,
        simulated: SimulatedSource | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._rate = math.nan
        self._simulated = simulated
        self._accepting = False  # ticks queued before stop() must not reach a view that is going away
        self._arrived.connect(self._on_arrived, Qt.ConnectionType.QueuedConnection)
        self.service = service_factory(self._on_tick)

    # --- control (UI thread) ----------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.service.running

    def start(self) -> None:
        self._accepting = True
        self.service.start()

    def stop(self) -> None:
        """Stop and join the telemetry thread; ticks still in the event queue are dropped."""
        self._accepting = False
        self.service.stop()

    def sample_now(self) -> LiveTick:
        """One tick taken synchronously on this (the UI) thread and emitted at once: for tests and for a
        first reading before the thread's schedule comes round."""
        live = self._stamp(self.service.sample_now())
        self.tick.emit(live)
        return live

    @property
    def engine_rate(self) -> float:
        with self._lock:
            return self._rate

    def set_engine_rate(self, tok_s: float | None) -> None:
        """The engine's current generation rate (0 when idle, None when unknown)."""
        rate = math.nan if tok_s is None else float(tok_s)
        if math.isfinite(rate) and rate < 0:
            raise ValueError(f"a token rate cannot be negative (got {rate})")
        with self._lock:
            self._rate = rate
        if self._simulated is not None:
            # Decode keeps a card fully busy whatever the rate (it is memory-bound), so any streaming
            # counts as full load, as the simulator's own docs suggest.
            load = 1.0 if math.isfinite(rate) and rate > 0 else 0.0
            for index in range(len(self._simulated.gpus)):
                self._simulated.set_load(load, index)

    # --- delivery ---------------------------------------------------------------------------------

    def _stamp(self, tick: Tick) -> LiveTick:
        with self._lock:
            return LiveTick(tick, self._rate)

    def _on_tick(self, tick: Tick) -> None:  # telemetry thread
        if self._accepting:
            self._arrived.emit(self._stamp(tick))

    @Slot(object)
    def _on_arrived(self, live: LiveTick) -> None:  # UI thread
        if self._accepting:
            self.tick.emit(live)
