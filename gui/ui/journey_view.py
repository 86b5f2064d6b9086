"""The Journey tab: the user's own staged table (the field notes' 4 → 8 → 35 → 64 tok/s), built from every
load, reply and benchmark the journey recorded: stage, model, what changed from the stage before, typical
and best decode speed, share of the ceiling, runs, and a note the user types.

Every database call and every export runs on the view's one background thread, in order (a note saved
then a refresh sees the note); results come back as calls on the UI thread. Text in the table is plain
(QTableWidgetItem does not render markup), tooltips are escaped: a model name is a stranger's text.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.core.journey import NOTE_COLUMN, STAGE_COLUMNS, Stage, stage_cells, stages, to_csv, to_markdown
from gui.services.journey import JourneyStore
from gui.ui.background import Background
from gui.ui.i18n import Tr, core_text, error_text
from gui.ui.journey_recorder import JourneyRecorder
from gui.ui.plain import plain_label, plain_tip

__all__ = ["JourneyView", "write_text_atomic"]

tr = Tr("journey_view")

EMPTY = tr.mark(
    "Nothing measured yet. Load a model and send a message, or run a benchmark: each configuration you run "
    "(model file, settings, engine build, card) becomes a stage here, with its speed."
)
_HEADER_TIPS = {
    "what changed": tr.mark("From the stage before (the first stage: its settings in full)."),
    "tok/s": tr.mark("Typical decode speed: the median of llama.cpp's own rate over every run of this configuration."),
    "best tok/s": tr.mark("The fastest run of this configuration."),
    "% of ceiling": tr.mark("The typical speed as a share of the planner's memory-bandwidth ceiling for it."),
    "prompt tok/s": tr.mark("The fastest prompt processing measured for this configuration."),
    "runs": tr.mark("Replies (of at least a few tokens) and tg benchmark rows measured with this configuration."),
    "note": tr.mark("Your note on this configuration: double-click to edit; it is saved at once."),
}
_COMMIT_RETRY_MS = 500  # a refresh that arrives while a note is being typed waits for the edit to end


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: a failed export leaves no half file behind."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


class JourneyView(QWidget):
    refreshed = Signal()  # the table shows the store as it was at the last refresh (tests wait on it)
    note_saved = Signal(str)  # configuration key, once the note is in the store
    exported = Signal(str)  # the path written
    failed = Signal(str)  # a database or export error, in words (the window shows it in its status bar)

    def __init__(self, store: JourneyStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.stages: list[Stage] = []
        self._db = Background("journey", parent=self)  # one thread: writes and reads in order
        # The window's hooks: record_load, record_reply, record_bench_row (gui/ui/journey_recorder.py).
        self.recorder = JourneyRecorder(store, self, background=self._db)
        self._filling = False
        self._dirty = True  # recorded since the last refresh: refresh when shown
        self._waiting: list[Stage] | None = None  # a refresh that came while a note was being edited

        self.notice = plain_label(core_text("journey", store.warning or ""), self, wrap=True)  # names a file path
        self.notice.setVisible(not store.persistent)
        self.summary = plain_label("", self, wrap=True)
        self.status = plain_label("", self, wrap=True)
        self.status.setVisible(False)
        self.table = QTableWidget(0, len(STAGE_COLUMNS), self)
        self.table.setAccessibleName(tr("Journey stages"))
        self.table.setHorizontalHeaderLabels([_column(name) for name in STAGE_COLUMNS])
        for column, name in enumerate(STAGE_COLUMNS):
            header_item = self.table.horizontalHeaderItem(column)
            if header_item is not None and name in _HEADER_TIPS:
                header_item.setToolTip(tr(_HEADER_TIPS[name]))
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.SelectedClicked
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        for column, name in enumerate(STAGE_COLUMNS):
            mode = QHeaderView.ResizeMode.Interactive if name in ("what changed", "note") else (
                QHeaderView.ResizeMode.ResizeToContents)  # fmt: skip
            header.setSectionResizeMode(column, mode)
        header.resizeSection(STAGE_COLUMNS.index("what changed"), 320)
        header.setStretchLastSection(True)

        self.refresh_button = QPushButton(tr("Refres&h"), self)
        self.markdown_button = QPushButton(tr("E&xport Markdown…"), self)
        self.csv_button = QPushButton(tr("Ex&port CSV…"), self)
        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh_button)
        buttons.addStretch(1)
        buttons.addWidget(self.markdown_button)
        buttons.addWidget(self.csv_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.notice)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.setInterval(_COMMIT_RETRY_MS)
        self._retry.timeout.connect(self._show_waiting)
        self._soon = QTimer(self)  # a burst of records (a benchmark sweep) refreshes once
        self._soon.setSingleShot(True)
        self._soon.setInterval(500)
        self._soon.timeout.connect(self.refresh)
        self.refresh_button.clicked.connect(self.refresh)
        self.markdown_button.clicked.connect(self._export_markdown_clicked)
        self.csv_button.clicked.connect(self._export_csv_clicked)
        self.table.itemChanged.connect(self._item_changed)
        self.recorder.recorded.connect(self._recorded)
        self.recorder.failed.connect(self._failed)
        if store.warning:
            QTimer.singleShot(0, lambda: self.failed.emit(core_text("journey", store.warning or "")))

    # ---- refreshing ---------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the store and rebuild the table, off the UI thread; the newest request wins."""
        self._dirty = False
        store = self.store
        self._db.latest("refresh", lambda: stages(store.snapshot()), self._show, self._failed_read)

    def _recorded(self) -> None:
        self._dirty = True
        if self.isVisible():
            self._soon.start()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._dirty:
            self.refresh()

    def _show(self, staged: list[Stage]) -> None:
        if self.table.state() == QAbstractItemView.State.EditingState:
            self._waiting = staged  # rebuilding now would throw away what the user is typing
            self._retry.start()
            return
        self._waiting = None
        self.stages = staged
        self._filling = True
        try:
            self.table.setRowCount(len(staged))
            changed_column = STAGE_COLUMNS.index("what changed")
            for row, stage in enumerate(staged):
                changed = core_text("journey", stage.changed)  # composed by gui/core/journey.py in English
                cells = tuple(
                    changed if i == changed_column else core_text("journey", cell)
                    for i, cell in enumerate(stage_cells(stage))
                )
                for column, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    item.setData(Qt.ItemDataRole.UserRole, stage.key)
                    flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
                    if column == NOTE_COLUMN:
                        flags |= Qt.ItemFlag.ItemIsEditable
                    item.setFlags(flags)
                    if column != NOTE_COLUMN and STAGE_COLUMNS[column] != "what changed" and text[:1].isdigit():
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(row, column, item)
                configuration = stage.configuration
                tips = {
                    "model": f"{configuration.model_path}\n{configuration.card}, "
                    + core_text("journey", configuration.build.describe()),
                    "what changed": changed,
                    "note": stage.note,
                }
                for name, tip in tips.items():
                    cell = self.table.item(row, STAGE_COLUMNS.index(name))
                    if cell is not None:
                        cell.setToolTip(plain_tip(tip))
            self.table.resizeRowsToContents()
        finally:
            self._filling = False
        self.summary.setText(_summary(staged))
        self.refreshed.emit()

    def _show_waiting(self) -> None:
        if self._waiting is not None:
            self._show(self._waiting)

    # ---- notes --------------------------------------------------------------------------------

    def set_note(self, key: str, note: str) -> None:
        """Store ``note`` for the configuration ``key`` (empty removes it)."""
        store = self.store
        self._db.run(
            lambda: store.set_note(key, note, now=time.time()),
            lambda _: self.note_saved.emit(key),
            lambda exc: self._failed(
                tr("Journey: the note was not saved: {error}").format(error=error_text(exc, "journey"))
            ),
        )

    def _item_changed(self, item: QTableWidgetItem) -> None:
        if self._filling or item.column() != NOTE_COLUMN:
            return
        key = item.data(Qt.ItemDataRole.UserRole)
        if isinstance(key, str):
            text = item.text().strip()
            item.setToolTip(plain_tip(text))
            self.set_note(key, text)

    # ---- export -------------------------------------------------------------------------------

    def export_markdown(self, path: str | Path) -> None:
        self._export(Path(path), to_markdown)

    def export_csv(self, path: str | Path) -> None:
        self._export(Path(path), to_csv)

    def _export(self, path: Path, render: Callable[[Sequence[Stage]], str]) -> None:
        # From the store, not the table: a note typed a moment ago is in the store already (same thread).
        store = self.store

        def job() -> int:
            staged = stages(store.snapshot())
            write_text_atomic(path, render(staged))
            return len(staged)

        def done(count: int) -> None:
            stages_done = tr("{n} stage").format(n=count) if count == 1 else tr("{n} stages").format(n=count)
            self._say(tr("Exported {stages} to {path}.").format(stages=stages_done, path=path))
            self.exported.emit(str(path))

        def failed(exc: Exception) -> None:
            self._failed(tr("Cannot export the journey to {path}: {reason}").format(path=path, reason=_reason(exc)))

        self._db.run(job, done, failed)

    def _export_markdown_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self,
            tr("Export the journey as Markdown"),
            "tightfit-journey.md",
            tr("Markdown files (*.md);;All files (*)"),
        )
        if path:
            self.export_markdown(path)

    def _export_csv_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, tr("Export the journey as CSV"), "tightfit-journey.csv", tr("CSV files (*.csv);;All files (*)")
        )
        if path:
            self.export_csv(path)

    # ---- messages and shutdown ------------------------------------------------------------------

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))

    def _failed(self, message: str) -> None:
        self._say(message)
        self.failed.emit(message)

    def _failed_read(self, exc: Exception) -> None:
        self._failed(tr("Journey: cannot read the records: {error}").format(error=error_text(exc, "journey")))

    def shutdown(self) -> None:
        """Finish the writes already queued, then close the store."""
        self._retry.stop()
        self._soon.stop()
        self._db.shutdown(wait=True)
        self.store.close()


def _summary(staged: Sequence[Stage]) -> str:
    if not staged:
        return tr(EMPTY)
    runs = sum(s.configuration.runs for s in staged)
    measured = [s for s in staged if s.configuration.best_tok_s is not None]
    configurations = len(staged)
    text = tr("{configurations}, {runs}.").format(
        configurations=tr("{n} configuration").format(n=configurations)
        if configurations == 1
        else tr("{n} configurations").format(n=configurations),
        runs=tr("{n} measured run").format(n=runs) if runs == 1 else tr("{n} measured runs").format(n=runs),
    )
    if measured:
        fastest = max(measured, key=lambda s: s.configuration.typical_tok_s or 0.0)
        text += tr(" Fastest: stage {number}, {speed} tok/s typical.").format(
            number=fastest.number, speed=f"{fastest.configuration.typical_tok_s or 0.0:.1f}"
        )
    return text


def _column(name: str) -> str:
    """A column's header: its name from gui/core/journey.py in the window's language, "Stage" capitalised."""
    shown = core_text("journey", name)
    return shown if shown.startswith("tok") else shown.capitalize()


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return error_text(exc, "journey")
