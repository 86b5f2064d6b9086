"""Turns engine events (arriving on the client's reader thread) into Qt signals on the UI thread.

Tokens are coalesced: the reader thread appends them to a buffer and signals only when the buffer was
empty, so a fast model never floods the event loop with one queued call per token.

The bridge also keeps the worker honest: a command the window must see answered (Stop, Unload) comes
with a deadline, and a worker that misses it is ended and reported like any crash, so no bug in the
worker can hold the window hostage.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from gui.core import protocol as p
from gui.core.llama_log import stuck_reason
from gui.services.engine_client import ClientEvent, EngineClient, WorkerExited

# A worker acknowledges Stop and Unload from its command reader at once, whatever it is computing...
ACK_S = 5.0
# ... and finishes what it was doing within one batch of llama.cpp work (slow on a CPU, never this slow).
FINISH_S = 120.0


@dataclass
class _Deadline:
    what: str  # "acknowledge Stop": what the worker failed to do, in words
    met: Callable[[ClientEvent], bool]
    pid: int | None
    within_s: float
    timer: QTimer


class EngineBridge(QObject):
    engine_event = Signal(object)  # every event except Token: a ClientEvent
    tokens_ready = Signal()  # drain with take_tokens()

    def __init__(self, client: EngineClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._tokens: list[tuple[p.Token, float]] = []
        self._closed = False
        self._deadlines: list[_Deadline] = []
        self._taps: tuple[Callable[[ClientEvent], None], ...] = ()
        self.client = client
        client.set_listener(self._on_event)
        self.engine_event.connect(self._meet_deadlines)

    def expect(self, what: str, met: Callable[[ClientEvent], bool], within_s: float) -> None:
        """Unless an event that ``met`` accepts arrives within ``within_s``, end the worker (it is stuck):
        the window then reports and restarts it as after a crash, keeping the conversation."""
        timer = QTimer(self)
        timer.setSingleShot(True)
        deadline = _Deadline(what, met, self.client.pid, within_s, timer)
        timer.timeout.connect(lambda: self._overdue(deadline))
        self._deadlines.append(deadline)
        timer.start(round(within_s * 1000))

    def _meet_deadlines(self, event: ClientEvent) -> None:  # UI thread
        for deadline in list(self._deadlines):
            if isinstance(event, WorkerExited) or deadline.met(event):
                deadline.timer.stop()
                self._deadlines.remove(deadline)

    def _overdue(self, deadline: _Deadline) -> None:
        if deadline in self._deadlines:
            self._deadlines.remove(deadline)
        if self._closed or not self.client.alive or self.client.pid != deadline.pid:
            return
        self.client.kill(stuck_reason(deadline.what, deadline.within_s))

    def add_tap(self, tap: Callable[[ClientEvent], None]) -> None:
        """Hand every event, tokens included, to ``tap`` on the reader thread as it arrives, even while the
        window closes: for work that runs on its own thread and waits on the engine (the power-cap sweep)."""
        self._taps = (*self._taps, tap)

    def remove_tap(self, tap: Callable[[ClientEvent], None]) -> None:
        self._taps = tuple(t for t in self._taps if t is not tap)

    def _on_event(self, message: ClientEvent) -> None:  # reader thread
        stale = isinstance(message, WorkerExited) and message.pid not in (None, self.client.pid)
        if stale and self.client.alive:
            return  # a worker that ended before the current one started: old news
        for tap in self._taps:
            tap(message)
        if self._closed:
            return  # the window is going away; nobody is left to tell
        if isinstance(message, p.Token):
            with self._lock:
                first = not self._tokens
                self._tokens.append((message, time.perf_counter()))
            if first:
                self.tokens_ready.emit()
            return
        self.engine_event.emit(message)

    def take_tokens(self) -> list[tuple[p.Token, float]]:
        """Tokens received since the last call, each with the time the reader thread got it."""
        with self._lock:
            tokens, self._tokens = self._tokens, []
        return tokens

    def mute(self) -> None:
        """From now on nothing reaches the window (it is closing)."""
        self._closed = True

    def shutdown(self) -> None:
        self._closed = True
        self.client.close()


__all__ = ["EngineBridge", "WorkerExited"]
