"""The row under the memory plan: Load, Unload, the load's progress, the engine's log after a failure, the export
menu, and the line that says where the load stands. A view: the load controller (gui/ui/controllers/load.py)
and the engine controller (gui/ui/controllers/engine.py) say what it shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QProgressBar, QPushButton, QWidget

from gui.core.planner import Plan, Verdict
from gui.ui.i18n import Tr
from gui.ui.plain import plain_label, plain_tip
from gui.ui.plan_panel import planner_text

tr = Tr("load_bar")


class LoadBar(QWidget):
    """Load / Unload / progress / Engine log… / Export, in one row; the status line is ``status``, laid out by the
    window under the row (it wraps, and may quote a file name, an engine error or a log line)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.load_button = QPushButton(tr("&Load"), self)
        self.load_button.setAccessibleName(tr("Load model"))
        self.load_button.setToolTip(tr("Load the selected model with these settings (Ctrl+L)"))
        self.unload_button = QPushButton(tr("&Unload"), self)
        self.unload_button.setAccessibleName(tr("Unload model"))
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 100)
        self.progress.setTextVisible(True)
        self.progress.setAccessibleName(tr("Load progress"))
        self.status = plain_label(tr("No model loaded."), parent)
        self.status.setWordWrap(True)
        # llama.cpp's own words after a failure, one click away.
        self.log_button = QPushButton(tr("Engine log…"), self)
        self.log_button.setToolTip(tr("Open the log of the engine that stopped"))
        self.log_button.hide()
        self.log_button.clicked.connect(self.open_log)
        self.log_path: Path | None = None
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.addWidget(self.load_button)
        self.row.addWidget(self.unload_button)
        self.row.addWidget(self.progress, 1)
        self.row.addWidget(self.log_button)

    def add_tool(self, widget: QWidget) -> None:
        """A button at the row's end (the export menu)."""
        self.row.addWidget(widget)

    def say(self, text: str) -> None:
        self.status.setText(text)

    def show_ready(self, enabled: bool, unload: bool, stale: bool) -> None:
        """Load enabled or not, Unload enabled or not, and whether Load means "reload to apply" (the loaded
        model with settings moved since)."""
        self.load_button.setEnabled(enabled)
        self.unload_button.setEnabled(unload)
        self.load_button.setText(tr("Re&load to apply") if stale else tr("&Load"))
        self.load_button.setToolTip(
            tr("The settings changed since the load; reload the model with them (Ctrl+L)")
            if stale
            else tr("Load the selected model with these settings (Ctrl+L)")
        )

    def show_log(self, path: Path | None) -> None:
        self.log_path = path if path is not None and path.exists() else None
        self.log_button.setVisible(self.log_path is not None)
        if self.log_path is not None:
            self.log_button.setToolTip(plain_tip(tr("Open {path}").format(path=self.log_path)))

    def open_log(self) -> None:
        if self.log_path is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.log_path)))


def overcommit_dialog(parent: QWidget, plan: Plan, done: Callable[[bool], None]) -> QMessageBox:
    """Stop a load the plan says will run out of memory; say what would fit; offer to load anyway. Opened
    (not run): ``done`` hears, once it closes, whether the user chose to load anyway."""
    device = next((d for d in plan.devices if d.verdict is Verdict.WONT_FIT), None)
    where = ""
    if device is not None:
        where = tr("{card} would need {needed} MiB of {free} MiB free").format(
            card=device.name, needed=f"{device.needed_mib:,.0f}", free=f"{device.free_mib:,.0f}"
        )
    box = QMessageBox(QMessageBox.Icon.Warning, tr("This load will not fit"), "", parent=parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(tr("The plan says this load runs out of memory. {where}.").format(where=where))
    fixes = "\n".join(f"• {planner_text(s)}" for s in plan.suggestions)
    fixes = fixes or "• " + tr("a smaller quant of this model")
    box.setInformativeText(tr("Any of these would make it fit:\n{fixes}").format(fixes=fixes))
    anyway = box.addButton(tr("Load anyway"), QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)

    def finished() -> None:
        done(box.clickedButton() is anyway)

    box.finished.connect(finished)
    box.open()
    return box
