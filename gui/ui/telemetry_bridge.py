"""Turns the telemetry service's ticks (arriving on its own thread) into a Qt signal on the UI thread.

The service calls its listener on the telemetry thread. A signal connected to a plain Python callable
would run that callable on the emitting thread, so the bridge first hops through a private signal,
queued to its own slot (this object lives on the UI thread), and only there emits `tick`. Everything
connected to `tick` therefore runs on the UI thread.

The bridge also carries the engine's activity: `set_engine_rate(tok_s)` goes to the service, which stamps
it onto every tick (the tokens/s chart, the CSV log), and, when the GPU is simulated, sets the simulated
load, so the fake card heats up while tokens really stream.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QObject, Qt, Signal, Slot

from gui.services.telemetry import SimulatedSource, TelemetryService, Tick

__all__ = ["TelemetryBridge"]


class TelemetryBridge(QObject):
    tick = Signal(object)  # Tick, on the UI thread
    _arrived = Signal(object)  # Tick, from the telemetry thread

    def __init__(
        self,
        service: TelemetryService,
        *,
        simulated: SimulatedSource | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._simulated = simulated
        self._accepting = False  # ticks queued before stop() must not reach a view that is going away
        self._arrived.connect(self._on_arrived, Qt.ConnectionType.QueuedConnection)
        self.service = service
        service.set_listener(self._on_tick)

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

    def sample_now(self) -> Tick:
        """One tick taken synchronously on this (the UI) thread and emitted at once: for tests and for a
        first reading before the thread's schedule comes round."""
        tick = self.service.sample_now()
        self.tick.emit(tick)
        return tick

    @property
    def engine_rate(self) -> float:
        return self.service.engine_rate

    def set_engine_rate(self, tok_s: float | None) -> None:
        """The engine's current generation rate (0 when idle, None when unknown)."""
        self.service.set_engine_rate(tok_s)
        if self._simulated is not None:
            # Decode keeps a card fully busy whatever the rate (it is memory-bound), so any streaming
            # counts as full load, as the simulator's own docs suggest.
            rate = self.service.engine_rate
            load = 1.0 if math.isfinite(rate) and rate > 0 else 0.0
            for index in range(len(self._simulated.gpus)):
                self._simulated.set_load(load, index)

    # --- delivery ---------------------------------------------------------------------------------

    def _on_tick(self, tick: Tick) -> None:  # telemetry thread
        if self._accepting:
            self._arrived.emit(tick)

    @Slot(object)
    def _on_arrived(self, tick: Tick) -> None:  # UI thread
        if self._accepting:
            self.tick.emit(tick)
