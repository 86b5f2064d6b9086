"""Which quant fits my card, and how fast: the quant table for the selected model and for a Hugging Face repo.

Rows are computed by the planner from the files' headers only (local files, or headers read from the hub
with HTTP Range requests), for the card and settings the window plans for. Network, keyring and disk work
runs on background threads; results come back as signals. Downloads can be paused, resumed and cancelled
(which removes the partial file). A token for gated or private repositories can be entered here; the hub
client keeps it in the system keyring, or for the session only.

Names and messages may come from the server: labels show plain text, tooltips are escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.core.planner import Verdict
from gui.core.planning_context import PlanningContext
from gui.core.quant_quality import SOURCE as QUALITY_SOURCE
from gui.core.words import Text, Words, message_of
from gui.services.download import Download, DownloadProgress, pending_downloads
from gui.services.hub import HubClient, HubListing, parse_repo_id
from gui.services.quant_table import QuantRow, QuantSource, quant_rows
from gui.services.remote_file import HubError, RemoteFile
from gui.ui.background import Background
from gui.ui.i18n import Tr, core_text, error_text, sentence_text
from gui.ui.model_picker import human_size
from gui.ui.plain import plain_label, plain_tip
from gui.ui.scrolling import vertical_scroll
from gui.ui.vram_bar import VERDICT_COLOURS

tr = Tr("models_tab")
COLUMNS = (
    tr.mark("File"),
    tr.mark("Quant"),
    tr.mark("Size"),
    "BPW",
    tr.mark("Fits"),
    tr.mark("Max ctx"),
    tr.mark("GPU layers"),
    "tok/s",
    tr.mark("Quality"),
)
HEADER_TIPS = (
    tr.mark("The GGUF file"),
    tr.mark("Quant type, from the file type and the mix of tensor types"),
    tr.mark("File size"),
    tr.mark("Bits per weight"),
    tr.mark(
        "Whether every layer fits on the card at the current context, keeping the margin; for a mixture-of-experts "
        "model, how many layers' experts must stay in host memory for every layer's attention to be on the card"
    ),
    tr.mark("The largest context that still fits with every layer on the card"),
    tr.mark("GPU layers that fit at the current context"),
    tr.mark("Decode ceiling from memory bandwidth (tok/s) for that placement"),
    tr.mark("Relative quality of the quant type (llama.cpp's quantize table)"),
)


def fit_words(row: QuantRow) -> str:
    """QuantRow.fit_words in the window's language."""
    if not row.on_gpu:
        return tr("no GPU")
    if row.fits_with_experts_on_cpu:
        return tr("with {n} layers' experts on the CPU").format(n=row.cpu_expert_layers)
    return core_text("planner", row.fits.answer)


