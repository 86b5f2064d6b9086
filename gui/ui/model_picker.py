"""The list of GGUF files in the models folder, scanned off the UI thread."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from gui.services.models import ModelEntry, scan_folder


def human_size(n_bytes: int) -> str:
    gib = n_bytes / (1 << 30)
    return f"{gib:.2f} GiB" if gib >= 1 else f"{n_bytes / (1 << 20):.0f} MiB"


class ModelPicker(QTreeWidget):
    selected = Signal(object)  # ModelEntry or None
    scanned = Signal(list)  # list[ModelEntry], after every scan
    _scan_done = Signal(object)  # list[ModelEntry] or an exception, from the pool thread

    COLUMNS = ("Model", "Quant", "Size", "Layers")

    def __init__(self, folder: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self.entries: list[ModelEntry] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="model-scan")
        self._pending: Future[list[ModelEntry]] | None = None
        self._want: Path | None = None
        self.setHeaderLabels(self.COLUMNS)
        self.setRootIsDecorated(False)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # keep the quant suffix of long file names
        self.setAccessibleName("Model files")
        header = self.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(self.COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.itemSelectionChanged.connect(self._selection_changed)
        self._scan_done.connect(self._show)

    @property
    def scanning(self) -> bool:
        return self._pending is not None and not self._pending.done()

    def rescan(self, select: Path | None = None) -> None:
        current = self.current()
        self._want = select or (current.path if current else None)
        self._pending = self._pool.submit(scan_folder, self.folder)
        self._pending.add_done_callback(self._finished)

    def _finished(self, future: Future[list[ModelEntry]]) -> None:  # pool thread
        try:
            self._scan_done.emit(future.result())
        except Exception as exc:  # an unreadable folder must not kill the picker
            self._scan_done.emit(exc)

    def _show(self, result: object) -> None:
        entries = result if isinstance(result, list) else []
        self.entries = entries
        self.clear()
        chosen = None
        for entry in entries:
            item = QTreeWidgetItem(
                [
                    entry.path.name,
                    entry.quant or "",
                    human_size(entry.size_bytes),
                    str(entry.n_layer) if entry.n_layer else "",
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, entry)
            tip = (
                f"{entry.name} ({entry.architecture}, {entry.n_parts} file(s))\n{entry.path}"
                if entry.usable
                else f"Cannot use this file: {entry.error}"
            )
            for col in range(len(self.COLUMNS)):
                item.setToolTip(col, tip)
            if not entry.usable:
                item.setText(1, "error")
                item.setForeground(0, Qt.GlobalColor.darkRed)
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.addTopLevelItem(item)
            if entry.usable and (chosen is None or entry.path == self._want):
                chosen = item
        if chosen is not None:
            self.setCurrentItem(chosen)
        self.scanned.emit(entries)

    def current(self) -> ModelEntry | None:
        item = self.currentItem()
        entry = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        return entry if isinstance(entry, ModelEntry) and entry.usable else None

    def _selection_changed(self) -> None:
        self.selected.emit(self.current())

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
