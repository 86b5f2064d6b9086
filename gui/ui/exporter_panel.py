"""The monitor's list of other machines' GPU exporters: a URL to add, the URLs watched, and what each said.

A machine with GPUs that runs NVIDIA's dcgm-exporter or nvitop-exporter is watched by giving its URL
(http://gpu-box:9400/metrics); its GPUs then appear in the monitor beside this machine's (read-only). The list is
a preference the window keeps (gui/core/preferences.py GPU_EXPORTERS); every URL is checked as it is typed
(gui/core/prometheus_text.py scrape_url) and each line says, in words, how its last answer went.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.core.prometheus_text import MAX_EXPORTERS, scrape_url
from gui.services.gpu_exporter import ExporterStatus
from gui.ui.i18n import Tr, core_text, error_text
from gui.ui.list_edit import take_chosen
from gui.ui.plain import plain_label, plain_tip
from gui.ui.theme import themed_style

__all__ = ["ExporterPanel", "status_text"]

tr = Tr("exporter")
_URL = Qt.ItemDataRole.UserRole


def status_text(status: ExporterStatus | None) -> str:
    """One exporter's state in a few words, in the window's language."""
    if status is None or not status.answered:
        return tr("asking…")
    if status.problem:
        return core_text("exporter", status.problem)
    return tr("%n GPU(s) on {host}, read-only", n=status.gpus).format(host=status.host)


class ExporterPanel(QWidget):
    """One row to add a URL; the list (with Remove) only once there is one."""

    urls_changed = Signal(list)  # the URLs, after the user added or removed one

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel(tr("Other machines"), self)
        help_words = tr(
            "A machine that runs NVIDIA's dcgm-exporter (port 9400) or nvitop-exporter: its GPUs are shown here "
            "beside this machine's, read-only (their power cap is set on that machine)"
        )
        self.title.setToolTip(help_words)
        self.entry = QLineEdit(self)
        self.entry.setMaxLength(300)
        self.entry.setPlaceholderText(tr("exporter URL, e.g. http://gpu-box:9400/metrics"))
        self.entry.setToolTip(help_words)
        self.entry.setAccessibleName(tr("GPU exporter URL to add"))
        self.add_button = QPushButton(tr("Watch"), self)
        self.add_button.setToolTip(tr("Show this exporter's GPUs in the monitor"))
        self.list = QListWidget(self)
        self.list.setAccessibleName(tr("GPU exporters watched"))
        self.list.setMaximumHeight(48)
        self.remove_button = QPushButton(tr("Remove"), self)
        self.remove_button.setToolTip(tr("Stop watching the selected exporter"))
        self.note = plain_label(parent=self, wrap=True)  # why a typed URL was not added
        themed_style(self.note, lambda palette: f"color: {palette.warn}")
        self.note.hide()

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.title)
        row.addWidget(self.entry, 1)
        row.addWidget(self.add_button)
        listed = QHBoxLayout()
        listed.setContentsMargins(0, 0, 0, 0)
        listed.addWidget(self.list, 1)
        listed.addWidget(self.remove_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addLayout(listed)
        layout.addWidget(self.note)

        self.add_button.clicked.connect(self.add_typed)
        self.entry.returnPressed.connect(self.add_typed)
        self.remove_button.clicked.connect(self.remove_selected)
        self._statuses: dict[str, ExporterStatus] = {}
        self._show_rows()

    def urls(self) -> list[str]:
        return [str(self.list.item(i).data(_URL)) for i in range(self.list.count())]

    def set_urls(self, urls: Iterable[str]) -> None:
        """The list as stored (already checked); nothing emitted."""
        self.list.clear()
        for url in list(urls)[:MAX_EXPORTERS]:
            self._append(url)
        self._show_rows()

    def add_typed(self) -> None:
        typed = self.entry.text().strip()
        if not typed:
            return
        try:
            url = scrape_url(typed)
        except ValueError as exc:
            self.say(tr("Not added: {why}").format(why=error_text(exc, "exporter")))
            return
        if url in self.urls():
            self.say(tr("Not added: {url} is already watched").format(url=url))
            return
        if self.list.count() >= MAX_EXPORTERS:
            self.say(tr("Not added: at most {n} exporters are watched").format(n=MAX_EXPORTERS))
            return
        self._append(url)
        self.entry.clear()
        self.say("")
        self._show_rows()
        self.urls_changed.emit(self.urls())

    def remove_selected(self) -> None:
        if not take_chosen(self.list):
            return
        self.say("")
        self._show_rows()
        self.urls_changed.emit(self.urls())

    def show_statuses(self, statuses: Sequence[ExporterStatus]) -> None:
        """Each URL's line says how its last answer went (a cheap call: every tick makes it)."""
        fresh = {s.url: s for s in statuses}
        if fresh == self._statuses:
            return
        self._statuses = fresh
        self._show_rows()

    def line_text(self, url: str) -> str:
        return f"{url} — {status_text(self._statuses.get(url))}"

    def _append(self, url: str) -> None:
        item = QListWidgetItem(url)
        item.setData(_URL, url)
        self.list.addItem(item)

    def _show_rows(self) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            url = str(item.data(_URL))
            status = self._statuses.get(url)
            item.setText(self.line_text(url))
            details = [core_text("exporter", w) for w in status.warnings] if status is not None else []
            item.setToolTip(plain_tip("\n".join([self.line_text(url), *details])))
        listed = self.list.count() > 0
        self.list.setVisible(listed)
        self.remove_button.setVisible(listed)
        self.add_button.setEnabled(self.list.count() < MAX_EXPORTERS)

    def say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))