class QuantTable(QTableWidget):
    chosen = Signal(object)  # QuantRow the user double-clicked or activated

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.rows: list[QuantRow] = []
        self.setHorizontalHeaderLabels([tr(name) for name in COLUMNS])
        for col, tip in enumerate(HEADER_TIPS):
            header_item = self.horizontalHeaderItem(col)
            if header_item is not None:
                header_item.setToolTip(tr(tip))
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.verticalHeader().setVisible(False)
        self.setWordWrap(False)
        # The file name takes the room the figures leave and, on a narrow window, loses its middle (the quant
        # at its end stays in view; the whole name is in its tooltip) instead of pushing the figures sideways.
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.horizontalHeader()
        for col in range(len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        self.cellActivated.connect(self._activated)
        self.cellDoubleClicked.connect(self._activated)

    def show_rows(self, rows: Sequence[QuantRow]) -> None:
        self.rows = list(rows)
        self.setRowCount(len(rows))
        for r, row in enumerate(rows):
            if row.error:
                cells = [row.label, tr("error"), "", "", "", "", "", "", core_text("models_tab", row.error)]
            else:
                cells = [
                    row.label,
                    row.quant,
                    human_size(row.size_bytes),
                    f"{row.bits_per_weight:.2f}",
                    fit_words(row),
                    f"{row.max_ctx_full_offload:,}" if row.max_ctx_full_offload else "—",
                    (
                        (
                            tr("all")
                            if row.all_layers
                            else tr("{n} of {total}").format(n=row.gpu_layers, total=row.n_layer + 1)
                        )
                        if row.on_gpu
                        else "—"
                    ),
                    f"{row.tok_s:.0f}" if row.tok_s else tr("n/a"),
                    sentence_text(row.quality_level) if row.quality_level else "?",
                ]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 4:
                    # Every layer on the card with some experts in host memory keeps the margin: it fits.
                    shown = Verdict.FITS if row.fits_with_experts_on_cpu else row.fits
                    if row.on_gpu:  # without a GPU the cell is a fact, not a warning
                        item.setForeground(QColor(VERDICT_COLOURS[shown]))
                if c == 8:
                    item.setToolTip(
                        plain_tip(
                            tr("{hint}\n\nSource: {source}").format(
                                hint=sentence_text(row.quality_hint),
                                source=sentence_text(QUALITY_SOURCE),
                            )
                        )
                    )
                if c == 0:
                    item.setToolTip(plain_tip(str(row.path or row.url or row.label)))
                self.setItem(r, c, item)

    def _activated(self, r: int, _c: int) -> None:
        if 0 <= r < len(self.rows) and not self.rows[r].error:
            self.chosen.emit(self.rows[r])


class ModelsTab(QWidget):
    """The local quant table and the Hugging Face browser, sharing one planning context."""

    local_chosen = Signal(object)  # QuantRow of a local file: the window selects it and auto-fits
    listed = Signal()  # a hub listing finished (rows filled, or an error shown)
    download_finished = Signal(object)  # Path of the verified file, or None
    token_checked = Signal()  # the token line says which token is used (after a change or a listing)
    _progress = Signal(object)

    def __init__(self, models_dir: Path, client: HubClient, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models_dir = models_dir
        self.client = client
        self._hub = Background("hub", workers=2, parent=self)
        # Planning every quant (an auto-fit each) takes tens of ms for a big family: off the UI thread, newest
        # request wins.
        self._planner = Background("quant-plan", parent=self)
        self._context: PlanningContext | None = None
        self._local: list[Any] = []
        self._remote: list[tuple[RemoteFile, Any]] = []
        self.download: Download | None = None
        self.pending: RemoteFile | None = None  # a download interrupted in an earlier run

        self.local_title = plain_label(tr("Select a model in the library."), self, wrap=True)  # the name, from the file
        self.local_table = QuantTable(self)
        self.local_table.setAccessibleName(tr("Quants of the selected model"))
        # A group box title does not wrap, and would set the tab's (and the window's) least width.
        local_box = QGroupBox(tr("Quants on disk"), self)
        self.local_table.setToolTip(tr("Double-click a quant to select it and auto-fit it to the card"))
        local_layout = QVBoxLayout(local_box)
        local_layout.addWidget(self.local_title)
        local_layout.addWidget(self.local_table)

        self.repo = QLineEdit(self)
        self.repo.setPlaceholderText(tr("owner/name on Hugging Face, e.g. unsloth/Qwen3.5-27B-GGUF"))
        self.repo.setAccessibleName(tr("Hugging Face repository"))
        self.list_button = QPushButton(tr("List quants"), self)
        self.token = QLineEdit(self)
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText(tr("Hugging Face token (hf_…) for gated or private repositories"))
        self.token.setAccessibleName(tr("Hugging Face token"))
        self.token_button = QPushButton(tr("Use token"), self)
        self.token_button.setToolTip(
            plain_tip(tr("Kept in the system keyring, or for this session only when there is none. Empty: forget it."))
        )
        self.token_status = plain_label(
            tr(
                "Gated or private repositories need a token: HF_TOKEN, your huggingface_hub login, or one entered here."
            ),
            self,
            wrap=True,
        )
        self.hub_status = plain_label(
            tr("Headers are read with HTTP range requests: nothing is downloaded to compare."), self, wrap=True
        )
        self.hub_table = QuantTable(self)
        self.hub_table.setAccessibleName(tr("Quants in the repository"))
        self.download_button = QPushButton(tr("Download"), self)
        self.pause_button = QPushButton(tr("Pause"), self)
        self.cancel_button = QPushButton(tr("Cancel"), self)
        self.cancel_button.setToolTip(plain_tip(tr("Stop the download and remove its partial file")))
        self.download_bar = QProgressBar(self)
        self.download_bar.setAccessibleName(tr("Download progress"))
        self.download_status = plain_label("", self, wrap=True)
        repo_row = QHBoxLayout()
        repo_row.addWidget(self.repo, 1)
        repo_row.addWidget(self.list_button)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token, 1)
        token_row.addWidget(self.token_button)
        download_row = QHBoxLayout()
        download_row.addWidget(self.download_button)
        download_row.addWidget(self.pause_button)
        download_row.addWidget(self.cancel_button)
        download_row.addWidget(self.download_bar, 1)
        hub_box = QGroupBox("Hugging Face", self)
        hub_layout = QVBoxLayout(hub_box)
        hub_layout.addLayout(repo_row)
        hub_layout.addLayout(token_row)
        hub_layout.addWidget(self.token_status)
        hub_layout.addWidget(self.hub_status)
        hub_layout.addWidget(self.hub_table)
        hub_layout.addLayout(download_row)
        hub_layout.addWidget(self.download_status)

        # On a short screen the tab scrolls rather than squeezing the tables and notes into each other.
        content = QWidget(self)
        content_layout = QVBoxLayout(content)
        content_layout.addWidget(local_box, 1)
        content_layout.addWidget(hub_box, 1)
        self.local_table.setMinimumHeight(100)
        self.hub_table.setMinimumHeight(120)
        scroll = vertical_scroll(content, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        self.pause_button.setEnabled(False)
        self.cancel_button.setEnabled(False)
        self.download_button.setEnabled(False)

        self.local_table.chosen.connect(self.local_chosen)
        self.list_button.clicked.connect(self.list_repo)
        self.repo.returnPressed.connect(self.list_repo)
        self.token_button.clicked.connect(self.apply_token)
        self.token.returnPressed.connect(self.apply_token)
        self.download_button.clicked.connect(self.start_download)
        self.pause_button.clicked.connect(self._pause_clicked)
        self.cancel_button.clicked.connect(self.cancel_download)
        self.hub_table.itemSelectionChanged.connect(self._hub_selection)
        self._progress.connect(self._show_progress)
        self._run(lambda: pending_downloads(self.models_dir), self._found_pending)

    def _found_pending(self, result: Any) -> None:
        """A download cut short in an earlier run (closed window, lost connection): offer to finish it."""
        if isinstance(result, Exception) or not result or self.download is not None:
            return
        remote, done = result[0]
        self.pending = remote
        self.download_status.setText(
            tr("Interrupted download: {file}, {done} of {total} already here.").format(
                file=remote.name, done=human_size(done), total=human_size(remote.size)
            )
        )
        self.download_bar.setValue(round(100 * done / remote.size) if remote.size else 0)
        self.pause_button.setText(tr("Resume"))
        self.pause_button.setEnabled(True)
        self.cancel_button.setEnabled(True)

    # ---- planning context -----------------------------------------------------------------

    def set_context(self, context: PlanningContext) -> None:
        """The card and settings every row is planned for (the window's planning context); the tables follow."""
        self._context = context
        self._refresh_local()
        self._refresh_remote()

    def _plan_rows(self, which: str, items: Sequence[Any], show: Callable[[list[QuantRow]], None]) -> None:
        """Plan every item on the planner thread; show the rows unless a newer request came meanwhile."""
        context = self._context
        if self._planner.closed:
            return
        if context is None or not items:
            self._planner.forget(which)
            show([])
            return
        wanted = list(items)
        c = context

        def rows() -> list[QuantRow]:
            return quant_rows(wanted, c.settings, c.devices, c.margin_mib, c.ram_bandwidth_gbs, c.link)

        # A planner bug must not take the tab down: the rows stay empty and the log says why.
        self._planner.latest(which, rows, show, lambda _exc: show([]))

    def set_local_variants(self, title: str, variants: Sequence[Any]) -> None:
        self._local = list(variants)
        self.local_title.setText(title)
        self._refresh_local()

    def _refresh_local(self) -> None:
        self._plan_rows("local", self._local, self.local_table.show_rows)

    def _refresh_remote(self, then: Callable[[], None] | None = None) -> None:
        sources = [QuantSource(remote.name, header, url=remote.url) for remote, header in self._remote]
        by_name = {remote.name: remote for remote, _ in self._remote}

        def show(rows: list[QuantRow]) -> None:
            self.hub_table.show_rows([replace(row, source=by_name.get(row.label)) for row in rows])
            if then is not None:
                then()

        self._plan_rows("remote", sources, show)

    # ---- hub ------------------------------------------------------------------------------

    def _run(self, job: Callable[[], Any], then: Callable[[Any], None]) -> None:
        """Hub, keyring and disk work off the UI thread; ``then`` gets the result, or the exception it raised."""
        self._hub.run(job, then, then)

    def apply_token(self) -> None:
        """Use the typed token (an empty field forgets it); the field is cleared at once, never shown again."""
        text = self.token.text()
        self.token.clear()
        self.token_button.setEnabled(False)
        self.token_status.setText(tr("Keeping the token…") if text.strip() else tr("Forgetting the token…"))
        self._run(lambda: self.client.use_token(text), self._token_applied)

    def _token_applied(self, result: Any) -> None:
        self.token_button.setEnabled(True)
        self._show_token(result)

    def _show_token(self, words: Any) -> None:
        if isinstance(words, Exception):
            words = tr("The token could not be set up ({error})").format(error=type(words).__name__)
        self.token_status.setText(sentence_text(words) if isinstance(words, str | Words) else str(words))
        self.token_checked.emit()

    def focus_repository(self) -> None:
        """Put the cursor in the repository field, ready for an ``owner/name``."""
        self.repo.setFocus(Qt.FocusReason.OtherFocusReason)
        self.repo.selectAll()

    def list_repo(self) -> None:
        try:
            repo_id = parse_repo_id(self.repo.text())
        except (HubError, ValueError) as exc:
            self.hub_status.setText(error_text(exc))
            self.listed.emit()
            return
        self.hub_status.setText(tr("Listing {repo} and reading each file's header…").format(repo=repo_id))
        self.list_button.setEnabled(False)

        def job() -> tuple[list[tuple[RemoteFile, Any]], list[Text], list[tuple[str, Text]]]:
            listing: HubListing = self.client.list_repo(repo_id)
            found, unread = [], []
            for remote in listing.files:
                try:
                    found.append((remote, self.client.read_header(remote)))
                except Exception as exc:  # one unreadable file must not hide the others
                    unread.append((remote.name, message_of(exc)))
            return found, listing.notes, unread

        self._run(job, self._listed)
        self._run(self.client.token_words, self._show_token)

    def _listed(self, result: Any) -> None:
        self.list_button.setEnabled(True)
        if isinstance(result, Exception):
            self._remote = []
            self.hub_status.setText(error_text(result))
        else:
            self._remote, notes, unread = result
            problems = [sentence_text(note) for note in notes]
            problems += [
                tr("{file}: {problem}").format(file=name, problem=sentence_text(problem)) for name, problem in unread
            ]
            text = tr("{n} GGUF file(s); sizes and fit from their headers.").format(n=len(self._remote))
            if problems:
                text += tr(" Could not read: ") + tr("; ").join(problems)
            self.hub_status.setText(text)
        self._refresh_remote(then=self.listed.emit)

    def _selected_remote(self) -> RemoteFile | None:
        rows = self.hub_table.selectionModel().selectedRows() if self.hub_table.selectionModel() else []
        if not rows:
            return None
        row = self.hub_table.rows[rows[0].row()]
        return row.source if isinstance(row.source, RemoteFile) else None

    def _hub_selection(self) -> None:
        busy = self.download is not None and self.download.state == "running"
        self.download_button.setEnabled(self._selected_remote() is not None and not busy)

    def start_download(self, remote: RemoteFile | None = None) -> None:
        remote = remote or self._selected_remote()
        if remote is None:
            return
        self.pending = None
        self.download = self.client.download(remote, self.models_dir, on_progress=self._progress.emit)
        self.download_status.setText(
            tr("Downloading {file} into {folder}…").format(file=remote.name, folder=self.models_dir)
        )
        self.download_button.setEnabled(False)
        self.pause_button.setEnabled(True)
        self.cancel_button.setEnabled(True)
        self.pause_button.setText(tr("Pause"))
        self.download.start()

    def _pause_clicked(self) -> None:
        if self.download is None:
            if self.pending is not None:  # picks up from the bytes on disk, checked by the sidecar
                self.start_download(self.pending)
            return
        if self.download.state == "running":
            self.download.pause()
        else:
            self.download.resume()
            self.pause_button.setText(tr("Pause"))

    def cancel_download(self) -> None:
        """Stop the download (or the one interrupted in an earlier run) and remove its partial file; the
        progress line says when it is done."""
        download = self.download
        if download is None and self.pending is not None:
            download = self.download = self.client.download(
                self.pending, self.models_dir, on_progress=self._progress.emit
            )
            self.pending = None
        if download is None:
            return
        self.pause_button.setEnabled(False)
        self.cancel_button.setEnabled(False)
        # A running download stops on its own thread; a resting one deletes its files in the caller.
        self._run(download.cancel, lambda _result: None)

    def _show_progress(self, progress: DownloadProgress) -> None:
        self.download_bar.setValue(round(progress.fraction * 100))
        if progress.state == "cancelled":
            self.download_bar.setValue(0)
            self.download_status.setText(sentence_text(progress.message) or tr("Download cancelled."))
        else:
            rate = tr(" at {rate} MB/s").format(rate=f"{progress.rate_bps / 1e6:.1f}") if progress.rate_bps else ""
            states = {
                "running": tr("running"),
                "paused": tr("paused"),
                "verifying": tr("checking SHA-256"),
                "done": tr("done, verified"),
                "failed": tr("failed"),
            }
            state = states.get(progress.state, progress.state)
            text = tr("{done} of {total}{rate} — {state}").format(
                done=human_size(progress.done), total=human_size(progress.total), rate=rate, state=state
            )
            if progress.message:
                text += tr(". {message}").format(message=sentence_text(progress.message))
            self.download_status.setText(text)
        if progress.state == "paused":
            self.pause_button.setText(tr("Resume"))
        if progress.state in ("done", "failed", "cancelled"):
            self.pause_button.setEnabled(progress.state == "failed")  # a failed one may be resumed
            self.pause_button.setText(tr("Resume") if progress.state == "failed" else tr("Pause"))
            self.cancel_button.setEnabled(progress.state == "failed")
            self._hub_selection()
            finished = self.download if progress.state == "done" else None
            self.download_finished.emit(self.models_dir / finished.remote.name if finished is not None else None)

    def shutdown(self) -> None:
        if self.download is not None and self.download.state == "running":
            self.download.pause()
            self.download.wait(5)
        self._hub.shutdown()
        self._planner.shutdown()
