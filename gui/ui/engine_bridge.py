"""Turns engine events (arriving on the client's reader thread) into Qt signals on the UI thread.

Tokens are coalesced: the reader thread appends them to a buffer and signals only when the buffer was
empty, so a fast model never floods the event loop with one queued call per token.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from PySide6.QtCore import QObject, Signal

from gui.core import protocol as p
from gui.services.engine_client import EngineClient, WorkerExited


class EngineBridge(QObject):
    engine_event = Signal(object)  # every event except Token
    tokens_ready = Signal()  # drain with take_tokens()

    def __init__(self, client: EngineClient, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._tokens: list[tuple[p.Token, float]] = []
        self._closed = False
        self.client = client
        client.set_listener(self._on_event)

    def _on_event(self, message: Any) -> None:  # reader thread
        if self._closed:
            return  # the window is going away; nobody is left to tell
        stale = isinstance(message, WorkerExited) and message.pid not in (None, self.client.pid)
        if stale and self.client.alive:
            return  # a worker that ended before the current one started: old news
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
