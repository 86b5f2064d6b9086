"""The main window: library, load settings and memory plan on the left; chat, monitor and quants on the right."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStyle,
    QSystemTrayIcon,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gui import __version__
from gui.core import protocol as p
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
from gui.core.chat import Conversation
from gui.core.chat_formats import format_label
from gui.core.doctor import Check, Status
from gui.core.llama_log import Failure
from gui.core.load_state import LoadState, Phase
from gui.core.memory_check import MemoryCheck, correction_for, correction_key, recorded
from gui.core.params import LoadSettings, changes, describe, llama_gpu_layers
from gui.core.planner import Device, Plan, Verdict, auto_fit, model_shape, plan
from gui.core.power_sweep import SweepResult
from gui.core.preferences import (
    ALERT_C,
    CAP_WATTS,
    CHAT_FORMATS,
    GPU_EXPORTERS,
    INTERVAL_S,
    LAST_SETTINGS,
    MARGIN_MIB,
    MEMORY_CHECKS,
    NUMA_PINS,
    RPC_LINK,
    SAMPLING_PRESET,
    SAMPLING_PRESETS,
    SERVE_HOST,
    SERVE_PORT_NUMBER,
    SERVE_REMOTE,
    Preference,
)
from gui.core.recovery import safer_settings
from gui.core.speed_hint import SpeedFacts, speed_hint
from gui.core.tuning_card import CardFacts
from gui.core.words import english, message_of
from gui.services.api_server import ApiActivity, ApiServer
from gui.services.bundle import DoctorRequest, Services
from gui.services.engine_client import EngineUnavailable, WorkerExited
from gui.services.models import ModelEntry
from gui.services.numa import NumaPin, describe_cpus, machine_id, node_cpus, pin_running
from gui.services.nvml import DriverInfo, GpuInfo, GpuQuery, engine_memory_mib
from gui.services.power_sweep import EngineDecoder, EngineFeed, PowerSweep, default_warmup_s
from gui.services.system import physical_cores
from gui.services.telemetry import SimulatedSource
from gui.ui.background import Background
from gui.ui.chat_pane import ChatPane
from gui.ui.doctor_view import DoctorView, summary
from gui.ui.engine_bridge import EngineBridge
from gui.ui.export_menu import ExportMenu
from gui.ui.history_panel import HistoryPanel
from gui.ui.i18n import Tr, core_text, error_text, install_language_control, sentence_text
from gui.ui.journey_view import JourneyView
from gui.ui.load_session import LoadSession
from gui.ui.model_picker import ModelPicker, describe_group
from gui.ui.models_tab import ModelsTab
from gui.ui.monitor import MonitorView, alert_text, notify_desktop
from gui.ui.param_panel import ParamPanel
from gui.ui.plain import plain_label, plain_tip
from gui.ui.plan_panel import PlanPanel, planner_text
from gui.ui.power_sweep_view import PowerSweepRunner, PowerSweepView
from gui.ui.scrolling import vertical_scroll
from gui.ui.serve_panel import ServeChoice, ServePanel
from gui.ui.theme import install_theme_control, themed_style
from gui.ui.tune_view import TuneRunner, TuneView, describe_config, estimate_s, loads_for, plan_summary

# Alt+O: Alt+D is the history's Delete.
tr = Tr("main_window")
DOCTOR_TAB = tr.mark("D&octor")
# How long a window closed mid-sweep waits for the limit to be put back (a real card's watchdog covers the rest).
POWER_RESTORE_WAIT_S = 15.0
API_RATE_SHOWN_MS = 1500  # an API reply's decode rate stays on the monitor's chart this long after it ends
log = logging.getLogger(__name__)
T = TypeVar("T")


class MainWindow(QMainWindow):
    """The window: widgets only. Its services come from the composition root (gui/app.py); the load it
    is in is the one LoadSession every view observes."""

    engine_ready = Signal()  # the worker said hello
    model_loaded = Signal(object)  # p.Loaded
    load_finished = Signal(object)  # after every load attempt: True loaded, False failed
    gpus_found = Signal(object)  # GpuQuery, once detection finished
    ram_measured = Signal(object)  # float GB/s or None, once measured
    planned = Signal(object)  # Plan or None, after every re-plan
    verified = Signal(object)  # p.DryRunResult
    engine_died = Signal(object)  # WorkerExited
    doctor_checked = Signal(object)  # tuple[Check, ...], after every run of the Doctor
    sweep_finished = Signal(object)  # list[BenchRow], after every Tune sweep (stopped or not)
    power_sweep_finished = Signal(object)  # SweepResult, or the one line that said why it could not start
    serving_changed = Signal(object)  # (host, port) once the API listens; None when it stopped or could not start
    memory_measured = Signal(object)  # list[MemoryCheck], after a load on this machine's GPUs was measured

    def __init__(self, services: Services, settings: LoadSettings, given: Iterable[str] = ()) -> None:
        """``given``: the settings named on the command line; they win over what the model selected at start
        remembers from its last load (once: the models chosen after it load as they last did)."""
        super().__init__()
        self.services = services
        self._given = {key: getattr(settings, key) for key in given}
        self._given_settings = settings
        simulate = services.simulated
        self.simulate = simulate
        self.background = Background("gpu-detect", parent=self)
        self.plan: Plan | None = None
        self.ram_bandwidth_gbs: float | None = None  # measured once at start, for the decode ceiling
        self._verify_request: int | None = None
        self.overcommit_dialog: QMessageBox | None = None
        self._closed = False
        self._restarts: list[float] = []
        self._cannot_start = False
        self._last_good: LoadState | None = None  # the last load that worked, to go back to if one fails
        self._after_failure = ""  # why the load now under way goes back to the last good one
        self._selected_path: Path | None = None
        self.gpus: list[GpuInfo] = []  # NVML's, once detection finished
        self.driver_version: str | None = None
        title = f"Tightfit {__version__}"
        if simulate:
            title += tr(" — SIMULATED {card}").format(card=" + ".join(c.name for c in simulate))
        self.setWindowTitle(title)
        self.resize(_first_size(self))
        self.bridge = EngineBridge(services.engine, self)
        self.session = LoadSession(self.bridge, self)

        # left column: model, settings, load
        self.store = services.settings
        models_dir = services.models_dir
        self.picker = ModelPicker(services.library, models_dir, self)
        self.folder_label = plain_label(parent=self)
        self.folder_label.setWordWrap(True)
        themed_style(self.folder_label, lambda palette: f"color: {palette.muted}")
        self.rescan_button = QPushButton(tr("&Rescan"), self)
        self.add_folder_button = QPushButton(tr("Add &folder…"), self)
        models_box = QGroupBox(tr("Model"), self)
        models_layout = QVBoxLayout(models_box)
        models_layout.addWidget(self.picker)
        row = QHBoxLayout()
        row.addWidget(self.folder_label, 1)
        row.addWidget(self.add_folder_button)
        row.addWidget(self.rescan_button)
        models_layout.addLayout(row)

        self.params = ParamPanel(settings, self)
        params_box = QGroupBox(tr("Load settings"), self)
        QVBoxLayout(params_box).addWidget(self.params)
        self.plan_panel = PlanPanel(self, simulated=simulate)
        plan_box = QGroupBox(tr("Memory plan"), self)
        QVBoxLayout(plan_box).addWidget(self.plan_panel)
        # The plan takes the height it needs and no more; the rest goes to the library and settings.
        plan_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

        self.load_button = QPushButton(tr("&Load"), self)
        self.load_button.setAccessibleName(tr("Load model"))
        self.load_button.setToolTip(tr("Load the selected model with these settings (Ctrl+L)"))
        self.unload_button = QPushButton(tr("&Unload"), self)
        self.unload_button.setAccessibleName(tr("Unload model"))
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress.setTextVisible(True)
        self.progress.setAccessibleName(tr("Load progress"))
        self.load_status = plain_label(tr("No model loaded."), self)  # says file names, engine errors, log lines
        self.load_status.setWordWrap(True)
        load_row = QHBoxLayout()
        load_row.addWidget(self.load_button)
        load_row.addWidget(self.unload_button)
        load_row.addWidget(self.progress, 1)
        # llama.cpp's own words after a failure, one click away.
        self.log_button = QPushButton(tr("Engine log…"), self)
        self.log_button.setToolTip(tr("Open the log of the engine that stopped"))
        self.log_button.hide()
        self.log_button.clicked.connect(self._open_log)
        self._log_path: Path | None = None
        load_row.addWidget(self.log_button)
        # The model and settings as llama.cpp and koboldcpp take them, and tuning cards to keep or share them.
        self.export_background = Background("export", parent=self)  # hashing a 20 GB model takes its time
        self.export_menu = ExportMenu(
            model=lambda: entry.path if (entry := self.picker.current()) is not None else None,
            settings=self.params.settings,
            numa_node=lambda: self.store.read(NUMA_PINS).get(machine_id()),
            background=self.export_background,
            facts=self._card_facts,
            parent=self,
        )
        load_row.addWidget(self.export_menu)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 4, 0)
        left_layout.addWidget(models_box, 1)
        left_layout.addWidget(params_box)
        self.picker.setMinimumHeight(90)
        self.picker.setMaximumHeight(140)
        # On a small screen the library and the settings scroll; the plan below them stays in view, so a
        # slider's effect is always seen.
        left_scroll = vertical_scroll(left, self)
        # Load stays in view below the scrolling part, whatever the window's height.
        left_column = QWidget(self)
        column_layout = QVBoxLayout(left_column)
        column_layout.setContentsMargins(9, 0, 0, 4)
        column_layout.addWidget(left_scroll, 1)
        column_layout.addWidget(plan_box)
        column_layout.addLayout(load_row)
        column_layout.addWidget(self.load_status)
        left.setMinimumWidth(310)
        left_scroll.setMinimumWidth(326)

        self.chat = ChatPane(self.bridge, self.session, self)
        self.history = HistoryPanel(services.history, self)
        chat_split = QSplitter(Qt.Orientation.Horizontal, self)
        chat_split.addWidget(self.history)
        chat_split.addWidget(self.chat)
        chat_split.setStretchFactor(1, 1)
        # On a narrow window the chat list gives way first (drag it back), never the chat itself.
        chat_split.setCollapsible(0, True)
        chat_split.setCollapsible(1, False)
        chat_split.setSizes([200, 520])
        chat_box = QWidget(self)
        chat_layout = QVBoxLayout(chat_box)
        chat_layout.setContentsMargins(4, 4, 4, 4)
        chat_layout.addWidget(chat_split)
        self.monitor = MonitorView(services.gpu, parent=self)
        self.tabs = QTabWidget(self)
        self.tabs.addTab(chat_box, tr("&Chat"))
        self.tabs.addTab(self.monitor, tr("&Monitor (SIMULATED)") if simulate else tr("&Monitor"))
        self.models_tab = ModelsTab(models_dir, services.hub, parent=self)
        self.tabs.addTab(self.models_tab, tr("&Quants"))
        self.doctor = DoctorView(self)
        self.doctor.run_requested.connect(self.run_doctor)
        self.doctor.action_requested.connect(self._doctor_action)
        self.doctor_background = Background("doctor", parent=self)
        self._doctor_running = False
        self.tabs.addTab(self.doctor, tr(DOCTOR_TAB))
        self.journey = JourneyView(services.journey, self)
        self.tabs.addTab(self.journey, tr("&Journey"))
        self.tune = TuneView(self)
        self.power_sweep = PowerSweepView(self)
        self.tune_pages = QTabWidget(self)  # benchmarks of settings, and the power-cap sweep
        self.tune_pages.addTab(self.tune, tr("Benchmarks"))
        self.tune_pages.addTab(self.power_sweep, tr("Power caps (SIMULATED)") if simulate else tr("Power caps"))
        self.tabs.addTab(self.tune_pages, tr("Tune"))
        self.serve_panel = ServePanel(self)
        self.tabs.addTab(self.serve_panel, tr("Ser&ve"))
        self.api: ApiServer | None = None  # the OpenAI-compatible API on this engine, while serving
        self._api_timer = QTimer(self)  # its counts (requests arrive between activities) and the held state
        self._api_timer.setInterval(1000)
        self._api_timer.timeout.connect(self._api_tick)
        self._api_counted = (0.0, 0)  # (when, API tokens by then) at the last tick
        self.power_runner: PowerSweepRunner | None = None
        self._power_tap: Callable[[Any], None] | None = None
        self.tune_runner: TuneRunner | None = None
        self._tune_jobs: list[Job] = []
        self._tune_started = 0.0
        self._last_speeds: tuple[float, float] | None = None  # decode, prompt tok/s of the last reply
        self._speeds_of: tuple[Path | None, LoadSettings | None] = (None, None)  # ... with this model and settings
        self._last_load_s = 10.0
        # The quant table re-plans every quant (auto-fit each): follow the sliders, but not on every step.
        self._quants_timer = QTimer(self)
        self._quants_timer.setSingleShot(True)
        self._quants_timer.setInterval(150)
        self._quants_timer.timeout.connect(self._refresh_quants)
        self.tray: QSystemTrayIcon | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            # A tray icon must be visible (and have an icon) for its notifications to show.
            icon = QApplication.windowIcon()  # the app's own (gui/app.py), where it was set
            if icon.isNull():
                icon = self.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
            self.tray = QSystemTrayIcon(icon, self)
            self.tray.setToolTip("Tightfit")
            self.tray.show()

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left_column)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([560, 720])
        self.setCentralWidget(splitter)

        # The keyboard reaches everything: Load, the chat search and each tab have their own keys.
        QShortcut(QKeySequence("Ctrl+L"), self, self.load_selected)
        QShortcut(QKeySequence("Ctrl+F"), self, self._find_chats)
        for number in range(self.tabs.count()):
            QShortcut(QKeySequence(f"Ctrl+{number + 1}"), self, lambda n=number: self.tabs.setCurrentIndex(n))
        # The engine line is a way into the Doctor: what the engine was built for is checked there.
        self.engine_label = QPushButton(tr("Engine: starting…"), self)
        self.engine_label.setFlat(True)
        self.engine_label.setAccessibleName(tr("Engine build: open the Doctor"))
        self.engine_label.setCursor(Qt.CursorShape.PointingHandCursor)
        self.engine_label.clicked.connect(lambda: self.tabs.setCurrentWidget(self.doctor))
        self.statusBar().addPermanentWidget(self.engine_label)
        self.theme_box = install_theme_control(self, self.store)  # System / Light / Dark, remembered
        self.language_box = install_language_control(self, self.store)  # System / English / 简体中文

        pin = self.store.read(NUMA_PINS).get(machine_id())
        if pin is not None and (cpus := node_cpus(pin)):
            self.bridge.client.numa = NumaPin(pin, cpus)  # before the engine starts: see start()
        # The Doctor first runs once the engine said what it is and the library has a model to check against.
        self._first_scan_done = False
        self.picker.scanned.connect(self._scanned_for_doctor)
        self.picker.selected.connect(self._model_selected)
        self.rescan_button.clicked.connect(lambda: self.picker.rescan())
        self.add_folder_button.clicked.connect(self._add_folder_clicked)
        self.picker.add_folder_requested.connect(self._add_folder_clicked)
        self.picker.hub_requested.connect(lambda: self.tabs.setCurrentWidget(self.models_tab))
        self.picker.hub_requested.connect(self.models_tab.focus_repository)
        self.picker.message.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.export_menu.message.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.export_menu.settings_opened.connect(self.params.set_settings)
        self.models_tab.local_chosen.connect(self._quant_chosen)
        self.models_tab.download_finished.connect(self._downloaded)
        self.tabs.currentChanged.connect(lambda _: self._refresh_quants())  # at once: the tab is being shown
        self._show_folders()
        self.load_button.clicked.connect(self.load_selected)
        self.unload_button.clicked.connect(self.unload)
        self.bridge.engine_event.connect(self._on_event)
        self.session.changed.connect(self._load_state_changed)
        self.session.engine_died.connect(self._engine_died)
        self.params.changed.connect(self.replan)
        self.params.changed.connect(lambda _settings: self._update_buttons())
        self.plan_panel.target_changed.connect(self.replan)
        self.plan_panel.auto_fit_requested.connect(self.auto_fit)
        self.plan_panel.verify_requested.connect(self.verify)
        # RPC workers: their devices (asked off the UI thread) go in front of the plan's, the link into its speed.
        self.params.rpc.answers_changed.connect(self._workers_changed)
        self.params.rpc.link_changed.connect(self._workers_changed)
        self.params.rpc.link_changed.connect(lambda link: self.store.write(RPC_LINK, link))
        self.chat.new_chat_requested.connect(self.new_chat)
        self.chat.conversation_changed.connect(lambda: self.history.save(self.chat.conversation))
        self.history.opened.connect(lambda _id, conversation: self.chat.set_conversation(conversation))
        self.history.can_switch = lambda: not self.chat.streaming
        self.history.failed.connect(lambda message: self.statusBar().showMessage(message, 15000))
        self.chat.sampling_panel.preset_saved.connect(self._preset_saved)
        self.chat.chat_format_chosen.connect(self._chat_format_chosen)
        self.chat.live_rate.connect(self.monitor.set_engine_rate)
        self.chat.reply_finished.connect(self._hint_speed)
        self.chat.reply_finished.connect(
            lambda stats: self.journey.recorder.record_reply(stats, self.session.state, here=self._planned_here())
        )
        self.journey.failed.connect(lambda message: self.statusBar().showMessage(message, 15000))
        if self.store.warning:  # a settings file it could not use was set aside: say so once the window shows
            QTimer.singleShot(0, lambda: self.statusBar().showMessage(sentence_text(self.store.warning or ""), 30000))
        self.chat.reply_finished.connect(self._note_speeds)
        self.tune.grid_changed.connect(self._tune_replan)
        self.tune.start_requested.connect(self.start_sweep)
        self.tune.stop_requested.connect(self.stop_sweep)
        self.tune.apply_requested.connect(self._tune_apply)
        self.params.changed.connect(lambda _settings: self._tune_replan())
        self.power_sweep.start_requested.connect(self.start_power_sweep)
        self.power_sweep.stop_requested.connect(self.stop_power_sweep)
        self.power_sweep.apply_requested.connect(self._apply_recommended_cap)
        self.monitor.bridge.tick.connect(lambda _tick: self._power_sweep_card())
        self.monitor.power_panel.finished.connect(self._cap_applied)
        self._cap_from_sweep = False
        self.serve_panel.start_requested.connect(self.start_serving)
        self.serve_panel.stop_requested.connect(self.stop_serving)
        self.chat.streaming_changed.connect(lambda _streaming: self._sync_api_hold())
        self.session.changed.connect(lambda _state, _before: self._sync_api_hold())
        self._hinted: LoadState | None = None  # the load a speed hint was given for: once is enough
        self.monitor.alert.connect(self._alert)
        self.monitor.message.connect(lambda text: self.statusBar().showMessage(text, 15000))
        self.monitor.cap_changed.connect(lambda watts: self.store.write(CAP_WATTS, int(watts)))
        self.monitor.threshold_changed.connect(lambda celsius: self.store.write(ALERT_C, celsius))
        self.monitor.interval_changed.connect(lambda seconds: self.store.write(INTERVAL_S, seconds))
        self.monitor.exporters_changed.connect(lambda urls: self.store.write(GPU_EXPORTERS, urls))
        self._restore_preferences()
        self.gpus_found.connect(self._gpus_found)
        self.ram_measured.connect(self._ram_measured)
        self._update_buttons()

    # ---- start-up -------------------------------------------------------------------------

    def _hint_speed(self, stats: p.ReplyStats) -> None:
        """Decoding far below the plan's ceiling: say the likely reason and what to try, once per load."""
        state = self.session.state
        if not state.ready or state.header is None or state.settings is None or self._hinted is state:
            return
        build = state.build
        offload = build is not None and build.gpu_offload
        here = self.plan_panel.current_target().here
        devices = self.plan_panel.devices() if offload and here else ()
        header, settings = state.header, state.settings
        planned, _ = _planning(lambda: plan(header, settings, devices, ram_bandwidth_gbs=self.ram_bandwidth_gbs))
        if planned is None:
            return
        tick = self.monitor.last_tick
        sample = self.monitor.samples.get(self.monitor.selected_gpu) if self.monitor.selected_gpu is not None else None
        hint = speed_hint(
            SpeedFacts(
                decode_tok_s=stats.engine_decode_tok_s,
                n_gen=stats.n_gen,
                ceiling_tok_s=planned.predicted_tg_tok_s,
                threads=settings.n_threads,
                logical_cores=os.cpu_count(),
                physical_cores=physical_cores(),
                cpu_busy_pct=tick.host.cpu_pct if tick is not None else (),
                layers_on_gpu=planned.layers_on_gpu,
                n_layers=planned.n_layer + 1,
                gpu_offload=offload,
                throttle_reasons=(sample.throttle_reasons or ()) if sample is not None else (),
            )
        )
        if hint:
            self._hinted = state
            self.chat.show_notice(tr("Slower than it could be: {hint}").format(hint=planner_text(hint)))

    def _find_chats(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.history.search.setFocus()
        self.history.search.selectAll()

    def start(self, select: Path | None = None) -> None:
        """Start the engine process and the first scan; both finish in the background."""
        self.chat.input.setFocus()  # what a user does first is type
        self.bridge.client.start()
        self.picker.start(select)
        self.history.restore_last()
        self.monitor.start()  # telemetry samples on its own thread
        # NVML can take a while to answer (or time out on a sick driver): never on the UI thread.
        self.background.run(self.services.query_gpus, self.gpus_found.emit)
        # A failed measurement leaves the ceiling "n/a" for host-resident weights.
        self.background.run(self.services.measure_ram, self.ram_measured.emit, lambda _: self.ram_measured.emit(None))

    # ---- doctor ---------------------------------------------------------------------------

    def _scanned_for_doctor(self, *_: object) -> None:
        if self._first_scan_done:
            return
        self._first_scan_done = True
        if self.session.state.build is not None:
            self.run_doctor()

    def run_doctor(self) -> None:
        """Every check, off the UI thread: NVML, sysfs, a toolkit's nvcc and pkexec may each take a while."""
        if self._doctor_running or self._closed:
            return
        self._doctor_running = True
        state = self.session.state
        entry = self.picker.current()
        header = state.header if state.header is not None else entry.header if entry is not None else None
        plan = self.plan
        heads = None
        if header is not None:
            with contextlib.suppress(ValueError):  # a header the planner cannot read has no heads to check
                heads = model_shape(header).attn_heads
        request = DoctorRequest(
            settings=state.settings if state.settings is not None else self.params.settings(),
            n_ctx_train=header.context_length if header is not None else None,
            host_weights_mib=plan.host.weights_mib if plan is not None else None,
            attn_heads=heads,
            build=state.build,
            engine_pid=self.bridge.client.pid,
            recent={index: tuple(samples) for index, samples in self.monitor.recent.items()},
        )
        self.doctor.show_running()
        self.doctor_background.run(lambda: self.services.doctor(request), self._doctor_done, self._doctor_failed)

    def _doctor_done(self, checks: tuple[Check, ...]) -> None:
        self._doctor_running = False
        self.doctor.show_checks(checks)
        index = self.tabs.indexOf(self.doctor)
        self.tabs.setTabIcon(index, self.doctor.badge_icon())
        status = self.doctor.worst()
        counts = sum(c.status in (Status.FAIL, Status.WARN) for c in checks)
        words = {Status.FAIL: tr("The Doctor needs attention"), Status.WARN: tr("The Doctor has advice")}
        word = words.get(status) if status else None
        self.tabs.setTabText(index, f"{tr(DOCTOR_TAB)} ({counts})" if word else tr(DOCTOR_TAB))
        self.tabs.setTabToolTip(index, f"{word}: {summary(self.doctor.checks)}" if word else "")
        self.doctor_checked.emit(checks)

    def _doctor_failed(self, exc: Exception) -> None:
        self._doctor_running = False
        log.error("doctor failed", exc_info=exc)
        self.doctor.show_failed(error_text(exc, "doctor") or type(exc).__name__)

    def _doctor_action(self, action: str) -> None:
        """A fix the window does itself; the next load uses it, and the status line says so."""
        kind, _, arg = action.partition(":")
        if kind == "set":
            key, _, value = arg.partition("=")
            try:
                changed = self.params.set_value(key, value)
            except ValueError as exc:
                self.statusBar().showMessage(
                    tr("Could not apply the fix: {error}").format(error=error_text(exc, "params")), 15000
                )
                return
            self.statusBar().showMessage(tr("{change}. It applies at the next load.").format(change=changed), 15000)
        elif kind == "pin_numa" and arg.isdigit():
            self.statusBar().showMessage(self.pin_numa(int(arg)), 15000)
        elif action == "open:power":
            self.tabs.setCurrentWidget(self.monitor)
            self.monitor.power_panel.spin.setFocus()
        elif action == "open:log":
            self._open_log()
        self.run_doctor()

    # ---- tune -------------------------------------------------------------------------------

    def _note_speeds(self, stats: p.ReplyStats) -> None:
        if stats.engine_decode_tok_s and stats.prompt_tok_s:
            self._last_speeds = (stats.engine_decode_tok_s, stats.prompt_tok_s)
            self._speeds_of = (self.session.state.model, self.session.state.settings)

    def _tune_plan(self) -> tuple[list[Job], dict[str, list[Any]], list[BenchTest], int]:
        """The sweep the Tune tab describes, planned like `tightfit bench` plans it; ValueError says why not."""
        entry = self.picker.current()
        if entry is None or entry.header is None:
            raise ValueError(tr("select a model to plan a sweep"))
        lists, tests, reps = self.tune.parsed()
        if (size := grid_size(lists)) > MAX_WINDOW_CONFIGS:  # planned on every keystroke: keep it a moment's work
            raise ValueError(
                tr(
                    "{size} configurations is more than one sweep here takes ({most}); "
                    "shorten a list, or run it with tightfit bench"
                ).format(size=f"{size:,}", most=MAX_WINDOW_CONFIGS)
            )
        base = self.params.settings()
        base = base.with_values(n_ctx=max(base.n_ctx, context_for(tests)))
        configs = sweep_grid(base, lists)
        header = entry.header
        jobs = plan_jobs(
            header, configs, self._devices_here(), self.plan_panel.margin_mib(), self.ram_bandwidth_gbs, False
        )
        return jobs, lists, tests, reps

    def _devices_here(self) -> tuple[Device, ...]:
        """What a load on this machine runs on, whatever "what if" card the plan panel shows: a sweep runs here."""
        target = self.plan_panel.current_target()
        if target.here:
            return target.devices
        remote = self.plan_panel.remote  # a load here uses the workers whatever card the panel shows
        for candidate in self.plan_panel.targets:
            if candidate.measured or candidate.simulated:
                return remote + (() if self.plan_panel.engine_unusable(candidate) else candidate.devices)
        return remote

    def _tune_replan(self) -> None:
        entry = self.picker.current()
        if entry is not None and entry.header is not None:
            layers = entry.header.n_layer or 0
            self.tune.set_defaults(self.params.settings(), layers + 1, physical_cores())
        if self.tune_runner is not None and self.tune_runner.running:
            return
        try:
            jobs, _lists, tests, reps = self._tune_plan()
        except ValueError as exc:
            self.tune.say_error(exc)
            self.tune.start_button.setEnabled(False)
            return
        runs = sum(1 for j in jobs if not j.skip)
        estimate = None
        if self._last_speeds is not None:
            tg, pp = self._last_speeds
            estimate = estimate_s(tests, reps, runs, loads_for(jobs), tg, pp, self._last_load_s)
        self.tune.say(plan_summary(len(jobs), loads_for(jobs), len(tests), len(jobs) - runs, estimate))
        self.tune.start_button.setEnabled(runs > 0)

    def _sweep_kind(self) -> str:
        """Which sweep holds the engine: "benchmark sweep", "power-cap sweep", or '' when none does."""
        if self.tune_runner is not None and self.tune_runner.running:
            return "benchmark sweep"
        if self.power_runner is not None and self.power_sweep.running:
            return "power-cap sweep"
        return ""

    def _sweeping(self) -> str:
        """What holds the engine for a sweep, in words ('' when none does)."""
        kind = self._sweep_kind()
        if kind == "benchmark sweep":
            return tr("A benchmark sweep is using the engine (Tune tab)")
        if kind == "power-cap sweep":
            return tr("A power-cap sweep is using the engine (Tune tab, Power caps)")
        return ""

    def start_sweep(self) -> None:
        entry = self.picker.current()
        busy = self._sweeping() or self._api_busy()
        if self.chat.streaming or self.session.state.busy or entry is None or busy:
            busy = busy or tr("The engine is busy (a reply or a load)")
            self.tune.say(tr("{busy}; start the sweep when it is done.").format(busy=busy))
            return
        try:
            jobs, lists, tests, reps = self._tune_plan()
        except ValueError as exc:
            self.tune.say_error(exc)
            return
        header = entry.header
        runner = TuneRunner(
            client=self.bridge.client,
            model=entry.path,
            jobs=jobs,
            tests=tests,
            reps=reps,
            load=lambda settings: self.session.load(entry.path, settings, header, None),
            state=lambda: self.session.state,
            nvml=self.services.gpu.nvml if self.gpus else None,
            gpu_count=len(self.gpus),
            n_layer=header.n_layer if header is not None else None,
            parent=self,
        )
        self.tune_runner = runner
        self._tune_jobs = jobs
        self.session.changed.connect(runner.on_state)
        self.bridge.engine_event.connect(runner.on_event)
        runner.row.connect(lambda row: self._tune_row(row, lists))
        runner.progress.connect(self.tune.show_progress)
        runner.finished.connect(self._sweep_finished)
        self.tune.clear(len(jobs) * len(tests))
        self.tune.set_running(True)
        self._tune_started = time.monotonic()
        self.tune.say(
            tr("Running {configs} configurations × {tests} tests…").format(configs=len(jobs), tests=len(tests))
        )
        runner.start()
        self._engine_use_changed()

    def stop_sweep(self) -> None:
        if self.tune_runner is not None and self.tune_runner.running:
            self.tune.say(tr("Stopping after the repetition under way; what was measured stays…"))
            self.tune_runner.stop()

    def _tune_row(self, row: BenchRow, lists: dict[str, list[Any]]) -> None:
        self.tune.add_row(row, describe_config(row.settings, lists))
        if not row.skipped:
            self.journey.recorder.record_bench_row(row.to_dict(), self.session.state, here=self._planned_here())

    def _sweep_finished(self, partial: bool) -> None:
        runner = self.tune_runner
        self.tune.set_running(False)
        self._engine_use_changed()
        if runner is None:
            return
        with contextlib.suppress(RuntimeError, TypeError):
            self.session.changed.disconnect(runner.on_state)
            self.bridge.engine_event.disconnect(runner.on_event)
        self.tune.say_finished(partial, time_summary(runner.rows, time.monotonic() - self._tune_started))
        self.sweep_finished.emit(runner.rows)

    def _tune_apply(self, settings: LoadSettings) -> None:
        self.params.set_settings(settings)
        self.statusBar().showMessage(tr("The row's settings are on the sliders; Load to use them."), 15000)

    # ---- the power-cap sweep ---------------------------------------------------------------

    def _power_sweep_card(self) -> None:
        """The Monitor's GPU, for the sweep's caps and warm-up (after every tick; the view ignores repeats)."""
        index = self.monitor.selected_gpu
        sample = self.monitor.samples.get(index) if index is not None else None
        source = self.services.gpu.source
        warmup = default_warmup_s(source, sample.index) if sample is not None else 0.0
        none = ""
        if sample is None and self.monitor.last_tick is not None and not self.monitor.samples:
            none = tr(
                "No NVIDIA GPU to sweep here: a power-cap sweep needs a card whose limit can be set "
                "(`tightfit --simulate v100-16gb` sweeps a simulated one)."
            )
        self.power_sweep.set_card(sample, warmup, none)

    def start_power_sweep(self) -> None:
        view = self.power_sweep
        busy = self._sweeping() or self._api_busy()
        if busy or self.chat.streaming or self.session.state.busy:
            busy = busy or tr("The engine is busy (a reply or a load)")
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
        gpu = self.services.gpu
        feed = EngineFeed()
        sweep = PowerSweep(
            source=gpu.source,
            limiter=gpu.limiter,
            decoder=EngineDecoder(self.bridge.client, feed),
            index=index or 0,
            workload=plan.workload,
        )
        runner = PowerSweepRunner(sweep, plan, self)
        runner.row.connect(view.add_row)
        runner.progress.connect(view.show_progress)
        runner.finished.connect(self._power_sweep_done)
        runner.failed.connect(self._power_sweep_failed)
        self.power_runner = runner
        self._power_tap = feed.feed
        self.bridge.add_tap(feed.feed)
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
        self._engine_use_changed()
        runner.start()

    def stop_power_sweep(self) -> None:
        if self.power_runner is not None and self.power_sweep.running:
            self.power_sweep.say(tr("Stopping: the cap under way is dropped, the limit put back…"))
            self.power_runner.stop()

    def _power_sweep_ended(self) -> None:
        if self._power_tap is not None:
            self.bridge.remove_tap(self._power_tap)
            self._power_tap = None
        self.power_sweep.set_running(False)
        self.monitor.power_panel.set_locked("")
        self._engine_use_changed()

    def _power_sweep_done(self, result: SweepResult) -> None:
        self._power_sweep_ended()
        self.power_sweep.show_result(result)
        self.power_sweep_finished.emit(result)

    def _power_sweep_failed(self, message: str) -> None:
        self._power_sweep_ended()
        reason = core_text("power_sweep", message)
        self.power_sweep.say(tr("The power sweep did not start: {reason}").format(reason=reason))
        self.power_sweep_finished.emit(message)

    def _apply_recommended_cap(self, watts: int) -> None:
        """One click: the Monitor's power panel applies it (its checks, helper and read-back), said here too."""
        panel = self.monitor.power_panel
        panel.cap_watts = watts
        self._cap_from_sweep = True
        panel.apply_cap()

    def _cap_applied(self, report: Any) -> None:
        if self._cap_from_sweep:
            self._cap_from_sweep = False
            self.power_sweep.say_applied(self.monitor.power_panel.outcome_line())

    # ---- serving the model to other programs ----------------------------------------------

    def _api_busy(self) -> str:
        """Why an API reply holds the engine now, in words ('' when none does)."""
        if self.api is not None and self.api.running:
            return tr("An API request is being answered (Serve tab)")
        return ""

    def _engine_use_changed(self) -> None:
        """One place decides what waits for what on the one engine: chat waits for sweeps and API replies,
        API requests wait for the window's own use of it (a reply, a load, a sweep)."""
        reason = self._sweeping() or self._api_busy()
        self.chat.engine_busy = tr("{busy}: send when it ends, or stop it there.").format(busy=reason) if reason else ""
        self._update_buttons()
        self._sync_api_hold()

    def _sync_api_hold(self) -> None:
        server = self.api
        if server is None:
            return
        use = ""
        if self.chat.streaming:
            use = "a chat reply"
        elif self.session.state.busy:
            use = "a load"
        elif kind := self._sweep_kind():
            use = f"a {kind}"  # said by the API's /health, in English as the API speaks
        if use and server.held != use:
            server.hold(use)
        elif not use and server.held:
            server.release()
        self.serve_panel.set_counts(server.running, server.queued, server.held)

    def start_serving(self, choice: ServeChoice) -> None:
        """Listen on the chosen address in the window's asyncio loop, serving the engine's loaded model."""
        if self.api is not None:
            return
        try:
            choice.check()
        except ValueError as exc:
            self.serve_panel.say(error_text(exc, "serve_panel"))
            return
        state = self.session.state
        # As many replies at once as the loaded model has parallel slots (the count is kept while it serves).
        slots = state.settings.n_parallel if state.ready and state.settings is not None else 1
        server = ApiServer(
            self.bridge.client, slots=slots, api_key=choice.api_key or None, cors_origin=choice.cors_origin or None
        )
        if state.ready and state.model is not None and state.loaded is not None:
            server.set_model(str(state.model), state.loaded.n_ctx)
        server.add_listener(self._api_activity)
        self.bridge.add_tap(server.feed)
        self.api = server
        self.serve_panel.say(tr("Starting on {address}…").format(address=f"{choice.host}:{choice.port}"))
        self._api_start = asyncio.ensure_future(self._listen(server, choice))  # kept: the loop holds tasks weakly

    async def _listen(self, server: ApiServer, choice: ServeChoice) -> None:
        try:
            address = await server.start(choice.host, choice.port)
        except OSError as exc:
            if self.api is server:
                self.api = None
                self.bridge.remove_tap(server.feed)
            self.serve_panel.set_serving(None)
            self.serve_panel.say(
                tr("Could not listen on {address}: {error}.").format(
                    address=f"{choice.host}:{choice.port}",
                    error=core_text("serve_panel", exc.strerror or message_of(exc)),
                )
            )
            self.serving_changed.emit(None)
            return
        if self.api is not server:  # stopped (or the window closed) while it started
            await server.stop()
            return
        where: dict[Preference[Any], Any] = {SERVE_HOST: choice.host, SERVE_PORT_NUMBER: choice.port}
        self.store.write_many(where | {SERVE_REMOTE: choice.allow_remote})
        self.serve_panel.set_serving(address, server.model.id if server.model is not None else None, server.slots)
        self._api_counted = (time.monotonic(), server.tokens_out)
        self._api_timer.start()
        self._sync_api_hold()
        self.serving_changed.emit(address)

    def stop_serving(self) -> None:
        server = self.api
        if server is None:
            return
        self.api = None
        self._api_timer.stop()
        self.bridge.remove_tap(server.feed)
        self.serve_panel.set_serving(None)
        self._engine_use_changed()
        stopping = server.stop()
        try:
            self._api_stop = asyncio.ensure_future(stopping)
        except RuntimeError:  # no event loop any more (the application is ending): nothing is served now
            stopping.close()
        self.serving_changed.emit(None)

    def _api_tick(self) -> None:
        """Every second while serving: the model served, who waits for whom, and the API's live token rate on
        the monitor's chart (tokens generated for API replies since the last tick)."""
        server = self.api
        if server is None:
            return
        self.serve_panel.set_model(server.model.id if server.model is not None else None)
        self._engine_use_changed()
        now, tokens = time.monotonic(), server.tokens_out
        last_time, last_tokens = self._api_counted
        self._api_counted = (now, tokens)
        if server.running and tokens > last_tokens and now > last_time:
            self.monitor.set_engine_rate((tokens - last_tokens) / (now - last_time))

    def _api_activity(self, activity: ApiActivity) -> None:
        """An API request started or ended (on the loop's thread, the UI thread): chat, monitor and journey."""
        server = self.api
        if server is None:
            return
        self._engine_use_changed()
        if not activity.finished:
            return
        self.serve_panel.add_request(activity)
        stats = activity.stats
        if stats is not None and stats.n_gen > 1:
            self.journey.recorder.record_reply(stats, self.session.state, here=self._planned_here())
            self.monitor.set_engine_rate(activity.decode_tok_s)
            QTimer.singleShot(API_RATE_SHOWN_MS, self._api_idle)

    def _api_idle(self) -> None:
        if (self.api is None or not self.api.running) and not self.chat.streaming:
            self.monitor.set_engine_rate(0.0)

    def _card_facts(self) -> CardFacts:
        """What a tuning card records beside the settings: the card, its driver, the engine build and, when the
        loaded model runs exactly these settings, the speeds of its last reply."""
        state, entry = self.session.state, self.picker.current()
        build = state.build
        same = (
            state.ready and entry is not None and state.model == entry.path and state.settings == self.params.settings()
        )
        gen, prompt = self._last_speeds if same and self._last_speeds is not None else (None, None)
        card = self.gpus[0].name if self.gpus else None
        if card is None and self.simulate:
            card = f"{self.simulate[0].name} (SIMULATED)"
        return CardFacts(
            card_name=card,
            driver=self.driver_version,
            engine_build=english(build.describe()) if build is not None else None,
            gen_tok_s=gen,
            prompt_tok_s=prompt,
        )

    def _planned_here(self) -> bool:
        """The plan is for what this machine runs (its GPUs, a simulated card or its CPU), not a "what if"."""
        return self.plan_panel.current_target().here

    def pin_numa(self, node: int) -> str:
        """Pin the engine to ``node``, remembered for this machine. The running worker's threads move now;
        with numactl its memory is bound too, from the engine's next start."""
        cpus = node_cpus(node)
        if not cpus:
            return tr("NUMA node {node} lists no CPUs here; the engine was not pinned.").format(node=node)
        pins: dict[str, int] = self.store.read(NUMA_PINS)
        pins = {**pins, machine_id(): node}
        self.store.write(NUMA_PINS, pins)
        client = self.bridge.client
        client.numa = NumaPin(node, cpus)
        moved = pin_running(client.pid, cpus) if client.pid is not None else 0
        where = tr("NUMA node {node} (CPUs {cpus})").format(node=node, cpus=describe_cpus(cpus))
        now = tr("; {moved} of its threads moved now").format(moved=moved) if moved else ""
        bound = (
            tr("Its CPUs and its memory are bound there from every engine start.")
            if shutil.which("numactl")
            else tr("Its CPUs are bound there from every engine start.")
        )
        return tr("The engine is pinned to {where}{now}.").format(where=where, now=now) + " " + bound

    def _ram_measured(self, gbs: float | None) -> None:
        self.ram_bandwidth_gbs = gbs
        self.replan()

    def _gpus_found(self, query: GpuQuery) -> None:
        self.gpus = list(query.gpus)
        self.plan_panel.set_targets(list(query.gpus), query.error)
        if query.gpus:  # the driver's version keys what loads on these cards measured
            self.background.run(self.services.gpu.nvml.driver_info, self._driver_found)

    def _driver_found(self, info: DriverInfo) -> None:
        self.driver_version = info.driver_version
        self._apply_corrections()

    # ---- planned against measured memory --------------------------------------------------

    def _memory_key(self, device: str) -> str | None:
        build = self.session.state.build
        driver = "simulated" if self.simulate else self.driver_version
        return correction_key(device, driver, build.describe()) if build is not None else None

    def _apply_corrections(self) -> None:
        """Each measured (or simulated) GPU's overhead term corrected by what earlier loads on it measured."""
        table = self.store.read(MEMORY_CHECKS)
        corrections = {}
        names = [f"GPU {gpu.index}: {gpu.name}" for gpu in self.gpus]  # as device_from_gpu names them
        names += [d.name for t in self.plan_panel.targets if t.simulated for d in t.devices]
        for name in names:
            key = self._memory_key(name)
            found = correction_for(table, key) if key is not None else None
            if found is not None:
                corrections[name] = found
        self.plan_panel.set_corrections(corrections)

    def _measure_memory(self, state: LoadState, event: p.Loaded) -> None:
        """After a load on this machine's GPUs: what the driver says the engine holds on each, off the UI
        thread, set beside the plan for the settings that were sent (before any correction)."""
        self.plan_panel.show_measured("")
        target = self.plan_panel.current_target()
        build, header, sent, pid = state.build, state.header, state.settings, self.bridge.client.pid
        if header is None or sent is None or pid is None or not target.devices:
            return
        devices = tuple(dataclasses.replace(d, overhead_correction_mib=0.0) for d in target.devices)
        n_remote = sum(1 for d in devices if d.remote)  # the RPC workers' come first; the driver sees this machine's
        simulated = self.services.gpu.simulated
        if target.simulated and simulated is not None:
            planned, _ = _planning(lambda: plan(header, sent, devices, suggest=False))
            if planned is not None:
                self._measure_simulated(
                    dataclasses.replace(planned, devices=planned.devices[n_remote:]), simulated, pid
                )
            return
        if not (target.measured and build is not None and build.gpu_offload):
            return
        planned, _ = _planning(lambda: plan(header, sent, devices, suggest=False))
        if planned is None:
            return
        indices = [gpu.index for gpu in self.gpus]
        nvml = self.services.gpu.nvml

        def measure() -> list[MemoryCheck]:
            checks = []
            for index, device in zip(indices, planned.devices[n_remote:], strict=False):
                used = engine_memory_mib(nvml.sample(index), pid)
                if used is not None:
                    llama = event.buffers_mib.get(f"CUDA{index}")
                    checks.append(MemoryCheck(device.name, device.needed_mib, used, llama))
            return checks

        self.background.run(measure, self._memory_measured)

    def _measure_simulated(self, planned: Plan, simulated: SimulatedSource, pid: int) -> None:
        """A simulated card holds what the plan puts on it (llama.cpp's buffers) plus its own CUDA context, and
        its driver reports that for the engine: the same check, record and correction as on a real card."""

        checks = []  # arithmetic on the simulated card, no driver call: here, on the UI thread
        for gpu, device in zip(simulated.gpus, planned.devices, strict=False):
            gpu.engine_loaded(device.needed_mib - device.overhead_mib, pid, "tightfit-engine")
            used = engine_memory_mib(simulated.sample(gpu.index), pid)
            if used is not None:
                checks.append(MemoryCheck(device.name, device.needed_mib, used, None, simulated=True))
        self._memory_measured(checks)

    def _release_simulated(self) -> None:
        """The engine let go of its model: a simulated card's memory is free again."""
        simulated = self.services.gpu.simulated
        for gpu in simulated.gpus if simulated is not None else ():
            gpu.set_memory_used(0.0)

    def _memory_measured(self, checks: list[MemoryCheck]) -> None:
        if not checks:
            return
        table = self.store.read(MEMORY_CHECKS)
        for check in checks:
            key = self._memory_key(check.device)
            if key is not None:
                table = recorded(table, key, check.difference_mib)
        self.store.write(MEMORY_CHECKS, table)
        self.plan_panel.show_measured(" ".join(sentence_text(check.describe()) for check in checks))
        self._apply_corrections()
        self.memory_measured.emit(checks)

    # ---- memory plan ----------------------------------------------------------------------

    def _workers_changed(self, *_: object) -> None:
        rpc = self.params.rpc
        words, trouble = rpc.summary()
        self.plan_panel.set_remote(rpc.devices(), words, trouble, rpc.link_name())
        self.replan()

    def replan(self, *_: object) -> None:
        """Re-plan from the header already read: arithmetic bounded by the header's checked sizes, a
        fraction of a frame (bench/planner_speed.py)."""
        self.params.set_device_count(len(self.plan_panel.devices()))  # the split settings show for several
        entry = self.picker.current()
        if entry is None or entry.header is None:
            self.plan = None
            self.plan_panel.show_plan(None)
        else:
            header = entry.header
            self.plan, problem = _planning(
                lambda: plan(
                    header,
                    self.params.settings(),
                    self.plan_panel.devices(),
                    margin_mib=self.plan_panel.margin_mib(),
                    ram_bandwidth_gbs=self.ram_bandwidth_gbs,
                    link=self.params.rpc.network_link(),
                )
            )
            self.plan_panel.show_plan(self.plan, problem)
        self._quants_timer.start()
        self.planned.emit(self.plan)

    def auto_fit(self) -> None:
        entry = self.picker.current()
        if entry is None or entry.header is None:
            return
        header = entry.header
        fitted, problem = _planning(
            lambda: auto_fit(
                header,
                self.params.settings(),
                self.plan_panel.devices(),
                pinned=self.params.pinned(),
                margin_mib=self.plan_panel.margin_mib(),
                max_ctx=entry.context_length,
            )
        )
        if fitted is None:
            self.plan_panel.show_plan(self.plan, tr("Auto-fit failed: {problem}").format(problem=problem))
            return
        before = self.params.settings()
        self.params.set_settings(fitted)
        self.params.say(
            tr("Auto-fit: {changes}.").format(changes=core_text("params", changes(before, self.params.settings())))
        )

    def verify(self) -> None:
        entry = self.picker.current()
        if entry is None:
            return
        try:
            if not self.bridge.client.alive:
                self.bridge.client.start()
            self._verify_request = self.bridge.client.dry_run(entry.path, self.params.settings())
        except (ValueError, EngineUnavailable) as exc:
            self.plan_panel.say_verify(tr("Cannot verify: {error}").format(error=error_text(exc, "engine")))
            return
        self.plan_panel.show_verify(None, pending=True)

    # ---- preferences ------------------------------------------------------------------------

    def _restore_preferences(self) -> None:
        """What the user chose last time: sampling presets and preset, the safety margin, the power cap."""
        self.chat.sampling_panel.add_presets(self.store.read(SAMPLING_PRESETS))
        preset = self.store.read(SAMPLING_PRESET)
        if preset in self.chat.sampling_panel.presets:
            self.chat.sampling_panel.preset.setCurrentText(preset)
        self.plan_panel.margin.setValue(self.store.read(MARGIN_MIB))
        self.monitor.cap_watts = self.store.read(CAP_WATTS)
        self.monitor.alert_threshold_c = self.store.read(ALERT_C)
        self.monitor.interval_spin.setValue(self.store.read(INTERVAL_S))
        self.monitor.set_exporters(self.store.read(GPU_EXPORTERS))
        self.params.rpc.set_network_link(self.store.read(RPC_LINK))
        self.serve_panel.host.setText(self.store.read(SERVE_HOST))
        self.serve_panel.port.setValue(self.store.read(SERVE_PORT_NUMBER))
        self.serve_panel.allow_remote.setChecked(self.store.read(SERVE_REMOTE))

    def _alert(self, alert: Any) -> None:
        """Once per event (the rules decide): a line in the status bar and a desktop notification."""
        self.statusBar().showMessage(alert_text(alert), 30000)
        notify_desktop(self.tray, alert)

    def _preset_saved(self, name: str, sampling: p.Sampling) -> None:
        self.store.write(SAMPLING_PRESETS, self.store.read(SAMPLING_PRESETS) | {name: sampling})

    def _chat_format_chosen(self, name: str) -> None:
        """Remember the format picked for the loaded model's file; the engine's own choice needs no entry."""
        model = self.session.state.model if self.session.state.ready else None
        if model is None:
            return
        formats = self.store.read(CHAT_FORMATS)
        if name:
            formats[model.name] = name
        else:
            formats.pop(model.name, None)
        self.store.write(CHAT_FORMATS, formats)

    def _remember_load(self, model: Path, settings: LoadSettings) -> None:
        self.store.write(LAST_SETTINGS, self.store.read(LAST_SETTINGS) | {model.name: settings})

    def _with_given(self, remembered: LoadSettings) -> LoadSettings:
        """A model's remembered settings with those named on the command line; the command line's alone when
        the two do not go together (a micro-batch past the remembered batch)."""
        try:
            return remembered.with_values(**self._given).validated()
        except ValueError:
            return self._given_settings

    def _last_settings_for(self, entry: ModelEntry) -> LoadSettings | None:
        return self.store.read(LAST_SETTINGS).get(entry.path.name)

    # ---- library and quants ----------------------------------------------------------------

    def _show_folders(self) -> None:
        folders = self.picker.folders
        self.folder_label.setText(tr("Folders: {folders}").format(folders=", ".join(str(f) for f in folders)))
        self.folder_label.setToolTip(plain_tip("\n".join(str(f) for f in folders)))

    def _add_folder_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Add a folder of GGUF models"))
        if folder:
            self.add_model_folder(Path(folder))

    def add_model_folder(self, folder: Path) -> None:
        """Scan another folder from now on, and remember it."""
        self.store.add_model_folder(folder)
        folders = self.picker.folders
        if folder not in folders:
            self.picker.set_folders([*folders, folder])
        self._show_folders()

    def _downloaded(self, path: Path | None) -> None:
        if path is not None:
            self.picker.rescan(select=path)

    def _quant_chosen(self, row: Any) -> None:
        """A row of the quant table: select that file and size it to the card."""
        if row.path is not None and self.picker.select_path(Path(row.path)):
            self.auto_fit()

    def _refresh_quants(self) -> None:
        if self.tabs.currentWidget() is not self.models_tab:
            return  # planned when the tab is shown
        self.models_tab.set_context(
            self.params.settings(),
            self.plan_panel.devices(),
            self.plan_panel.margin_mib(),
            self.ram_bandwidth_gbs,
        )

    def _model_selected(self, entry: ModelEntry | None) -> None:
        changed = entry is not None and entry.path != self._selected_path
        self._selected_path = entry.path if entry is not None else None
        if entry is not None:
            n_expert = entry.header.n_expert if entry.header is not None else None
            self.params.set_model_limits(entry.n_layer, entry.context_length, n_expert)
            remembered = self._last_settings_for(entry) if changed else None
            if remembered is not None:  # the settings this model last loaded with
                self.params.set_settings(self._with_given(remembered))
            self._given = {}
        self.plan_panel.show_verify(None)
        group = self.picker.current_group()
        if group is not None:
            self.models_tab.set_local_variants(f"{group.name}: {describe_group(group)}", group.variants)
        self.replan()
        self._update_buttons()

    def load_selected(self, *, anyway: bool = False) -> None:
        entry = self.picker.current()
        if entry is None or self.session.state.busy:
            return
        if busy := self._sweeping():
            self.load_status.setText(tr("{busy}: load when it ends, or stop it there.").format(busy=busy))
            return
        if entry.not_loadable:
            self.load_status.setText(
                tr("Cannot load {model}: {reason}.").format(
                    model=entry.path.name, reason=sentence_text(entry.not_loadable)
                )
            )
            self.load_finished.emit(False)
            return
        if refusal := self.params.rpc.refusal():  # llama.cpp's client would abort on a worker it cannot reach
            self.load_status.setText(tr("Cannot load: {error}").format(error=refusal))
            self.load_finished.emit(False)
            return
        # A plan for a card the machine does not have is a "what if": it never stops a load here.
        here = self.plan_panel.current_target().here
        if not anyway and here and self.plan is not None and self.plan.verdict is Verdict.WONT_FIT:
            self._explain_overcommit(self.plan)
            return
        settings = self.params.settings()
        try:
            self.session.load(entry.path, settings, entry.header, self.plan)
        except (ValueError, EngineUnavailable) as exc:
            self.load_status.setText(tr("Cannot load: {error}").format(error=error_text(exc, "engine")))
            self.load_finished.emit(False)
            return
        # llama.cpp's own dry run goes first (tens of ms): its figures appear beside the estimate.
        self._verify_request = self.session.state.dry_run_id
        self.plan_panel.show_verify(None, pending=True)
        self.load_status.setText(
            tr("Loading {model} ({settings})…").format(
                model=entry.path.name, settings=core_text("params", describe(settings))
            )
        )

    def _show_verify(self, result: p.DryRunResult) -> None:
        """Compare llama.cpp's dry run with the plan for the devices it actually planned for.

        A build without GPU offload puts everything on the CPU whatever card the plan is for, so its
        figures are set beside the CPU-only plan, and the window says so.
        """
        entry = self.picker.current()
        compared, note = self.plan, ""
        build = self.session.state.build
        offload = build.gpu_offload if build is not None else False
        if entry is not None and entry.header is not None and not offload and self.plan_panel.devices():
            header = entry.header
            compared, _ = _planning(lambda: plan(header, self.params.settings(), [], margin_mib=0.0))
            note = tr("This engine build has no GPU offload, so both are for a CPU-only load.") if compared else ""
        self.plan_panel.show_verify(result, compared=compared, note=note)

    def new_chat(self) -> None:
        """A fresh conversation that keeps the system prompt the user set."""
        if self.chat.streaming:
            return
        self.history.start_new()
        self.chat.set_conversation(Conversation(system_prompt=self.chat.conversation.system_prompt))
        self.chat.input.setFocus()

    def _explain_overcommit(self, plan: Plan) -> None:
        """Stop a load the plan says will run out of memory; say what would fit; offer to load anyway."""
        device = next((d for d in plan.devices if d.verdict is Verdict.WONT_FIT), None)
        where = ""
        if device is not None:
            where = tr("{card} would need {needed} MiB of {free} MiB free").format(
                card=device.name, needed=f"{device.needed_mib:,.0f}", free=f"{device.free_mib:,.0f}"
            )
        box = QMessageBox(QMessageBox.Icon.Warning, tr("This load will not fit"), "", parent=self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(tr("The plan says this load runs out of memory. {where}.").format(where=where))
        fixes = "\n".join(f"• {planner_text(s)}" for s in plan.suggestions)
        fixes = fixes or "• " + tr("a smaller quant of this model")
        box.setInformativeText(tr("Any of these would make it fit:\n{fixes}").format(fixes=fixes))
        load_anyway = box.addButton(tr("Load anyway"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)

        def finished() -> None:
            self.overcommit_dialog = None
            if box.clickedButton() is load_anyway:
                self.load_selected(anyway=True)

        box.finished.connect(finished)
        self.overcommit_dialog = box
        box.open()

    def unload(self) -> None:
        if not self._sweeping():
            self.session.unload()

    def _update_buttons(self) -> None:
        state = self.session.state
        entry = self.picker.current()
        sweeping = bool(self._sweeping())  # a sweep loads what it measures; a load of another kind would cut it
        self.load_button.setEnabled(entry is not None and not state.busy and not sweeping)
        self.unload_button.setEnabled(state.ready and not sweeping)
        # The loaded model with settings moved since: the engine still runs the old ones until a reload.
        same_model = state.ready and entry is not None and entry.path == state.model
        stale = same_model and self.params.settings() != state.settings
        self.load_button.setText(tr("&Reload to apply") if stale else tr("&Load"))
        self.load_button.setToolTip(
            tr("The settings changed since the load; reload the model with them (Ctrl+L)")
            if stale
            else tr("Load the selected model with these settings (Ctrl+L)")
        )
        self.picker.mark_loaded(state.model if state.ready else None)

    # ---- engine events and the load state -----------------------------------------------

    def _on_event(self, event: Any) -> None:
        """What the load state does not cover: dry-run figures and refused commands."""
        if isinstance(event, p.DryRunResult) and event.request_id == self._verify_request:
            self._show_verify(event)
            self.verified.emit(event)
        elif isinstance(event, p.CommandRejected) and not self.session.state.busy:
            self.load_status.setText(
                tr("The engine refused a command: {error}").format(error=sentence_text(event.error))
            )

    def _load_state_changed(self, state: LoadState, before: LoadState) -> None:
        """Every view of the load follows the one state: status line, progress, buttons, engine label."""
        if state.build is not None and state.build is not before.build:
            self._cannot_start = False
            self.engine_label.setText(tr("Engine: {build}").format(build=sentence_text(state.build.describe())))
            self.engine_label.setToolTip(plain_tip(state.build.system_info + "\n\n" + tr("Click to open the Doctor.")))
            self.plan_panel.set_engine_offload(state.build.gpu_offload)
            self._apply_corrections()  # they are kept per engine build
            self.engine_ready.emit()
            if self._first_scan_done:
                self.run_doctor()
        elif state.phase is Phase.ENGINE_DEAD and not self._cannot_start:
            self.engine_label.setText(tr("Engine: restarting…"))
        if before.ready and not state.ready:
            self._release_simulated()
        self.progress.setValue(round(state.progress * 100))
        self._update_buttons()
        if state.phase is before.phase and state.loaded is before.loaded:
            return
        if state.phase is Phase.LOADED and state.loaded is not None and state.model is not None:
            self._loaded(state, state.loaded)
        elif state.phase is Phase.FAILED and before.busy:
            self.load_status.setText(tr("Load failed: {error}").format(error=sentence_text(state.error)))
            self._show_log(self.bridge.client.log_path)
            self.load_finished.emit(False)
            self._back_to_last_good(state)
        elif state.phase is Phase.IDLE and before.phase is not Phase.IDLE:
            self.load_status.setText(tr("No model loaded."))

    def _back_to_last_good(self, failed: LoadState) -> None:
        """A failed load loses nothing: the model that was loaded before is loaded again, as it was."""
        good = self._last_good
        if good is None or (good.model, good.settings) == (failed.model, failed.settings):
            return
        assert good.model is not None and good.settings is not None
        try:
            self.session.load(good.model, good.settings, good.header, good.plan)
        except (ValueError, EngineUnavailable):
            return
        why = tr("{model} did not load: {error}").format(model=failed.model_name, error=sentence_text(failed.error))
        self._after_failure = why
        self.load_status.setText(
            why + " " + tr("Loading {model} again, as it was before.").format(model=good.model.name)
        )

    def _loaded(self, state: LoadState, event: p.Loaded) -> None:
        assert state.model is not None and state.settings is not None
        self._last_good = state
        offload = ""
        if self._after_failure:
            offload += f" ({self._after_failure})"
            self._after_failure = ""
        picked = self.store.read(CHAT_FORMATS).get(state.model.name, "")
        self.chat.set_chat_format(picked)
        chat_format = (
            tr("{format} (your choice)").format(format=sentence_text(format_label(picked)))
            if picked
            else sentence_text(format_label(event.chat_format))
        )
        self.load_status.setText(
            tr("Loaded {model} in {seconds} s: context {context}, {layers}, chat format: {format}.").format(
                model=state.model.name,
                seconds=f"{event.load_ms / 1000:.1f}",
                context=f"{event.n_ctx:,}",
                layers=_layers_words(state, event),
                format=chat_format,
            )
            + offload
        )
        # What was sent with the load, not what the sliders show now: they may have moved since.
        self._remember_load(state.model, state.settings)
        self._measure_memory(state, event)
        self._last_load_s = event.load_ms / 1000
        self.journey.recorder.record_load(state, here=self._planned_here())
        self.chat.input.setFocus()  # loaded: the next thing is a message
        self.model_loaded.emit(event)
        self.load_finished.emit(True)

    def _engine_died(self, event: WorkerExited, before: LoadState) -> None:
        if before.busy:
            self.load_finished.emit(False)
        failure = event.failure
        cause = f" {sentence_text(failure.summary)}" if failure else ""
        had_model = before.model is not None and (before.busy or before.ready)
        safer = None
        # A load that needs less memory is worth offering only when memory is what ran out, and only of the
        # memory that ran out: a GPU's when this build offloads and the log does not point at the host.
        memory = failure is None or failure.about_memory
        offload = before.build is not None and before.build.gpu_offload
        header, sent, devices = before.header, before.settings, self.plan_panel.devices()
        if memory and had_model and header is not None and sent is not None:
            gpu = _gpu_ran_out(failure, offload and bool(devices))
            safer, _ = _planning(
                lambda: safer_settings(header, sent, devices, self.plan_panel.margin_mib(), gpu_ran_out=gpu)
            )
        text = f"{sentence_text(event.reason)}{cause} " + tr("Your conversation is kept.")
        if safer is not None:
            text += " " + tr("Reload with {change}?").format(change=sentence_text(safer.change))
            model = before.model
            self.chat.show_notice(text, tr("Reload safer"), lambda: self._reload(model, safer.settings))
        else:
            self.chat.show_notice(text + (" " + tr("Press Load to start the model again.") if had_model else ""))
        stopped = (
            tr("The engine stopped while loading; no model loaded.")
            if before.busy
            else tr("The engine stopped; no model loaded.")
        )
        offer = (
            " " + tr("The notice above offers a reload with {change}.").format(change=sentence_text(safer.change))
            if safer is not None
            else ""
        )
        self.load_status.setText(f"{stopped}{cause}{offer}")
        self._show_log(event.log_path)
        self.engine_died.emit(event)
        # A fresh worker, so Load works at once; the conversation stays in the pane. A worker that died
        # before it was even ready would only die again: say so instead of starting one after another.
        now = time.monotonic()
        self._restarts = [t for t in self._restarts if now - t < 60] + [now]
        if not event.said_hello and len(self._restarts) > 2:
            self._cannot_start = True
            self.engine_label.setText(tr("Engine: cannot start"))
            self.load_status.setText(
                tr("The engine cannot start: {reason}").format(
                    reason=sentence_text(failure.summary if failure else event.reason)
                )
                + " "
                + tr("Check the llama-cpp-python install (see the README), then restart Tightfit.")
            )
            return
        self.bridge.client.start()

    def _show_log(self, path: Path | None) -> None:
        self._log_path = path if path is not None and path.exists() else None
        self.log_button.setVisible(self._log_path is not None)
        if self._log_path is not None:
            self.log_button.setToolTip(plain_tip(tr("Open {path}").format(path=self._log_path)))

    def _open_log(self) -> None:
        if self._log_path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self._log_path)))

    def _reload(self, model: Path | None, settings: LoadSettings) -> None:
        """The model that was loaded, with the settings recovery chose."""
        if model is not None and not self.picker.select_path(model):
            self.load_status.setText(tr("Cannot reload: {model} is no longer in the library.").format(model=model.name))
            return
        self.params.set_settings(settings)
        self.load_selected()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._closed:
            super().closeEvent(event)
            return
        self._closed = True
        self.bridge.mute()  # nothing from the engine reaches the widgets from here on
        if self.chat.streaming:
            self.chat.stop()
            self.chat.keep_partial_reply("stopped: the window closed")
        self.monitor.stop()
        if self.tune_runner is not None and self.tune_runner.running:
            self.tune_runner.stop()
        power = self.power_runner
        if power is not None and power.running:
            power.stop()  # the engine's end (below) also ends its decoding; the limit is put back
        self.stop_serving()
        self.history.save(self.chat.conversation)
        self.history.shutdown()
        self.journey.shutdown()
        self.store.write_many(
            {SAMPLING_PRESET: self.chat.sampling_panel.preset.currentText(), MARGIN_MIB: self.plan_panel.margin.value()}
        )
        self.bridge.shutdown()
        self.picker.shutdown()
        self.models_tab.shutdown()
        self.background.shutdown()  # a hung driver call must not hang the close
        self.params.rpc.shutdown()  # a worker's answer on its way is dropped
        self.export_menu.cancel()
        self.export_background.shutdown()
        self.doctor_background.shutdown()
        if power is not None and power.running and not power.wait(POWER_RESTORE_WAIT_S):
            log.warning("the power sweep had not put the limit back when the window closed; its watchdog will")
        super().closeEvent(event)


