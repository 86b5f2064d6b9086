"""The window's composition root: every view and every controller, built once and wired here.

``build_window(services, settings)`` gives the MainWindow (which only lays the views out) with its ``features``:
the controllers, each handed the views it drives and the services it uses. Nothing else in the window builds a
controller, a runner or a server; docs/architecture.md draws who drives what.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QPushButton, QStyle, QSystemTrayIcon

from gui.core.engine_use import EngineUse
from gui.core.params import LoadSettings
from gui.core.preferences import (
    ALERT_C,
    CAP_WATTS,
    GPU_EXPORTERS,
    INTERVAL_S,
    MARGIN_MIB,
    NUMA_PINS,
    RPC_LINK,
    SERVE_HOST,
    SERVE_PORT_NUMBER,
    SERVE_REMOTE,
    SERVE_STRICT_MODEL,
)
from gui.services.bundle import Services
from gui.services.numa import machine_id
from gui.ui.background import Background
from gui.ui.chat_pane import ChatPane
from gui.ui.controllers.chat import ChatController
from gui.ui.controllers.doctor import DoctorController
from gui.ui.controllers.engine import EngineController
from gui.ui.controllers.export import CardFactsSource
from gui.ui.controllers.journey import JourneyController
from gui.ui.controllers.library import LibraryController
from gui.ui.controllers.load import LoadController
from gui.ui.controllers.machine import MachineController
from gui.ui.controllers.monitor import MonitorController
from gui.ui.controllers.planning import Planning
from gui.ui.controllers.power import PowerSweepController
from gui.ui.controllers.serve import ServeController
from gui.ui.controllers.shared import STATUS_MS, WARNING_MS, Shared
from gui.ui.controllers.tune import TuneController
from gui.ui.doctor_view import DoctorView
from gui.ui.engine_bridge import EngineBridge
from gui.ui.export_menu import ExportMenu
from gui.ui.history_panel import HistoryPanel
from gui.ui.i18n import Tr, install_language_control, sentence_text
from gui.ui.journey_view import JourneyView
from gui.ui.load_bar import LoadBar
from gui.ui.load_session import LoadSession
from gui.ui.main_window import MainWindow
from gui.ui.model_picker import ModelPicker
from gui.ui.models_tab import ModelsTab
from gui.ui.monitor import MonitorView
from gui.ui.param_panel import ParamPanel
from gui.ui.plain import plain_label
from gui.ui.plan_panel import PlanPanel
from gui.ui.power_sweep_view import PowerSweepView
from gui.ui.preference_binding import bind, restore
from gui.ui.serve_panel import ServePanel
from gui.ui.theme import install_theme_control, themed_style
from gui.ui.tune_view import TuneView

tr = Tr("compose")


@dataclass
class Features:
    """The window's controllers, and the parts they share (``shared``: the services, bridge, load session...)."""

    shared: Shared
    machine: MachineController
    load: LoadController
    engine: EngineController
    library: LibraryController
    chat: ChatController
    tune: TuneController
    power: PowerSweepController
    serve: ServeController
    doctor: DoctorController
    monitor: MonitorController
    journey: JourneyController
    export_background: Background
    card_facts: CardFactsSource

    @property
    def services(self) -> Services:
        return self.shared.services

    @property
    def bridge(self) -> EngineBridge:
        return self.shared.bridge

    @property
    def session(self) -> LoadSession:
        return self.shared.session

    @property
    def engine_use(self) -> EngineUse:
        return self.shared.engine_use

    @property
    def planning(self) -> Planning:
        return self.shared.planning

    def start(self, select: Path | None = None) -> None:
        """Start the engine process and the first scan; both finish in the background."""
        self.chat.start()
        self.engine.start()
        self.library.picker.start(select)
        self.monitor.start()
        self.machine.start()

    def shutdown(self, window: MainWindow) -> None:
        """The window closes: nothing from the engine reaches the widgets any more, what runs stops (a sweep
        puts the limit back), what the user had is saved, and every thread is let go."""
        self.bridge.mute()
        self.chat.shutdown()
        self.monitor.shutdown()
        self.tune.shutdown()
        self.power.shutdown()
        self.serve.stop()
        self.journey.shutdown()
        store = self.services.settings
        # What the window shows is what the file keeps: a value the file held that was refused (read as its
        # default) is replaced by a good one, though the user never touched it.
        store.write(MARGIN_MIB, window.plan_panel.margin.value())
        self.bridge.shutdown()
        self.library.picker.shutdown()
        window.models_tab.shutdown()
        self.machine.shutdown()
        window.params.rpc.shutdown()  # a worker's answer on its way is dropped
        window.export_menu.cancel()
        self.export_background.shutdown()
        self.doctor.shutdown()
        self.power.wait_restored()
        store.flush()  # the pending changes on disk before the window goes (bounded; a failure is logged)


