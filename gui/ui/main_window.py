"""The main window: model picker and load settings on the left, chat on the right."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gui import __version__
from gui.core import protocol as p
from gui.core.params import LoadSettings, describe
from gui.services.engine_client import EngineUnavailable, WorkerExited
from gui.services.models import ModelEntry
from gui.ui.chat_pane import ChatPane
from gui.ui.engine_bridge import EngineBridge
from gui.ui.model_picker import ModelPicker
from gui.ui.param_panel import ParamPanel


class MainWindow(QMainWindow):
    engine_ready = Signal()  # the worker said hello
    model_loaded = Signal(object)  # p.Loaded
    load_finished = Signal(object)  # after every load attempt: True loaded, False failed
    engine_died = Signal(object)  # WorkerExited

    def __init__(self, models_dir: Path, settings: LoadSettings, bridge: EngineBridge | None = None) -> None:
        super().__init__()
        self.setWindowTitle(f"Tightfit {__version__}")
        self.resize(1180, 760)
        self.bridge = bridge or EngineBridge(self)
        self.loaded: p.Loaded | None = None
        self.loading: str | None = None
        self.build: p.EngineBuild | None = None

        # left column: model, settings, load
        self.picker = ModelPicker(models_dir, self)
        self.folder_label = QLabel(f"Folder: {models_dir}", self)
        self.folder_label.setWordWrap(True)
        self.folder_label.setStyleSheet("color: #666")
        self.rescan_button = QPushButton("Rescan", self)
        models_box = QGroupBox("Model", self)
        models_layout = QVBoxLayout(models_box)
        models_layout.addWidget(self.picker)
        row = QHBoxLayout()
        row.addWidget(self.folder_label, 1)
        row.addWidget(self.rescan_button)
        models_layout.addLayout(row)

        self.params = ParamPanel(settings, self)
        params_box = QGroupBox("Load settings", self)
        QVBoxLayout(params_box).addWidget(self.params)

        self.load_button = QPushButton("Load", self)
        self.load_button.setAccessibleName("Load model")
        self.unload_button = QPushButton("Unload", self)
        self.unload_button.setAccessibleName("Unload model")
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress.setTextVisible(True)
        self.progress.setAccessibleName("Load progress")
        self.load_status = QLabel("No model loaded.", self)
        self.load_status.setWordWrap(True)
        load_row = QHBoxLayout()
        load_row.addWidget(self.load_button)
        load_row.addWidget(self.unload_button)
        load_row.addWidget(self.progress, 1)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(models_box, 3)
        left_layout.addWidget(params_box)
        left_layout.addLayout(load_row)
        left_layout.addWidget(self.load_status)
        left_layout.addStretch(1)

        self.chat = ChatPane(self.bridge, self)
        chat_box = QGroupBox("Chat", self)
        QVBoxLayout(chat_box).addWidget(self.chat)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(chat_box)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([500, 680])
        self.setCentralWidget(splitter)

        self.engine_label = QLabel("Engine: starting…", self)
        self.engine_label.setAccessibleName("Engine build")
        self.statusBar().addPermanentWidget(self.engine_label)

        self.picker.selected.connect(self._model_selected)
        self.rescan_button.clicked.connect(lambda: self.picker.rescan())
        self.load_button.clicked.connect(self.load_selected)
        self.unload_button.clicked.connect(self.unload)
        self.bridge.engine_event.connect(self._on_event)
        self._update_buttons()

    # ---- start-up -------------------------------------------------------------------------

    def start(self, select: Path | None = None) -> None:
        """Start the engine process and the first scan; both finish in the background."""
        self.bridge.client.start()
        self.picker.rescan(select)

    # ---- actions --------------------------------------------------------------------------

    def _model_selected(self, entry: ModelEntry | None) -> None:
        if entry is not None:
            self.params.set_model_limits(entry.n_layer, entry.context_length)
        self._update_buttons()

    def load_selected(self) -> None:
        entry = self.picker.current()
        if entry is None or self.loading:
            return
        settings = self.params.settings()
        try:
            settings.validated()
            if not self.bridge.client.alive:
                self.bridge.client.start()
            self.bridge.client.load(entry.path, settings)
        except (ValueError, EngineUnavailable) as exc:
            self.load_status.setText(f"Cannot load: {exc}")
            return
        self.loading = str(entry.path)
        self.loaded = None
        self.chat.set_ready(False)
        self.progress.setValue(0)
        self.load_status.setText(f"Loading {entry.path.name} ({describe(settings)})…")
        self._update_buttons()

    def unload(self) -> None:
        with contextlib.suppress(EngineUnavailable):
            self.bridge.client.unload()
        self.loaded = None
        self.chat.set_ready(False)
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.load_button.setEnabled(self.picker.current() is not None and not self.loading)
        self.unload_button.setEnabled(self.loaded is not None)

    # ---- engine events ------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        if isinstance(event, p.Hello):
            self.build = event.build
            self.engine_label.setText(f"Engine: {event.build.describe()}")
            self.engine_label.setToolTip(event.build.system_info)
            self.engine_ready.emit()
        elif isinstance(event, p.LoadProgress):
            self.progress.setValue(round(event.fraction * 100))
        elif isinstance(event, p.Loaded):
            self.loading = None
            self.loaded = event
            self.progress.setValue(100)
            name = Path(event.model_path).name
            offload = ""
            if self.build is not None and not self.build.gpu_offload:
                offload = " This engine build has no GPU offload: every layer runs on the CPU."
            self.load_status.setText(
                f"Loaded {name} in {event.load_ms / 1000:.1f} s: context {event.n_ctx}, "
                f"{event.n_layer} layers, chat template: {event.chat_template}.{offload}"
            )
            self.chat.set_ready(True)
            self.chat.show_notice("")
            self.model_loaded.emit(event)
            self.load_finished.emit(True)
        elif isinstance(event, p.LoadFailed):
            self.loading = None
            self.progress.setValue(0)
            self.load_status.setText(f"Load failed: {event.error}")
            self.load_finished.emit(False)
        elif isinstance(event, p.Unloaded):
            self.load_status.setText("No model loaded.")
            self.progress.setValue(0)
        elif isinstance(event, p.CommandRejected):
            self.load_status.setText(f"The engine refused a command: {event.error}")
        elif isinstance(event, WorkerExited) and not event.expected:
            self._engine_died(event)
        self._update_buttons()

    def _engine_died(self, event: WorkerExited) -> None:
        was = self.loaded or self.loading
        if self.loading:
            self.load_finished.emit(False)
        self.loaded = None
        self.loading = None
        self.progress.setValue(0)
        cause = f" llama.cpp's last words: {event.log_tail[-1]}" if event.log_tail else ""
        self.chat.show_notice(
            f"{event.reason}{cause} Your conversation is kept. "
            + ("Press Load to start the model again." if was else "")
        )
        self.load_status.setText("The engine stopped; no model loaded.")
        self.engine_label.setText("Engine: restarting…")
        self.engine_died.emit(event)
        # A fresh worker, so Load works at once; the conversation stays in the pane.
        self.bridge.client.start()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.bridge.shutdown()
        self.picker.shutdown()
        super().closeEvent(event)
