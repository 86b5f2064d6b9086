"""The Export button: the current model and load settings for llama-server, llama-cli and koboldcpp, and
tuning cards saved and opened.

The button knows nothing of the window: it asks callables for the selected model, the settings on the
sliders, the NUMA node the engine is pinned to and (optionally) what is known of the card and the speeds,
and says what happened through :attr:`ExportMenu.message`. A card that is opened and checked hands its
settings out through :attr:`ExportMenu.settings_opened`. Hashing a model (gigabytes) and every file
written or read run on the Background it is given, never on the UI thread; a hash in progress can be
stopped from the menu or with :meth:`ExportMenu.cancel`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QToolButton, QWidget

from gui.core.export import Export, kcpps, llama_cli_command, llama_server_command, preset_section
from gui.core.params import LoadSettings
from gui.core.tuning_card import CardFacts, CardMismatch, TuningCard
from gui.services.tuning_card import HashCancelled, make_card, open_card, read_card, write_card
from gui.ui.background import Background

__all__ = ["ExportMenu"]

CARD_FILTER = "Tuning cards (*.json);;All files (*)"
KCPPS_FILTER = "koboldcpp settings (*.kcpps);;All files (*)"


class ExportMenu(QToolButton):
    message = Signal(str)  # one line for the status bar
    settings_opened = Signal(object)  # LoadSettings from a tuning card, checked against the model
    busy_changed = Signal(bool)  # a model is being hashed

    def __init__(
        self,
        model: Callable[[], Path | None],
        settings: Callable[[], LoadSettings],
        numa_node: Callable[[], int | None],
        background: Background,
        facts: Callable[[], CardFacts] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._model = model
        self._settings = settings
        self._numa_node = numa_node
        self._background = background
        self._facts = facts or CardFacts
        self._cancel: threading.Event | None = None
        # Dialogs, replaceable so the button can be driven without a person (tests, scripts).
        self.ask_save_path: Callable[[str, str, str], str | None] = self._save_dialog
        self.ask_open_path: Callable[[str, str], str | None] = self._open_dialog
        self.confirm: Callable[[str, str], bool] = self._confirm_dialog

        self.setText("Export")
        self.setToolTip("Use these settings elsewhere: llama.cpp, koboldcpp, or a tuning card")
        self.setAccessibleName("Export settings")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self)
        self.copy_server = menu.addAction("Copy llama-server command", lambda: self._copy("llama-server"))
        self.copy_cli = menu.addAction("Copy llama-cli command", lambda: self._copy("llama-cli"))
        self.copy_preset = menu.addAction("Copy llama-server preset section", lambda: self._copy("preset"))
        menu.addSeparator()
        self.save_kcpps = menu.addAction("Save koboldcpp .kcpps…", self.save_kcpps_file)
        menu.addSeparator()
        self.save_card = menu.addAction("Save tuning card…", self.save_card_file)
        self.open_card = menu.addAction("Open tuning card…", self.open_card_file)
        self.stop_hashing = menu.addAction("Stop hashing the model", self.cancel)
        self.stop_hashing.setVisible(False)
        menu.aboutToShow.connect(self._update_actions)
        self.setMenu(menu)
        self._update_actions()

    # ---- what the menu offers -------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._cancel is not None

    def _update_actions(self) -> None:
        has_model = self._model() is not None
        for action in (self.copy_server, self.copy_cli, self.copy_preset, self.save_kcpps):
            action.setEnabled(has_model)
        self.save_card.setEnabled(has_model and not self.busy)
        self.open_card.setEnabled(has_model and not self.busy)
        self.stop_hashing.setVisible(self.busy)

    def _current(self) -> tuple[Path, LoadSettings] | None:
        model = self._model()
        if model is None:
            self.message.emit("Select a model first: the export is for a model and its settings.")
            return None
        return model, self._settings()

    def _say(self, done: str, result: Export) -> None:
        notes = f" Note: {'; '.join(result.notes)}." if result.notes else ""
        self.message.emit(done + notes)

    # ---- copy to the clipboard --------------------------------------------------------------

    def _copy(self, what: str) -> None:
        current = self._current()
        if current is None:
            return
        model, settings = current
        try:
            if what == "llama-server":
                result = llama_server_command(model, settings, self._numa_node())
            elif what == "llama-cli":
                result = llama_cli_command(model, settings, self._numa_node())
            else:
                result = preset_section(model, settings, self._numa_node())
        except ValueError as exc:
            self.message.emit(f"Could not export: {exc}")
            return
        QGuiApplication.clipboard().setText(result.text)
        label = "llama-server preset section" if what == "preset" else f"{what} command"
        self._say(f"The {label} is on the clipboard.", result)

    # ---- files ------------------------------------------------------------------------------

    def save_kcpps_file(self) -> None:
        current = self._current()
        if current is None:
            return
        model, settings = current
        try:
            result = kcpps(model, settings, self._numa_node())
        except ValueError as exc:
            self.message.emit(f"Could not export for koboldcpp: {exc}")
            return
        path = self.ask_save_path("Save koboldcpp settings", f"{model.stem}.kcpps", KCPPS_FILTER)
        if not path:
            return
        target = Path(path)
        self._background.run(
            lambda: target.write_text(result.text, encoding="utf-8"),
            lambda _: self._say(f"Saved {target.name}: start it with koboldcpp --config {target.name}.", result),
            lambda exc: self.message.emit(f"Could not save {target.name}: {exc}"),
        )

    def save_card_file(self) -> None:
        current = self._current()
        if current is None or self.busy:
            return
        model, settings = current
        try:
            settings = settings.validated()
        except ValueError as exc:
            self.message.emit(f"Could not save a tuning card: {exc}")
            return
        path = self.ask_save_path("Save tuning card", f"{model.stem}.tuning.json", CARD_FILTER)
        if not path:
            return
        target, facts, cancel = Path(path), self._facts(), self._start()
        self.message.emit(f"Hashing {model.name} for the tuning card…")

        def job() -> TuningCard:
            card = make_card(model, settings, facts, cancel)
            write_card(target, card)
            return card

        self._background.run(
            job,
            lambda card: self._finish(f"Saved the tuning card {target.name} (SHA-256 {card.model_sha256[:12]}…)."),
            lambda exc: self._finish(self._failure("save the tuning card", exc)),
        )

    def open_card_file(self) -> None:
        model = self._model()
        if model is None:
            self.message.emit("Select a model first: a tuning card's settings are for one model file.")
            return
        if self.busy:
            return
        path = self.ask_open_path("Open tuning card", CARD_FILTER)
        if not path:
            return
        card_path, cancel = Path(path), self._start()
        self.message.emit(f"Checking {card_path.name} against {model.name}…")
        self._background.run(
            lambda: open_card(card_path, model, cancel=cancel),
            lambda opened: self._opened(opened.settings, opened.message),
            lambda exc: self._open_failed(card_path, exc),
        )

    def _open_failed(self, card_path: Path, exc: Exception) -> None:
        self._finish(None)
        if not isinstance(exc, CardMismatch):
            self.message.emit(self._failure(f"open {card_path.name}", exc))
            return
        if not self.confirm("Tuning card for another file", f"{exc}.\n\nApply its settings anyway?"):
            self.message.emit(f"{card_path.name} not applied: {exc}")
            return
        # The card was already read and checked once: read it again (it is small) and apply it as it is.
        self._background.run(
            lambda: read_card(card_path),
            lambda card: self._opened(card.settings, f"Applied anyway: {exc}"),
            lambda error: self.message.emit(self._failure(f"open {card_path.name}", error)),
        )

    def _opened(self, settings: LoadSettings, message: str) -> None:
        self._finish(None)
        self.settings_opened.emit(settings)
        self.message.emit(f"{message[:1].upper()}{message[1:]}; they take effect at the next load.")

    # ---- hashing in progress ------------------------------------------------------------------

    def _start(self) -> threading.Event:
        self._cancel = threading.Event()
        self.busy_changed.emit(True)
        return self._cancel

    def _finish(self, message: str | None) -> None:
        if self._cancel is not None:
            self._cancel = None
            self.busy_changed.emit(False)
        if message:
            self.message.emit(message)

    def cancel(self) -> None:
        """Stop hashing the model (at the next MiB read); the window calls it on closing too."""
        if self._cancel is not None:
            self._cancel.set()

    @staticmethod
    def _failure(doing: str, exc: Exception) -> str:
        if isinstance(exc, HashCancelled):
            return "Stopped hashing the model: nothing was saved or applied."
        if isinstance(exc, OSError):
            return f"Could not {doing}: {exc.strerror or exc}"
        return f"Could not {doing}: {exc}"

    # ---- dialogs ------------------------------------------------------------------------------

    def _save_dialog(self, title: str, name: str, filters: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, title, name, filters)
        return path or None

    def _open_dialog(self, title: str, filters: str) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, title, "", filters)
        return path or None

    def _confirm_dialog(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text)
        return answer == QMessageBox.StandardButton.Yes
