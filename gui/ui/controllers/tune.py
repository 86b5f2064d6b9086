"""Tune → Benchmarks: the sweep the Tune tab describes, planned like `tightfit bench` plans it on what this
machine runs, with an estimate of its time from the last reply's speeds; run on the window's engine by the one
benchmark runner, row by row; a row's settings put back on the sliders."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from gui.core.bench import (
    MAX_WINDOW_CONFIGS,
    BenchRow,
    BenchTest,
    Job,
    context_for,
    grid_size,
    plan_jobs,
    sweep_grid,
    time_summary,
)
from gui.core.engine_use import Use
from gui.core.params import LoadSettings
from gui.services.nvml import Nvml
from gui.services.system import physical_cores
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.controllers.uses import engine_use_words
from gui.ui.i18n import Tr
from gui.ui.model_picker import ModelPicker
from gui.ui.param_panel import ParamPanel
from gui.ui.tune_view import TuneRunner, TuneView, describe_config, estimate_s, loads_for, plan_summary

tr = Tr("tune_controller")


class TuneController(Feature):
    sweep_finished = Signal(object)  # list[BenchRow], after every Tune sweep (stopped or not)
    row_measured = Signal(object)  # BenchRow, each one measured (not skipped)

    def __init__(
        self,
        shared: Shared,
        *,
        nvml: Nvml,
        gpu_count: Callable[[], int],
        speeds: Callable[[], tuple[float, float] | None],
        load_s: Callable[[], float],
        picker: ModelPicker,
        params: ParamPanel,
        view: TuneView,
        parent: QObject | None = None,
    ) -> None:
        """``gpu_count``: this machine's GPUs NVML found (their memory is measured per test); ``speeds``: the
        decode and prompt rate of the last reply (or None), ``load_s``: how long the last load took, for the
        estimate; ``say``: a line in the status bar."""
        super().__init__(shared, parent)
        self.nvml = nvml
        self.gpu_count = gpu_count
        self.speeds = speeds
        self.load_s = load_s
        self.picker = picker
        self.params = params
        self.view = view
        self.runner: TuneRunner | None = None
        self._started = 0.0
        view.grid_changed.connect(self.replan)
        view.start_requested.connect(self.start)
        view.stop_requested.connect(self.stop)
        view.apply_requested.connect(self._apply)
        params.changed.connect(lambda _settings: self.replan())

    @property
    def running(self) -> bool:
        return self.runner is not None and self.runner.running

    def _plan(self) -> tuple[list[Job], dict[str, list[Any]], list[BenchTest], int]:
        """The sweep the Tune tab describes, planned like `tightfit bench` plans it; ValueError says why not."""
        context = self.planning.here()
        if context.header is None:
            raise ValueError(tr("select a model to plan a sweep"))
        lists, tests, reps = self.view.parsed()
        if (size := grid_size(lists)) > MAX_WINDOW_CONFIGS:  # planned on every keystroke: keep it a moment's work
            raise ValueError(
                tr(
                    "{size} configurations is more than one sweep here takes ({most}); "
                    "shorten a list, or run it with tightfit bench"
                ).format(size=f"{size:,}", most=MAX_WINDOW_CONFIGS)
            )
        base = context.settings
        base = base.with_values(n_ctx=max(base.n_ctx, context_for(tests)))
        configs = sweep_grid(base, lists)
        jobs = plan_jobs(context.header, configs, context.devices, context.margin_mib, context.ram_bandwidth_gbs, False)
        return jobs, lists, tests, reps

    def replan(self) -> None:
        entry = self.picker.current()
        if entry is not None and entry.header is not None:
            layers = entry.header.n_layer or 0
            self.view.set_defaults(self.params.settings(), layers + 1, physical_cores())
        if self.running:
            return
        try:
            jobs, _lists, tests, reps = self._plan()
        except ValueError as exc:
            self.view.say_error(exc)
            self.view.start_button.setEnabled(False)
            return
        runs = sum(1 for j in jobs if not j.skip)
        estimate = None
        if (speeds := self.speeds()) is not None:
            tg, pp = speeds
            estimate = estimate_s(tests, reps, runs, loads_for(jobs), tg, pp, self.load_s())
        self.view.say(plan_summary(len(jobs), loads_for(jobs), len(tests), len(jobs) - runs, estimate))
        self.view.start_button.setEnabled(runs > 0)

    def start(self) -> None:
        entry = self.picker.current()
        blocker = self.engine_use.blocker(Use.BENCH)
        if blocker is not None or entry is None:
            busy = engine_use_words(blocker) if blocker is not None else tr("The engine is busy (a reply or a load)")
            self.view.say(tr("{busy}; start the sweep when it is done.").format(busy=busy))
            return
        try:
            jobs, lists, tests, reps = self._plan()
        except ValueError as exc:
            self.view.say_error(exc)
            return
        header = entry.header
        path = entry.path
        count = self.gpu_count()
        runner = TuneRunner(
            client=self.bridge.client,
            model=path,
            jobs=jobs,
            tests=tests,
            reps=reps,
            load=lambda settings: self.session.load(path, settings, header, None),
            state=lambda: self.session.state,
            nvml=self.nvml if count else None,
            gpu_count=count,
            n_layer=header.n_layer if header is not None else None,
            parent=self,
        )
        self.runner = runner
        self.session.changed.connect(runner.on_state)
        self.bridge.engine_event.connect(runner.on_event)
        runner.row.connect(lambda row: self._row(row, lists))
        runner.progress.connect(self.view.show_progress)
        runner.finished.connect(self._finished)
        self.view.clear(len(jobs) * len(tests))
        self.view.set_running(True)
        self._started = time.monotonic()
        self.view.say(
            tr("Running {configs} configurations × {tests} tests…").format(configs=len(jobs), tests=len(tests))
        )
        self.engine_use.set(Use.BENCH, True)  # before it starts: a sweep with nothing to run ends at once
        runner.start()

    def stop(self) -> None:
        if self.runner is not None and self.runner.running:
            self.view.say(tr("Stopping after the repetition under way; what was measured stays…"))
            self.runner.stop()

    def shutdown(self) -> None:
        if self.running:
            assert self.runner is not None
            self.runner.stop()

    def _row(self, row: BenchRow, lists: dict[str, list[Any]]) -> None:
        self.view.add_row(row, describe_config(row.settings, lists))
        if not row.skipped:
            self.row_measured.emit(row)

    def _finished(self, partial: bool) -> None:
        runner = self.runner
        self.view.set_running(False)
        self.engine_use.set(Use.BENCH, False)
        if runner is None:
            return
        with contextlib.suppress(RuntimeError, TypeError):
            self.session.changed.disconnect(runner.on_state)
            self.bridge.engine_event.disconnect(runner.on_event)
        self.view.say_finished(partial, time_summary(runner.rows, time.monotonic() - self._started))
        self.sweep_finished.emit(runner.rows)

    def _apply(self, settings: LoadSettings) -> None:
        self.params.set_settings(settings)
        self.say(tr("The row's settings are on the sliders; Load to use them."))