def _planning(work: Callable[[], T]) -> tuple[T | None, str]:
    """Run a planner call; any failure (a file the planner cannot make sense of, a bug) becomes a line
    for the plan panel and the log, never an error dialog."""
    try:
        return work(), ""
    except Exception as exc:
        if not isinstance(exc, ValueError):  # a ValueError is the planner's own "this cannot be planned"
            log.exception("planning failed")
        return None, tr("Cannot plan this file: {error}").format(error=error_text(exc, "planner"))


def _gpu_ran_out(failure: Failure | None, could_offload: bool) -> bool:
    """Whether a GPU's memory is what ran out: the log names a GPU buffer; or it names none and this load
    put layers on a GPU. A kill by the OOM killer, or a host buffer ("CPU", "CUDA_Host"), is host memory."""
    if failure is not None and failure.kind == "killed":
        return False
    device = failure.device if failure is not None else None
    if device is None:
        return could_offload
    return not (device.startswith("CPU") or device.endswith("_Host"))


def _layers_words(state: LoadState, event: p.Loaded) -> str:
    """Where the layers run, counted as the GPU-layers slider counts them (blocks + the output layer)."""
    total = event.n_layer + 1
    if state.build is not None and not state.build.gpu_offload:
        return tr("all {total} layers on the CPU (this engine build has no GPU offload)").format(total=total)
    on_gpu = total if llama_gpu_layers(event.n_gpu_layers, event.n_layer) < 0 else min(event.n_gpu_layers, total)
    return tr("{on_gpu} of {total} layers on the GPU").format(on_gpu=on_gpu, total=total)


def _first_size(window: QWidget) -> QSize:
    """1280x900, or less on a smaller screen: a window that opens taller than the screen hides Load."""
    screen = window.screen() or QApplication.primaryScreen()
    room = screen.availableGeometry().size() if screen is not None else QSize(1280, 900)
    return QSize(min(1280, room.width()), min(900, room.height()))
