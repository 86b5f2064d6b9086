"""The Doctor: every check, off the UI thread, once the engine said what it is and the library has a model to
check against, and again after every new engine and every fix; the tab's badge; the fixes the window does
itself (a setting, a NUMA pin, the power panel, the engine's log)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from gui.core.doctor import Check, Status
from gui.services.bundle import DoctorRequest
from gui.ui.background import Background
from gui.ui.controllers.load import LoadController
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.doctor_view import DoctorView, summary, tab_title
from gui.ui.i18n import Tr, error_text
from gui.ui.load_bar import LoadBar
from gui.ui.model_picker import ModelPicker
from gui.ui.monitor import MonitorView
from gui.ui.param_panel import ParamPanel

tr = Tr("doctor_controller")
log = logging.getLogger(__name__)


class DoctorController(Feature):
    checked = Signal(object)  # tuple[Check, ...], after every run of the Doctor

    def __init__(
        self,
        shared: Shared,
        *,
        load: LoadController,
        pin_numa: Callable[[int], str],
        picker: ModelPicker,
        params: ParamPanel,
        monitor: MonitorView,
        bar: LoadBar,
        view: DoctorView,
        parent: QObject | None = None,
    ) -> None:
        """``pin_numa``: pins the engine and says how (gui/ui/controllers/engine.py); ``say``: a status-bar line."""
        super().__init__(shared, parent)
        self.load = load
        self.pin_numa = pin_numa
        self.picker = picker
        self.params = params
        self.monitor = monitor
        self.bar = bar
        self.view = view
        self.background = Background("doctor", parent=self)
        self._running = False
        self._closed = False
        self._first_scan_done = False
        view.run_requested.connect(self.run)
        view.action_requested.connect(self._action)
        picker.scanned.connect(self._scanned)

    def shutdown(self) -> None:
        self._closed = True
        self.background.shutdown()

    def engine_ready(self) -> None:
        """A new engine said what it is: check it, once the library has a model to check against."""
        if self._first_scan_done:
            self.run()

    def _scanned(self, *_: object) -> None:
        if self._first_scan_done:
            return
        self._first_scan_done = True
        if self.session.state.build is not None:
            self.run()

    def request(self) -> DoctorRequest:
        """The window as it stands: the load (or the sliders and the selected model), the plan, the engine, the
        monitor's latest readings."""
        state = self.session.state
        entry = self.picker.current()
        header = state.header if state.header is not None else entry.header if entry is not None else None
        return DoctorRequest(
            settings=state.settings if state.settings is not None else self.params.settings(),
            header=header,
            plan=self.load.plan,
            build=state.build,
            engine_pid=self.services.engine.pid,
            recent={index: tuple(samples) for index, samples in self.monitor.recent.items()},
        )

    def run(self) -> None:
        """Every check, off the UI thread: NVML, sysfs, a toolkit's nvcc and pkexec may each take a while."""
        if self._running or self._closed:
            return
        self._running = True
        request = self.request()
        self.view.show_running()
        self.background.run(lambda: self.services.doctor(request), self._done, self._failed)

    def _done(self, checks: tuple[Check, ...]) -> None:
        self._running = False
        self.view.show_checks(checks)
        index = self.tabs.indexOf(self.view)
        self.tabs.setTabIcon(index, self.view.badge_icon())
        status = self.view.worst()
        counts = sum(c.status in (Status.FAIL, Status.WARN) for c in checks)
        words = {Status.FAIL: tr("The Doctor needs attention"), Status.WARN: tr("The Doctor has advice")}
        word = words.get(status) if status else None
        self.tabs.setTabText(index, tab_title(counts if word else 0))
        self.tabs.setTabToolTip(index, f"{word}: {summary(self.view.checks)}" if word else "")
        self.checked.emit(checks)

    def _failed(self, exc: Exception) -> None:
        self._running = False
        log.error("doctor failed", exc_info=exc)
        self.view.show_failed(error_text(exc, "doctor") or type(exc).__name__)

    def _action(self, action: str) -> None:
        """A fix the window does itself; the next load uses it, and the status line says so."""
        kind, _, arg = action.partition(":")
        if kind == "set":
            key, _, value = arg.partition("=")
            try:
                changed = self.params.set_value(key, value)
            except ValueError as exc:
                self.say(tr("Could not apply the fix: {error}").format(error=error_text(exc, "params")))
                return
            self.say(tr("{change}. It applies at the next load.").format(change=changed))
        elif kind == "pin_numa" and arg.isdigit():
            self.say(self.pin_numa(int(arg)))
        elif action == "open:power":
            self.tabs.setCurrentWidget(self.monitor)
            self.monitor.power_panel.spin.setFocus()
        elif action == "open:log":
            self.bar.open_log()
        self.run()
