"""The Monitor's alerts (a line in the status bar and a desktop notification, once per event) and what it says
when something the user asked for finished."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QSystemTrayIcon

from gui.ui.controllers.shared import Feature, Shared
from gui.ui.monitor import MonitorView, alert_text, notify_desktop

ALERT_SHOWN_MS = 30000


class MonitorController(Feature):
    def __init__(
        self,
        shared: Shared,
        *,
        monitor: MonitorView,
        tray: QSystemTrayIcon | None,
        parent: QObject | None = None,
    ) -> None:
        """``say(text, ms)``: a line in the status bar for that long."""
        super().__init__(shared, parent)
        self.monitor = monitor
        self.tray = tray
        monitor.alert.connect(self._alert)

    def start(self) -> None:
        self.monitor.start()  # telemetry samples on its own thread

    def shutdown(self) -> None:
        self.monitor.stop()

    def _alert(self, alert: Any) -> None:
        """Once per event (the rules decide): a line in the status bar and a desktop notification."""
        self.say(alert_text(alert), ALERT_SHOWN_MS)
        notify_desktop(self.tray, alert)
