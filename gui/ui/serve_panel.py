"""The Serve tab: the loaded model as an OpenAI-compatible API for other programs (an editor, scripts), from the
engine the window already runs. Address, port, an optional API key, where it listens and what it is doing, the
lines another program needs, and the requests it answered.

The server (gui/services/api_server.py) runs in the window's asyncio loop; the window starts and stops it and
tells this panel what happened. 127.0.0.1 unless the user allows other machines, and then a warning says so.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.core.openai_api import check_listen
from gui.core.preferences import SERVE_PORT
from gui.services.api_server import ApiActivity
from gui.ui.i18n import Tr, core_text, error_text, sentence_text
from gui.ui.plain import plain_label
from gui.ui.spec_widgets import int_box
from gui.ui.theme import themed_style

__all__ = ["KEEP_REQUESTS", "ServeChoice", "ServePanel"]

KEEP_REQUESTS = 200  # rows of the request table; the oldest go first
tr = Tr("serve_panel")

COLUMNS = (tr.mark("Time"), tr.mark("Endpoint"), tr.mark("Prompt"), tr.mark("Generated"), "tok/s", tr.mark("Ended"))


@dataclass(frozen=True)
class ServeChoice:
    """What the user asked for; ``check()`` says whether it may listen there."""

    host: str
    port: int
    api_key: str
    allow_remote: bool
    cors_origin: str
    strict_model: bool = False  # only the loaded model's name is answered (openai_api.STRICT_MODEL)

    def check(self) -> str:
        """A warning in the window's language ('' for none), or ValueError with one line."""
        warning = core_text("serve_panel", check_listen(self.host, self.port, self.allow_remote))
        if warning and not self.api_key:
            return tr("{warning}, and without an API key anyone can").format(warning=warning)
        return warning


