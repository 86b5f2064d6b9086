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
from gui.core.tuning_card import CardFacts, CardMismatch, TuningCard, off_machine, without_off_machine
from gui.core.words import Text, joined
from gui.services.tuning_card import HashCancelled, make_card, open_card, read_card, write_card
from gui.ui.background import Background
from gui.ui.i18n import Tr, error_text, sentence_text
from gui.ui.plain import plain_box

__all__ = ["ExportMenu"]

tr = Tr("export_menu")

CARD_FILTER = tr.mark("Tuning cards (*.json);;All files (*)")  # translated where a dialog shows it
KCPPS_FILTER = tr.mark("koboldcpp settings (*.kcpps);;All files (*)")


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
        # Its own question, apart from any other: a card that would send the model to other machines.
        self.confirm_remote: Callable[[str, str], bool] = self._confirm_dialog

        self.setText(tr("Export"))
        self.setToolTip(tr("Use these settings elsewhere: llama.cpp, koboldcpp, or a tuning card"))
        self.setAccessibleName(tr("Export settings"))
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self)
        self.copy_server = menu.addAction(tr("Copy llama-server command"), lambda: self._copy("llama-server"))
        self.copy_cli = menu.addAction(tr("Copy llama-cli command"), lambda: self._copy("llama-cli"))
        self.copy_preset = menu.addAction(tr("Copy llama-server preset section"), lambda: self._copy("preset"))
        menu.addSeparator()
        self.save_kcpps = menu.addAction(tr("Save koboldcpp .kcpps…"), self.save_kcpps_file)
        menu.addSeparator()
        self.save_card = menu.addAction(tr("Save tuning card…"), self.save_card_file)
        self.open_card = menu.addAction(tr("Open tuning card…"), self.open_card_file)
        self.stop_hashing = menu.addAction(tr("Stop hashing the model"), self.cancel)
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
            self.message.emit(tr("Select a model first: the export is for a model and its settings."))
            return None
        return model, self._settings()

    def _say(self, done: str, result: Export) -> None:
        notes = ""
        if result.notes:  # sentences of gui/core/export.py, in the window's language
            notes = tr(" Note: {notes}.").format(notes=sentence_text(joined("; ", result.notes)))
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
            self.message.emit(tr("Could not export: {error}").format(error=error_text(exc, "export")))
            return
        QGuiApplication.clipboard().setText(result.text)
        if what == "llama-server":
            done = tr("The llama-server command is on the clipboard.")
        elif what == "llama-cli":
            done = tr("The llama-cli command is on the clipboard.")
        else:
            done = tr("The llama-server preset section is on the clipboard.")
        self._say(done, result)

    # ---- files ------------------------------------------------------------------------------

    def save_kcpps_file(self) -> None:
        current = self._current()
        if current is None:
            return
        model, settings = current
        try:
            result = kcpps(model, settings, self._numa_node())
        except ValueError as exc:
            self.message.emit(tr("Could not export for koboldcpp: {error}").format(error=error_text(exc, "export")))
            return
        path = self.ask_save_path(tr("Save koboldcpp settings"), f"{model.stem}.kcpps", tr(KCPPS_FILTER))
        if not path:
            return
        target = Path(path)
        self._background.run(
            lambda: target.write_text(result.text, encoding="utf-8"),
            lambda _: self._say(
                tr("Saved {file}: start it with koboldcpp --config {file}.").format(file=target.name), result
            ),
            lambda exc: self.message.emit(
                tr("Could not save {file}: {error}").format(file=target.name, error=error_text(exc, "export"))
            ),
        )

    def save_card_file(self) -> None:
        current = self._current()
        if current is None or self.busy:
            return
        model, settings = current
        try:
            settings = settings.validated()
        except ValueError as exc:
            self.message.emit(tr("Could not save a tuning card: {error}").format(error=error_text(exc, "export")))
            return
        path = self.ask_save_path(tr("Save tuning card"), f"{model.stem}.tuning.json", tr(CARD_FILTER))
        if not path:
            return
        target, facts, cancel = Path(path), self._facts(), self._start()
        self.message.emit(tr("Hashing {model} for the tuning card…").format(model=model.name))

        def job() -> TuningCard:
            card = make_card(model, settings, facts, cancel)
            write_card(target, card)
            return card

        self._background.run(
            job,
            lambda card: self._finish(
                tr("Saved the tuning card {file} (SHA-256 {sha}…).").format(
                    file=target.name, sha=card.model_sha256[:12]
                )
            ),
            lambda exc: self._finish(self._failure(tr("Could not save the tuning card: {error}"), exc)),
        )

    def open_card_file(self) -> None:
        model = self._model()
        if model is None:
            self.message.emit(tr("Select a model first: a tuning card's settings are for one model file."))
            return
        if self.busy:
            return
        path = self.ask_open_path(tr("Open tuning card"), tr(CARD_FILTER))
        if not path:
            return
        card_path, cancel = Path(path), self._start()
        self.message.emit(tr("Checking {card} against {model}…").format(card=card_path.name, model=model.name))
        self._background.run(
            lambda: open_card(card_path, model, cancel=cancel),
            lambda opened: self._opened(opened.settings, opened.message),
            lambda exc: self._open_failed(card_path, exc),
        )

    def _open_failed(self, card_path: Path, exc: Exception) -> None:
        self._finish(None)
        if not isinstance(exc, CardMismatch):
            self.message.emit(self._failure(tr("Could not open {file}: {error}"), exc, file=card_path.name))
            return
        mismatch = error_text(exc, "export")
        if not self.confirm(
            tr("Tuning card for another file"),
            tr("{mismatch}.\n\nApply its settings anyway?").format(mismatch=mismatch),
        ):
            self.message.emit(tr("{file} not applied: {error}").format(file=card_path.name, error=mismatch))
            return
        # The card was already read and checked once: read it again (it is small) and apply it as it is.
        self._background.run(
            lambda: read_card(card_path),
            lambda card: self._opened(card.settings, tr("Applied anyway: {mismatch}").format(mismatch=mismatch)),
            lambda error: self.message.emit(
                self._failure(tr("Could not open {file}: {error}"), error, file=card_path.name)
            ),
        )

    def _opened(self, settings: LoadSettings, message: Text) -> None:
        self._finish(None)
        said = sentence_text(message)  # translated before its first letter is raised (a Words would lose it)
        said = f"{said[:1].upper()}{said[1:]}"
        current = self._settings()
        remote = off_machine(settings, current)
        if remote and not self.confirm_remote(
            tr("Tuning card names other machines"),
            tr(
                "This card would run the model on other machines: RPC servers {servers}.\n\n"
                "Their owners would get the model's weights, every prompt and every reply.\n\n"
                "Use these machines? No applies the card's other settings without them."
            ).format(servers=remote.get("rpc_servers", "")),
        ):
            settings = without_off_machine(settings, current)
            said = tr("{message} (without the RPC servers it names)").format(message=said)
        self.settings_opened.emit(settings)
        self.message.emit(tr("{message}; they take effect at the next load.").format(message=said))

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
    def _failure(template: str, exc: Exception, **names: str) -> str:
        """``template`` ("Could not open {file}: {error}") with the reason, or the words for a stopped hash."""
        if isinstance(exc, HashCancelled):
            return tr("Stopped hashing the model: nothing was saved or applied.")
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else error_text(exc, "export")
        return template.format(error=reason, **names)

    # ---- dialogs ------------------------------------------------------------------------------

    def _save_dialog(self, title: str, name: str, filters: str) -> str | None:
        path, _ = QFileDialog.getSaveFileName(self, title, name, filters)
        return path or None

    def _open_dialog(self, title: str, filters: str) -> str | None:
        path, _ = QFileDialog.getOpenFileName(self, title, "", filters)
        return path or None

    def _confirm_dialog(self, title: str, text: str) -> bool:
        # The text quotes the card (a file name, servers): shown as written, never as rich text.
        yes, no = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No
        box = plain_box(self, QMessageBox.Icon.Question, title, text, buttons=yes | no)
        box.setDefaultButton(no)
        return box.exec() == yes
