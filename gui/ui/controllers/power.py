"""Tune → Power caps: the card the Monitor shows, swept cap by cap while the loaded model decodes, the limit put
back when the sweep ends, is stopped, the engine dies or the window closes; the recommended cap applied in one
click through the Monitor's power panel. The Monitor's cap buttons wait while a sweep sets the limit."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from gui.core.engine_use import Use
from gui.core.power_sweep import SweepResult
from gui.services.bundle import GpuServices
from gui.services.power_sweep import EngineDecoder, EngineFeed, PowerSweep, default_warmup_s
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.controllers.uses import engine_use_words
from gui.ui.i18n import Tr, core_text, error_text
from gui.ui.monitor import MonitorView
from gui.ui.power_sweep_view import PowerSweepRunner, PowerSweepView

tr = Tr("power_controller")
log = logging.getLogger(__name__)
# How long a window closed mid-sweep waits for the limit to be put back (a real card's watchdog covers the rest).
POWER_RESTORE_WAIT_S = 15.0


class PowerSweepController(Feature):
    finished = Signal(object)  # SweepResult, or the one line that said why it could not start

    def __init__(
        self,
        shared: Shared,
        *,
        gpu: GpuServices,
        monitor: MonitorView,
        view: PowerSweepView,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.gpu = gpu
        self.monitor = monitor
        self.view = view
        self.runner: PowerSweepRunner | None = None
        self._tap: Callable[[Any], None] | None = None  # the feed's own bound method: taps are removed by identity
        self._cap_from_sweep = False
        view.start_requested.connect(self.start)
        view.stop_requested.connect(self.stop)
        view.apply_requested.connect(self._apply_recommended_cap)
        monitor.bridge.tick.connect(lambda _tick: self._show_card())
        monitor.power_panel.finished.connect(self._cap_applied)

    @property
    def running(self) -> bool:
        return self.runner is not None and self.view.running

    def _show_card(self) -> None:
        """The Monitor's GPU, for the sweep's caps and warm-up (after every tick; the view ignores repeats)."""
        index = self.monitor.selected_gpu
        sample = self.monitor.samples.get(index) if index is not None else None
        warmup = default_warmup_s(self.gpu.source, sample.index) if sample is not None else 0.0
        none = ""
        if sample is None and self.monitor.last_tick is not None and not self.monitor.samples:
            none = tr(
                "No NVIDIA GPU to sweep here: a power-cap sweep needs a card whose limit can be set "
                "(`tightfit --simulate v100-16gb` sweeps a simulated one)."
            )
        self.view.set_card(sample, warmup, none)

    def start(self) -> None:
        view = self.view
        if (blocker := self.engine_use.blocker(Use.POWER)) is not None:
            busy = engine_use_words(blocker)
            view.say(tr("{busy}; start the power sweep when it is done.").format(busy=busy))
            return
        if not self.session.state.ready:
            view.say(tr("Load a model first: at each cap the sweep measures it decoding."))
            return
        if self.monitor.power_panel.busy:
            view.say(tr("The power helper is still applying a cap; start the sweep when it is done."))
            return
        index = self.monitor.selected_gpu
        try:
            plan = view.plan()
        except ValueError as exc:
            view.say(error_text(exc, "power_sweep"))
            return
        feed = EngineFeed()
        sweep = PowerSweep(
            source=self.gpu.source,
            limiter=self.gpu.limiter,
            decoder=EngineDecoder(self.bridge.client, feed),
            index=index or 0,
            workload=plan.workload,
        )
        runner = PowerSweepRunner(sweep, plan, self)
        runner.row.connect(view.add_row)
        runner.progress.connect(view.show_progress)
        runner.finished.connect(self._done)
        runner.failed.connect(self._failed)
        self.runner = runner
        self._tap = feed.feed
        self.bridge.add_tap(self._tap)
        view.clear(len(plan.caps))
        view.set_running(True)
        view.say(
            tr("Sweeping {caps} caps; Stop keeps the caps measured and puts the limit back.").format(
                caps=len(plan.caps)
            )
        )
        self.monitor.power_panel.set_locked(
            tr("A power-cap sweep sets the limit now; it is put back when the sweep ends.")
        )
        self.engine_use.set(Use.POWER, True)
        runner.start()

    def stop(self) -> None:
        if self.runner is not None and self.view.running:
            self.view.say(tr("Stopping: the cap under way is dropped, the limit put back…"))
            self.runner.stop()

    def shutdown(self) -> None:
        """The window closes: a sweep under way stops (the engine's end also ends its decoding)."""
        runner = self.runner
        if runner is not None and runner.running:
            runner.stop()

    def wait_restored(self) -> None:
        """After the engine ended: wait a while for the limit to be put back."""
        runner = self.runner
        if runner is not None and runner.running and not runner.wait(POWER_RESTORE_WAIT_S):
            log.warning("the power sweep had not put the limit back when the window closed; its watchdog will")

    def _ended(self) -> None:
        if self._tap is not None:
            self.bridge.remove_tap(self._tap)
            self._tap = None
        self.view.set_running(False)
        self.monitor.power_panel.set_locked("")
        self.engine_use.set(Use.POWER, False)

    def _done(self, result: SweepResult) -> None:
        self._ended()
        self.view.show_result(result)
        self.finished.emit(result)

    def _failed(self, message: str) -> None:
        self._ended()
        reason = core_text("power_sweep", message)
        self.view.say(tr("The power sweep did not start: {reason}").format(reason=reason))
        self.finished.emit(message)

    def _apply_recommended_cap(self, watts: int) -> None:
        """One click: the Monitor's power panel applies it (its checks, helper and read-back), said here too."""
        panel = self.monitor.power_panel
        panel.cap_watts = watts
        self._cap_from_sweep = True
        panel.apply_cap()

    def _cap_applied(self, _report: Any) -> None:
        if self._cap_from_sweep:
            self._cap_from_sweep = False
            self.view.say_applied(self.monitor.power_panel.outcome_line())