class ServePanel(QWidget):
    start_requested = Signal(object)  # ServeChoice
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = QLineEdit(self)
        self.host.setAccessibleName(tr("Address to listen on"))
        self.host.setToolTip(tr("127.0.0.1: this machine only. Any other address lets other machines use the model."))
        self.port = int_box(SERVE_PORT, self)
        self.api_key = QLineEdit(self)
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(tr("none"))
        self.api_key.setAccessibleName(tr("API key"))
        self.api_key.setToolTip(tr("When set, every request must carry 'Authorization: Bearer KEY' (not kept on disk)"))
        self.allow_remote = QCheckBox(tr("Allow other machines"), self)
        self.allow_remote.setToolTip(tr("Needed for any address other than 127.0.0.1: set an API key as well"))
        self.cors = QLineEdit(self)
        self.cors.setPlaceholderText(tr("none"))
        self.cors.setAccessibleName(tr("Web pages allowed to call it (CORS origin)"))
        self.cors.setToolTip(
            tr("An origin such as http://localhost:3000 whose pages may call the API; none by default")
        )
        self.strict_model = QCheckBox(tr("Only the loaded model's name"), self)
        self.strict_model.setToolTip(
            tr("Refuse a request that names another model, or none; by default the loaded model answers any name")
        )
        self.serve_button = QPushButton(tr("&Serve"), self)
        self.serve_button.setAccessibleName(tr("Start serving"))
        self.status = plain_label(tr("Not serving."), self, wrap=True)
        self.status.setAccessibleName(tr("Serving status"))
        self.warning = plain_label("", self, wrap=True)
        themed_style(self.warning, lambda palette: f"color: {palette.warn}; font-weight: bold")
        self.warning.setVisible(False)
        self.usage = QPlainTextEdit(self)
        self.usage.setReadOnly(True)
        self.usage.setAccessibleName(tr("How another program uses it"))
        self.usage.setMaximumHeight(110)
        self.usage.setPlaceholderText(tr("Serve, and the lines another program needs appear here."))
        self.requests = QTableWidget(0, len(COLUMNS), self)
        self.requests.setHorizontalHeaderLabels([tr(name) for name in COLUMNS])
        self.requests.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.requests.setAccessibleName(tr("API requests answered"))
        self.requests.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.requests.horizontalHeader().setStretchLastSection(True)
        self.serving = False
        self._address: tuple[str, int] | None = None  # where it listens, while serving
        self._model: str | None = None  # the model it answers for
        self.slots = 1
        self.running = 0
        self.queued = 0
        self.held = ""

        form = QGridLayout()
        form.addWidget(QLabel(tr("Address"), self), 0, 0)
        form.addWidget(self.host, 0, 1)
        form.addWidget(QLabel(tr("Port"), self), 0, 2)
        form.addWidget(self.port, 0, 3)
        form.addWidget(QLabel(tr("API key"), self), 1, 0)
        form.addWidget(self.api_key, 1, 1)
        form.addWidget(self.allow_remote, 1, 2, 1, 2)
        form.addWidget(QLabel(tr("CORS origin"), self), 2, 0)
        form.addWidget(self.cors, 2, 1)
        form.addWidget(self.strict_model, 2, 2, 1, 2)
        form.setColumnStretch(1, 1)
        row = QHBoxLayout()
        row.addWidget(self.serve_button)
        row.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(form)
        layout.addLayout(row)
        layout.addWidget(self.warning)
        layout.addWidget(self.usage)
        layout.addWidget(self.requests, 1)

        self.serve_button.clicked.connect(self._clicked)
        for edit in (self.host, self.api_key, self.cors):
            edit.textChanged.connect(lambda _: self._check())
        self.port.valueChanged.connect(lambda _: self._check())
        self.allow_remote.toggled.connect(lambda _: self._check())

    # ---- what the user chose ---------------------------------------------------------------

    def choice(self) -> ServeChoice:
        return ServeChoice(
            self.host.text().strip(),
            int(self.port.value()),
            self.api_key.text(),
            self.allow_remote.isChecked(),
            self.cors.text().strip(),
            self.strict_model.isChecked(),
        )

    def _check(self) -> bool:
        """Say what listening there means; True when it may."""
        try:
            warning = self.choice().check()
        except ValueError as exc:
            self._warn(error_text(exc, "serve_panel"))
            self.serve_button.setEnabled(self.serving)  # Stop always works
            return False
        self._warn(tr("{status}.").format(status=warning[:1].upper() + warning[1:]) if warning else "")
        self.serve_button.setEnabled(True)
        return True

    def _warn(self, text: str) -> None:
        self.warning.setText(text)
        self.warning.setVisible(bool(text))

    def _clicked(self) -> None:
        if self.serving:
            self.stop_requested.emit()
        elif self._check():
            self.start_requested.emit(self.choice())

    # ---- what the window tells it -------------------------------------------------------------

    def set_serving(self, address: tuple[str, int] | None, model: str | None = None, slots: int = 1) -> None:
        """Listening at ``address`` (None: not serving); the model it answers for, if one is loaded, and how many
        replies it generates at once (the model's parallel slots)."""
        self.serving = address is not None
        self.slots = slots
        self.serve_button.setText(tr("&Stop serving") if self.serving else tr("&Serve"))
        self.serve_button.setAccessibleName(tr("Stop serving") if self.serving else tr("Start serving"))
        for widget in (self.host, self.port, self.api_key, self.allow_remote, self.cors, self.strict_model):
            widget.setEnabled(not self.serving)
        if address is None:
            self.usage.setPlainText("")
            self._check()
        else:
            self.serve_button.setEnabled(True)
            self.usage.setPlainText(usage_lines(_base_url(*address), model, bool(self.api_key.text())))
        self._address = address
        self._model = model
        self.show_status()

    def set_model(self, model: str | None) -> None:
        if self.serving and model != self._model:
            self.set_serving(self._address, model, self.slots)

    def set_counts(self, running: int, queued: int, held: str) -> None:
        self.running, self.queued, self.held = running, queued, held
        self.show_status()

    def say(self, text: str) -> None:
        self.status.setText(text)

    def show_status(self) -> None:
        if not self.serving or self._address is None:
            self.status.setText(tr("Not serving."))
            return
        model = self._model or tr("no model loaded (requests get 503 until one is)")
        counts = (
            tr("{running} of {slots} at once running, {queued} waiting")
            if self.slots > 1
            else tr("{running} running, {queued} waiting")
        ).format(running=self.running, slots=self.slots, queued=self.queued)
        text = tr("Listening on {url} — {model}. {counts}").format(
            url=_base_url(*self._address), model=model, counts=counts
        )
        if self.held and self.queued:
            text += tr(" (the window is using the engine: {held})").format(held=self.held)
        self.status.setText(tr("{status}.").format(status=text))

    def add_request(self, activity: ApiActivity, now: float | None = None) -> None:
        """An API request that ended, as a row at the top (the newest first)."""
        stamp = time.strftime("%H:%M:%S", time.localtime(now if now is not None else time.time()))
        ended = (
            activity.finish_reason
            if not activity.error
            else tr("error: {error}").format(error=sentence_text(activity.error))
        )
        rate = f"{activity.decode_tok_s:,.1f}" if activity.decode_tok_s > 0 else ""
        cells = (stamp, activity.endpoint, str(activity.n_prompt), str(activity.n_gen), rate, ended)
        self.requests.insertRow(0)
        for column, text in enumerate(cells):
            self.requests.setItem(0, column, QTableWidgetItem(text))  # plain text: an error can say anything
        while self.requests.rowCount() > KEEP_REQUESTS:
            self.requests.removeRow(self.requests.rowCount() - 1)


def _base_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/v1"


def usage_lines(base_url: str, model: str | None, keyed: bool) -> str:
    """What another program needs: the base URL, the model's name, and a request to try."""
    name = model or "MODEL"
    key = "YOUR_KEY" if keyed else "none"
    body = json.dumps({"model": name, "messages": [{"role": "user", "content": "Hello"}]})
    auth = ' -H "Authorization: Bearer YOUR_KEY"' if keyed else ""
    return "\n".join(
        (
            f"Base URL: {base_url}    Model: {name}    API key: {key}",
            f'Python: OpenAI(base_url="{base_url}", api_key="{key}")',
            f"curl {base_url}/chat/completions -H 'Content-Type: application/json'{auth} -d {shlex.quote(body)}",
        )
    )
