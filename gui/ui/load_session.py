"""The window's one load state (gui.core.load_state) and the two commands that change it, load and unload.

The session follows the engine's events; the window, the chat pane and the status line observe
``changed`` instead of keeping their own copies of what is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from gui.core import protocol as p
from gui.core.gguf_reader import GGUFHeader
from gui.core.load_state import LoadState
from gui.core.params import LoadSettings
from gui.core.planner import Plan
from gui.services.engine_client import EngineUnavailable, WorkerExited
from gui.ui.engine_bridge import ACK_S, FINISH_S, EngineBridge

__all__ = ["LoadSession"]


class LoadSession(QObject):
    changed = Signal(object, object)  # LoadState now, LoadState before
    engine_died = Signal(object, object)  # WorkerExited, LoadState before it

    def __init__(self, bridge: EngineBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.state = LoadState()
        bridge.engine_event.connect(self._on_event)

    def load(self, model: Path, settings: LoadSettings, header: GGUFHeader | None, plan: Plan | None) -> None:
        """Ask llama.cpp for its dry run, then the load. Raises ValueError (bad settings) or EngineUnavailable."""
        settings.validated()
        client = self.bridge.client
        if not client.alive:
            client.start()
        dry_run = client.dry_run(model, settings)
        client.load(model, settings)
        self._set(self.state.requested(model, settings, header, plan, dry_run))

    def unload(self) -> None:
        try:
            self.bridge.client.unload()
        except EngineUnavailable:
            pass  # nothing is loaded in a worker that is not running
        else:
            self.bridge.expect("acknowledge Unload", _answers_unload, ACK_S)
            self.bridge.expect("unload the model", lambda event: isinstance(event, p.Unloaded), FINISH_S)
        self._set(self.state.unloaded())

    def _on_event(self, event: Any) -> None:
        if isinstance(event, WorkerExited):
            if not event.expected:
                before = self.state
                self._set(self.state.engine_died(event.reason))
                self.engine_died.emit(event, before)
            return
        self._set(self.state.on_event(event))

    def _set(self, state: LoadState) -> None:
        if state is not self.state:
            before, self.state = self.state, state
            self.changed.emit(state, before)


def _answers_unload(event: Any) -> bool:
    return isinstance(event, p.Unloaded) or (isinstance(event, p.Acknowledged) and event.command == "unload")