def build_window(services: Services, settings: LoadSettings, given: Iterable[str] = ()) -> MainWindow:
    """The window on ``services``, its sliders at ``settings``; ``given``: the settings named on the command
    line (they win over what the model selected at start remembers)."""
    simulate = services.simulated
    window = MainWindow(simulate)
    bridge = EngineBridge(services.engine, window)
    session = LoadSession(bridge, window)
    store = services.settings

    # ---- views ----------------------------------------------------------------------------
    window.picker = picker = ModelPicker(services.library, services.models_dir, window)
    window.folder_label = folder_label = plain_label(parent=window)
    folder_label.setWordWrap(True)
    themed_style(folder_label, lambda palette: f"color: {palette.muted}")
    window.rescan_button = QPushButton(tr("&Rescan"), window)
    window.add_folder_button = QPushButton(tr("Add &folder…"), window)
    window.params = params = ParamPanel(settings, window)
    window.plan_panel = plan_panel = PlanPanel(window, simulated=simulate)
    window.load_bar = bar = LoadBar(window)
    window.chat = chat = ChatPane(bridge, session, window)
    window.history = history = HistoryPanel(services.history, window)
    window.monitor = monitor = MonitorView(services.gpu, parent=window)
    window.models_tab = models_tab = ModelsTab(services.models_dir, services.hub, parent=window)
    window.doctor = doctor_view = DoctorView(window)
    window.journey = journey_view = JourneyView(services.journey, window)
    window.tune = tune_view = TuneView(window)
    window.power_sweep = power_view = PowerSweepView(window)
    window.serve_panel = serve_panel = ServePanel(window)
    # The engine line is a way into the Doctor: what the engine was built for is checked there.
    window.engine_label = engine_label = QPushButton(tr("Engine: starting…"), window)
    engine_label.setFlat(True)
    engine_label.setAccessibleName(tr("Engine build: open the Doctor"))
    engine_label.setCursor(Qt.CursorShape.PointingHandCursor)
    planning_ = Planning(picker, params, plan_panel)
    export_background = Background("export", parent=window)  # hashing a 20 GB model takes its time
    window.export_menu = export_menu = ExportMenu(
        model=lambda: planning_.context().model,
        settings=lambda: planning_.context().settings,
        numa_node=lambda: store.read(NUMA_PINS).get(machine_id()),
        background=export_background,
        facts=lambda: card_facts(),  # built below, with the controllers it reads
        parent=window,
    )
    bar.add_tool(export_menu)
    window.arrange()
    window.statusBar().addPermanentWidget(engine_label)
    window.theme_box = install_theme_control(window, store)  # System / Light / Dark, remembered
    window.language_box = install_language_control(window, store)  # System / English / 简体中文
    window.tray = _tray(window)

    def say(text: str, ms: int = STATUS_MS) -> None:
        window.statusBar().showMessage(text, ms)

    # ---- controllers ----------------------------------------------------------------------
    engine_use = EngineUse()
    shared = Shared(services, bridge, session, planning_, engine_use, say, window.tabs, window)
    machine = MachineController(shared, plan_panel=plan_panel, parent=window)
    load = LoadController(
        shared, picker=picker, params=params, plan_panel=plan_panel, bar=bar, chat=chat, settings=settings,
        given=given, parent=window,
    )  # fmt: skip
    engine = EngineController(shared, load=load, label=engine_label, bar=bar, chat=chat, parent=window)
    library = LibraryController(
        shared, load=load, picker=picker, folder_label=folder_label, rescan_button=window.rescan_button,
        add_folder_button=window.add_folder_button, models_tab=models_tab, parent=window,
    )  # fmt: skip
    chat_ = ChatController(shared, chat=chat, history=history, monitor=monitor, parent=window)
    tune = TuneController(
        shared, nvml=services.gpu.nvml, gpu_count=lambda: len(machine.gpus), speeds=lambda: chat_.last_speeds,
        load_s=lambda: load.last_load_s, picker=picker, params=params, view=tune_view, parent=window,
    )  # fmt: skip
    power = PowerSweepController(shared, gpu=services.gpu, monitor=monitor, view=power_view, parent=window)
    serve = ServeController(
        shared, panel=serve_panel, monitor=monitor, chat_streaming=lambda: chat.streaming, parent=window
    )
    doctor = DoctorController(
        shared, load=load, pin_numa=engine.pin_numa, picker=picker, params=params, monitor=monitor, bar=bar,
        view=doctor_view, parent=window,
    )  # fmt: skip
    monitor_ = MonitorController(shared, monitor=monitor, tray=window.tray, parent=window)
    journey = JourneyController(shared, view=journey_view, parent=window)
    card_facts = CardFactsSource(
        session=session, planning_=planning_, machine=machine, speeds=lambda: chat_.last_speeds, simulated=simulate
    )
    features = Features(
        shared=shared, machine=machine, load=load, engine=engine, library=library, chat=chat_, tune=tune, power=power,
        serve=serve, doctor=doctor, monitor=monitor_, journey=journey, export_background=export_background,
        card_facts=card_facts,
    )  # fmt: skip

    # ---- between features -----------------------------------------------------------------
    machine.ram_measured.connect(lambda _gbs: load.replan())
    engine.engine_ready.connect(doctor.engine_ready)
    load.model_loaded.connect(lambda event: machine.measure(session.state, event))
    load.model_loaded.connect(journey.loaded)
    chat.reply_finished.connect(journey.reply)
    serve.reply_served.connect(journey.reply)
    tune.row_measured.connect(journey.bench_row)
    engine_label.clicked.connect(lambda: window.tabs.setCurrentWidget(doctor_view))
    # RPC workers: their devices (asked off the UI thread) go in front of the plan's, the link into its speed.
    params.rpc.answers_changed.connect(lambda *_: _workers_changed(params, plan_panel, load))
    params.rpc.link_changed.connect(lambda *_: _workers_changed(params, plan_panel, load))
    export_menu.message.connect(say)
    export_menu.settings_opened.connect(params.set_settings)
    picker.message.connect(say)
    history.failed.connect(say)
    journey_view.failed.connect(say)
    monitor.message.connect(say)
    _bind_preferences(window, features)
    if store.warning:  # a settings file it could not use was set aside: say so once the window shows
        QTimer.singleShot(0, lambda: say(sentence_text(store.warning or ""), WARNING_MS))

    # The keyboard reaches everything: Load, the chat search and each tab have their own keys.
    QShortcut(QKeySequence("Ctrl+L"), window, lambda: load.load_selected())
    QShortcut(QKeySequence("Ctrl+F"), window, chat_.find_chats)
    QShortcut(QKeySequence("Ctrl+Shift+L"), window, params.focus_first)
    for number in range(window.tabs.count()):
        QShortcut(QKeySequence(f"Ctrl+{number + 1}"), window, lambda n=number: window.tabs.setCurrentIndex(n))
    window.attach(features)
    return window


