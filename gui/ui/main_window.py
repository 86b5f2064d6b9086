"""The main window: library, load settings and memory plan on the left; chat, monitor, quants, the Doctor, the
journey, Tune and Serve on the right. It lays out the views the composition root (gui/ui/compose.py) built and
hands its close to the controllers; it decides nothing and holds no feature's state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QSystemTrayIcon,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gui import __version__
from gui.core.cards import Card
from gui.ui.doctor_view import tab_title
from gui.ui.i18n import Tr
from gui.ui.scrolling import vertical_scroll

if TYPE_CHECKING:
    from gui.ui.chat_pane import ChatPane
    from gui.ui.compose import Features
    from gui.ui.doctor_view import DoctorView
    from gui.ui.export_menu import ExportMenu
    from gui.ui.history_panel import HistoryPanel
    from gui.ui.journey_view import JourneyView
    from gui.ui.load_bar import LoadBar
    from gui.ui.model_picker import ModelPicker
    from gui.ui.models_tab import ModelsTab
    from gui.ui.monitor import MonitorView
    from gui.ui.param_panel import ParamPanel
    from gui.ui.plan_panel import PlanPanel
    from gui.ui.power_sweep_view import PowerSweepView
    from gui.ui.serve_panel import ServePanel
    from gui.ui.tune_view import TuneView

tr = Tr("main_window")


class MainWindow(QMainWindow):
    """The frame and its layout. The views are set on it by the composition root before ``arrange``; the
    controllers (``features``) are attached after."""

    picker: ModelPicker
    folder_label: QLabel
    rescan_button: QPushButton
    add_folder_button: QPushButton
    params: ParamPanel
    plan_panel: PlanPanel
    load_bar: LoadBar
    export_menu: ExportMenu
    chat: ChatPane
    history: HistoryPanel
    monitor: MonitorView
    models_tab: ModelsTab
    doctor: DoctorView
    journey: JourneyView
    tune: TuneView
    power_sweep: PowerSweepView
    serve_panel: ServePanel
    engine_label: QPushButton
    theme_box: QComboBox
    language_box: QComboBox
    tray: QSystemTrayIcon | None
    features: Features

    def __init__(self, simulate: tuple[Card, ...] = ()) -> None:
        super().__init__()
        self.simulate = simulate
        self._closed = False
        title = f"Tightfit {__version__}"
        if simulate:
            title += tr(" — SIMULATED {card}").format(card=" + ".join(c.name for c in simulate))
        self.setWindowTitle(title)
        self.resize(_first_size(self))
        self.tabs = QTabWidget(self)
        self.tune_pages = QTabWidget(self)  # benchmarks of settings, and the power-cap sweep

    def arrange(self) -> None:
        """Lay out the views: the library, settings, plan and load row in a column on the left, the tabs on the
        right."""
        models_box = QGroupBox(tr("Model"), self)
        models_layout = QVBoxLayout(models_box)
        models_layout.addWidget(self.picker)
        row = QHBoxLayout()
        row.addWidget(self.folder_label, 1)
        row.addWidget(self.add_folder_button)
        row.addWidget(self.rescan_button)
        models_layout.addLayout(row)
        params_box = QGroupBox(tr("Load settings"), self)
        QVBoxLayout(params_box).addWidget(self.params)
        plan_box = QGroupBox(tr("Memory plan"), self)
        QVBoxLayout(plan_box).addWidget(self.plan_panel)
        # The plan takes the height it needs and no more; the rest goes to the library and settings.
        plan_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)

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
        column_layout.addWidget(self.load_bar)
        column_layout.addWidget(self.load_bar.status)
        left.setMinimumWidth(310)
        left_scroll.setMinimumWidth(326)

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
        simulated = bool(self.simulate)
        self.tabs.addTab(chat_box, tr("&Chat"))
        self.tabs.addTab(self.monitor, tr("&Monitor (SIMULATED)") if simulated else tr("&Monitor"))
        self.tabs.addTab(self.models_tab, tr("&Quants"))
        self.tabs.addTab(self.doctor, tab_title())
        self.tabs.addTab(self.journey, tr("&Journey"))
        self.tune_pages.addTab(self.tune, tr("Benchmarks"))
        self.tune_pages.addTab(self.power_sweep, tr("Power caps (SIMULATED)") if simulated else tr("Power caps"))
        self.tabs.addTab(self.tune_pages, tr("Tune"))
        self.tabs.addTab(self.serve_panel, tr("Ser&ve"))

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left_column)
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([560, 720])
        self.setCentralWidget(splitter)

    def attach(self, features: Features) -> None:
        self.features = features

    def start(self, select: Path | None = None) -> None:
        """Start the engine process and the first scan; both finish in the background."""
        self.features.start(select)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closed:
            self._closed = True
            self.features.shutdown(self)
        super().closeEvent(event)


def _first_size(window: QWidget) -> QSize:
    """1280x900, or less on a smaller screen: a window that opens taller than the screen hides Load."""
    screen = window.screen() or QApplication.primaryScreen()
    room = screen.availableGeometry().size() if screen is not None else QSize(1280, 900)
    return QSize(min(1280, room.width()), min(900, room.height()))
