"""The model library as a tree: one entry per model, its quants (and split files) beneath it.

The library scans its folders on its own thread, noticing files added or removed; this widget only
shows what it reports.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QIcon
from PySide6.QtWidgets import QHeaderView, QStyle, QTreeWidget, QTreeWidgetItem, QWidget

from gui.services.library import Library, LibraryChange, ModelGroup
from gui.services.models import ModelEntry
from gui.ui.plain import plain_tip


def human_size(n_bytes: int) -> str:
    gib = n_bytes / (1 << 30)
    return f"{gib:.2f} GiB" if gib >= 1 else f"{n_bytes / (1 << 20):.0f} MiB"


def human_params(n: int | None) -> str:
    if not n:
        return "?"
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def describe_group(group: ModelGroup) -> str:
    parts = [
        group.architecture or "?",
        f"{human_params(group.n_params)} parameters",
        f"{group.n_layer} layers" if group.n_layer else "",
        f"trained context {group.context_length:,}" if group.context_length else "",
        "chat template" if group.has_chat_template else "no chat template",
    ]
    return " · ".join(p for p in parts if p)


class ModelPicker(QTreeWidget):
    selected = Signal(object)  # ModelEntry or None
    scanned = Signal(list)  # list[ModelEntry] (every file, errors too), after each scan that found a change
    _changed = Signal(object)  # LibraryChange, from the library's thread

    COLUMNS = ("Model / file", "Quant", "Size", "BPW")

    def __init__(self, library: Library, folder: Path, parent: QWidget | None = None) -> None:
        """Shows what ``library`` finds; ``folder`` is the default models folder, named when it is empty."""
        super().__init__(parent)
        self.folder = folder
        self.entries: list[ModelEntry] = []
        self.groups: list[ModelGroup] = []
        self._want: Path | None = None
        self._loaded: Path | None = None
        self.library = library
        library.set_listener(self._changed.emit)
        self.setHeaderLabels(self.COLUMNS)
        self.setAccessibleName("Model files")
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # keep the quant suffix of long file names
        header = self.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(self.COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.itemSelectionChanged.connect(self._selection_changed)
        self._changed.connect(self._show)

    @property
    def folders(self) -> list[Path]:
        return self.library.folders

    def set_folders(self, folders: list[Path]) -> None:
        self.library.set_folders(folders)

    def start(self, select: Path | None = None) -> None:
        self._want = select
        self.library.start()

    def rescan(self, select: Path | None = None) -> None:
        current = self.current()
        self._want = select or (current.path if current else None)
        if self.library.scan_count == 0 and not self.library.folders:
            return
        self.library.start()
        self.library.rescan()

    def _show(self, change: LibraryChange) -> None:
        current = self.current()
        want = self._want or (current.path if current else None)
        self._want = None
        self.groups = change.groups
        self.entries = [v for g in change.groups for v in g.variants] + list(change.errors)
        self.blockSignals(True)
        self.clear()
        chosen: QTreeWidgetItem | None = None
        bold = QFont(self.font())
        bold.setBold(True)
        for group in change.groups:
            top = QTreeWidgetItem([group.name, "", "", ""])
            top.setFont(0, bold)
            top.setToolTip(0, plain_tip(describe_group(group)))
            top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            top.setFirstColumnSpanned(False)
            self.addTopLevelItem(top)
            for entry in group.variants:
                item = QTreeWidgetItem(
                    [
                        entry.path.name,
                        entry.quant or "",
                        human_size(entry.size_bytes),
                        f"{entry.bits_per_weight:.2f}" if entry.bits_per_weight else "",
                    ]
                )
                item.setData(0, Qt.ItemDataRole.UserRole, entry)
                words = f"{describe_group(group)}\n{entry.path}"
                if entry.not_loadable:
                    words += f"\n\n{entry.not_loadable.capitalize()}."
                    item.setText(2, f"{human_size(entry.size_bytes)} ⚠")
                    for col in range(len(self.COLUMNS)):
                        item.setForeground(col, Qt.GlobalColor.darkGray)
                tip = plain_tip(words)
                for col in range(len(self.COLUMNS)):
                    item.setToolTip(col, tip)
                top.addChild(item)
                if chosen is None or entry.path == want:
                    chosen = item
            top.setExpanded(True)
        for entry in change.errors:
            item = QTreeWidgetItem([entry.path.name, "error", human_size(entry.size_bytes), ""])
            item.setData(0, Qt.ItemDataRole.UserRole, entry)
            for col in range(len(self.COLUMNS)):
                item.setToolTip(col, plain_tip(f"Cannot use this file: {entry.error}"))
            item.setForeground(0, Qt.GlobalColor.darkRed)
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            self.addTopLevelItem(item)
        self.blockSignals(False)
        self._show_loaded()
        if chosen is not None:
            self.setCurrentItem(chosen)
        self._selection_changed()
        self.scanned.emit(self.entries)

    def mark_loaded(self, path: Path | None) -> None:
        """Show which file the engine has loaded (bold, with a mark), or none."""
        if path != self._loaded:
            self._loaded = path
            self._show_loaded()

    def _show_loaded(self) -> None:
        loaded_icon = self.style().standardIcon(QStyle.StandardPixmap.SP_DialogApplyButton)
        for item in self._file_items():
            entry = item.data(0, Qt.ItemDataRole.UserRole)
            loaded = isinstance(entry, ModelEntry) and self._loaded is not None and entry.path == self._loaded
            font = item.font(0)
            font.setBold(loaded)
            item.setFont(0, font)
            item.setIcon(0, loaded_icon if loaded else QIcon())
            item.setStatusTip(0, "loaded" if loaded else "")

    def _file_items(self) -> list[QTreeWidgetItem]:
        items = []
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            if top is not None:
                items += [c for j in range(top.childCount()) if (c := top.child(j)) is not None]
        return items

    def current(self) -> ModelEntry | None:
        item = self.currentItem()
        entry = item.data(0, Qt.ItemDataRole.UserRole) if item else None
        return entry if isinstance(entry, ModelEntry) and entry.usable else None

    def current_group(self) -> ModelGroup | None:
        entry = self.current()
        if entry is None:
            return None
        return next((g for g in self.groups if any(v.path == entry.path for v in g.variants)), None)

    def select_path(self, path: Path) -> bool:
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            for j in range(top.childCount() if top is not None else 0):
                child = top.child(j) if top is not None else None
                entry = child.data(0, Qt.ItemDataRole.UserRole) if child is not None else None
                if child is not None and isinstance(entry, ModelEntry) and entry.path == path:
                    self.setCurrentItem(child)
                    return True
        return False

    def _selection_changed(self) -> None:
        self.selected.emit(self.current())

    def shutdown(self) -> None:
        self.library.stop()