def _workers_changed(params: ParamPanel, plan_panel: PlanPanel, load: LoadController) -> None:
    rpc = params.rpc
    words, trouble = rpc.summary()
    plan_panel.set_remote(rpc.devices(), words, trouble, rpc.link_name())
    load.replan()


def _bind_preferences(window: MainWindow, features: Features) -> None:
    """What the user chose last time, restored, and each change kept: the safety margin, the power cap, the
    alert temperature, the sampling interval, the exporters watched, the RPC link. Where the API listens is
    only shown: the Serve controller keeps it once listening worked."""
    store = features.services.settings
    monitor, rpc, serve = window.monitor, window.params.rpc, window.serve_panel
    bind(store, MARGIN_MIB, window.plan_panel.margin)
    bind(store, CAP_WATTS, monitor.power_panel.spin)
    bind(store, ALERT_C, monitor.threshold_spin)
    bind(store, INTERVAL_S, monitor.interval_spin)
    restore(store, SERVE_HOST, serve.host)
    restore(store, SERVE_PORT_NUMBER, serve.port)
    restore(store, SERVE_REMOTE, serve.allow_remote)
    restore(store, SERVE_STRICT_MODEL, serve.strict_model)
    monitor.set_exporters(store.read(GPU_EXPORTERS))  # a list with a view of its own: kept through its signal
    monitor.exporters_changed.connect(lambda urls: store.write(GPU_EXPORTERS, urls))
    rpc.set_network_link(store.read(RPC_LINK))
    rpc.link_changed.connect(lambda link: store.write(RPC_LINK, link))


def _tray(window: MainWindow) -> QSystemTrayIcon | None:
    if not QSystemTrayIcon.isSystemTrayAvailable():
        return None
    # A tray icon must be visible (and have an icon) for its notifications to show.
    icon = QApplication.windowIcon()  # the app's own (gui/app.py), where it was set
    if icon.isNull():
        icon = window.style().standardIcon(QStyle.StandardPixmap.SP_ComputerIcon)
    tray = QSystemTrayIcon(icon, window)
    tray.setToolTip("Tightfit")
    tray.show()
    return tray


__all__ = ["Features", "build_window"]
