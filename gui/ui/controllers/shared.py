"""What every feature of the window shares, handed to each controller once: the services, the engine's bridge
and the one load session, the one planning context, who holds the engine, the status line, the tabs and the
window (the parent of a feature's dialogs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTabWidget, QWidget

from gui.core.engine_use import EngineUse
from gui.services.bundle import Services
from gui.services.settings_store import SettingsStore
from gui.ui.controllers.planning import Planning
from gui.ui.engine_bridge import EngineBridge
from gui.ui.load_session import LoadSession

STATUS_MS = 15000  # how long a line of the status bar stays
WARNING_MS = 30000


class Say(Protocol):
    def __call__(self, text: str, ms: int = STATUS_MS) -> None: ...


@dataclass(frozen=True)
class Shared:
    services: Services
    bridge: EngineBridge
    session: LoadSession
    planning: Planning
    engine_use: EngineUse
    say: Say  # a line in the status bar (for ``ms`` milliseconds)
    tabs: QTabWidget
    window: QWidget

    @property
    def store(self) -> SettingsStore:
        return self.services.settings


class Feature(QObject):
    """A controller's base: the shared parts as attributes, the controller a child of ``parent``."""

    def __init__(self, shared: Shared, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.services = shared.services
        self.bridge = shared.bridge
        self.session = shared.session
        self.planning = shared.planning
        self.engine_use = shared.engine_use
        self.store = shared.store
        self.say = shared.say
        self.tabs = shared.tabs
        self.dialog_parent = shared.window
