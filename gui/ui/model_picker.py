"""The model library as a tree: one entry per model, its quants (and split files) beneath it.

The library scans its folders on its own thread, noticing files added or removed; this widget only
shows what it reports. A file name too long for its column loses the end of its model part, never its
quant ("Qwen3.5-27B-Inst…-Q4_K_M.gguf"), and the column never gets too narrow for that. The quant
column shows the header's quant name checked against the tensors, marked when they contradict it; a
file that cannot be used is listed with its size on disk and the reason. Clicking a model's name
selects its first file. With no GGUF file in any folder, the tree gives way to an explanation of how
to get a model (gui/ui/library_empty.py).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QIcon, QMouseEvent, QPainter, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from gui.core.theme import Palette
from gui.services.library import Library, LibraryChange, ModelGroup, split_quant_suffix
from gui.services.models import ModelEntry
from gui.ui.i18n import Tr, sentence_text
from gui.ui.library_empty import EmptyLibrary
from gui.ui.plain import plain_tip
from gui.ui.theme import current_palette, follow_theme

tr = Tr("model_picker")
MARK = "⚠"  # beside that name, and beside the size of a file that can be planned but not loaded


def human_size(n_bytes: int) -> str:
    """Like "15.87 GiB" or "293 MiB"; under a MiB in KiB or bytes, since "0 MiB" would read as empty."""
    if n_bytes < 1 << 20:
        return tr("{n} bytes").format(n=f"{n_bytes:,}") if n_bytes < 1 << 10 else f"{n_bytes / (1 << 10):.0f} KiB"
    gib = n_bytes / (1 << 30)
    return f"{gib:.2f} GiB" if gib >= 1 else f"{n_bytes / (1 << 20):.0f} MiB"


def human_params(n: int | None) -> str:
    if not n:
        return "?"
    return f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.0f}M"


def describe_group(group: ModelGroup) -> str:
    parts = [
        group.architecture or "?",
        tr("{n} parameters").format(n=human_params(group.n_params)),
        tr("%n layer(s)", n=group.n_layer) if group.n_layer else "",
        tr("trained context {n}").format(n=f"{group.context_length:,}") if group.context_length else "",
        tr("chat template") if group.has_chat_template else tr("no chat template"),
    ]
    return " · ".join(p for p in parts if p)


def elide_file_name(name: str, metrics: QFontMetrics, width: int) -> str:
    """``name`` shortened to ``width`` pixels with its quant suffix whole: the model part loses its end
    first ("Qwen3.5-27B-Inst…-Q4_K_M.gguf"), then all of it ("…Q4_K_M.gguf": the picker keeps its name
    column at least that wide). Qt's own middle elision would cut into the quant."""
    if metrics.horizontalAdvance(name) <= width:
        return name
    head, tail = split_quant_suffix(name)
    cut = metrics.elidedText(head, Qt.TextElideMode.ElideRight, width - metrics.horizontalAdvance(tail))
    if cut.rstrip("…"):  # at least one character of the model part still fits
        return cut + tail
    return "…" + tail.lstrip("-._ ")


class FileNameDelegate(QStyledItemDelegate):
    """Draws the file name cells with :func:`elide_file_name`; every other cell as usual."""

    def fitted_text(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> str:
        """The text the cell at ``index`` shows in ``option.rect``."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        return self._fit(opt, index)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = self._fit(opt, index)
        _style(opt).drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)

    @staticmethod
    def _fit(opt: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> str:
        if not isinstance(index.data(Qt.ItemDataRole.UserRole), ModelEntry):
            return opt.text  # a model's name: the view's own elision
        style = _style(opt)
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        # The style keeps a margin on either side of the text it draws inside that rectangle.
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, opt.widget) + 1
        return elide_file_name(opt.text, opt.fontMetrics, text_rect.width() - 2 * margin)


def _style(opt: QStyleOptionViewItem) -> QStyle:
    return opt.widget.style() if opt.widget is not None else QApplication.style()


class ModelPicker(QTreeWidget):
    selected = Signal(object)  # ModelEntry or None
    scanned = Signal(list)  # list[ModelEntry] (every file, errors too), after each scan that found a change
    add_folder_requested = Signal()  # from the empty library's button
    hub_requested = Signal()  # likewise: find a model on Hugging Face
    message = Signal(str)  # an outcome for the window's status line (the demo model's fetch)
    _changed = Signal(object)  # LibraryChange, from the library's thread

    COLUMNS = (tr.mark("Model / file"), tr.mark("Quant"), tr.mark("Size"), "BPW")

    def __init__(self, library: Library, folder: Path, parent: QWidget | None = None) -> None:
        """Shows what ``library`` finds; ``folder`` is the default models folder, where the empty library
        puts the demo model."""
        super().__init__(parent)
        self.folder = folder
        self.entries: list[ModelEntry] = []
        self.groups: list[ModelGroup] = []
        self._want: Path | None = None
        self._loaded: Path | None = None
        self._name_floor = 0  # pixels the name column needs to keep every quant in view
        self.library = library
        library.set_listener(self._changed.emit)
        self.setHeaderLabels([tr(c) for c in self.COLUMNS])
        self.setAccessibleName(tr("Model files"))
        self.names = FileNameDelegate(self)
        self.setItemDelegateForColumn(0, self.names)
        header = self.header()
        header.setStretchLastSection(False)  # the file names get the room, not the bits per weight
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(self.COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.empty = EmptyLibrary(folder, self)
        self.empty.hide()
        self.itemSelectionChanged.connect(self._selection_changed)
        self.itemActivated.connect(self._select_first_file)  # Enter on a model's name
        self._changed.connect(self._show)
        self.empty.add_folder_requested.connect(self.add_folder_requested)
        self.empty.hub_requested.connect(self.hub_requested)
        self.empty.message.connect(self.message)
        self.empty.demo_ready.connect(lambda path: self.rescan(select=path))
        follow_theme(self, self._recolour, now=False)

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
        loadable: QTreeWidgetItem | None = None  # unless asked for another: a newcomer's first Load works
        fallback: QTreeWidgetItem | None = None  # the first file, when none can be loaded
        bold = QFont(self.font())
        bold.setBold(True)
        for group in change.groups:
            top = QTreeWidgetItem([group.name, "", "", ""])
            top.setFont(0, bold)
            top.setToolTip(0, plain_tip(describe_group(group) + "\n\n" + tr("Click to select its first file.")))
            top.setFlags(top.flags() & ~Qt.ItemFlag.ItemIsSelectable)  # a click selects a file instead
            top.setFirstColumnSpanned(False)
            self.addTopLevelItem(top)
            for entry in group.variants:
                item = self._file_item(group, entry)
                top.addChild(item)
                fallback = fallback or item
                if loadable is None and not entry.not_loadable:
                    loadable = item
                if entry.path == want:
                    chosen = item
            top.setExpanded(True)
        for entry in change.errors:
            self.addTopLevelItem(self._error_item(entry))
        self.blockSignals(False)
        self._show_empty(not self.entries)
        self._show_loaded()
        self._name_floor = self._narrowest([e.path.name for e in self.entries])
        self._fit_name_column()
        chosen = chosen or loadable or fallback
        if chosen is not None:
            self.setCurrentItem(chosen)
        self._selection_changed()
        self.scanned.emit(self.entries)

    def _file_item(self, group: ModelGroup, entry: ModelEntry) -> QTreeWidgetItem:
        check = entry.quant_check
        doubt = sentence_text(check.problem) if check is not None else ""
        quant = check.label if check is not None else entry.quant or ""
        item = QTreeWidgetItem(
            [
                entry.path.name,
                f"{quant} {MARK}" if doubt else quant,
                human_size(entry.size_bytes),
                f"{entry.bits_per_weight:.2f}" if entry.bits_per_weight else "",
            ]
        )
        item.setData(0, Qt.ItemDataRole.UserRole, entry)
        words = f"{describe_group(group)}\n{entry.path}"
        if entry.not_loadable:
            reason = sentence_text(entry.not_loadable)
            words += f"\n\n{reason[:1].upper()}{reason[1:]}."
            item.setText(2, f"{human_size(entry.size_bytes)} {MARK}")
        if doubt:
            words += f"\n\n{doubt}"
        self._colour_item(item, current_palette(), error=False)
        tip = plain_tip(words)
        for col in range(len(self.COLUMNS)):
            item.setToolTip(col, tip)
        return item

    def _error_item(self, entry: ModelEntry) -> QTreeWidgetItem:
        # No header: corrupt, cut short or not GGUF. A header: a model llama.cpp cannot run (see the tip).
        why = tr("unreadable") if entry.header is None else tr("unsupported")
        item = QTreeWidgetItem([entry.path.name, why, human_size(entry.size_bytes), ""])
        item.setData(0, Qt.ItemDataRole.UserRole, entry)
        error = sentence_text(entry.error or "")
        tip = plain_tip(tr("Cannot use this file: {error}").format(error=error) + f"\n{entry.path}")
        for col in range(len(self.COLUMNS)):
            item.setToolTip(col, tip)
        self._colour_item(item, current_palette(), error=True)
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
        return item

    def _colour_item(self, item: QTreeWidgetItem, palette: Palette, *, error: bool) -> None:
        """A file that cannot be used in the error colour, one that cannot be loaded muted, and a quant name
        the tensors contradict in the warning colour."""
        entry = item.data(0, Qt.ItemDataRole.UserRole)
        if not isinstance(entry, ModelEntry):
            return
        if error:
            for col in (0, 1):
                item.setForeground(col, QColor(palette.error))
            return
        for col in range(len(self.COLUMNS)):
            item.setForeground(col, QColor(palette.muted) if entry.not_loadable else QBrush())
        if entry.quant_check is not None and entry.quant_check.problem:
            item.setForeground(1, QColor(palette.warn))

    def _recolour(self, palette: Palette) -> None:
        for i in range(self.topLevelItemCount()):
            top = self.topLevelItem(i)
            if top is None:
                continue
            self._colour_item(top, palette, error=True)  # a top-level item with a file is a file it cannot use
            for j in range(top.childCount()):
                if (child := top.child(j)) is not None:
                    self._colour_item(child, palette, error=False)

    def _show_empty(self, empty: bool) -> None:
        """No GGUF file in any folder: how to get one, in place of an empty tree."""
        self.empty.setVisible(empty)
        if empty:
            self.empty.setGeometry(self.contentsRect())
            self.empty.raise_()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.empty.setGeometry(self.contentsRect())  # the explanation covers the whole tree
        self._fit_name_column()

    def _narrowest(self, names: list[str]) -> int:
        """The width the name column needs for each name's shortest form ("…Q4_K_M.gguf"), in bold (the
        loaded file's font), with the loaded mark, at a file's depth in the tree."""
        if not names:
            return 0
        bold = QFont(self.font())
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        shortest = [elide_file_name(name, metrics, 0) for name in names]
        margin = self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1
        mark = (
            self.iconSize().width()
            if self.iconSize().isValid()
            else self.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize, None, self)
        )
        return max(metrics.horizontalAdvance(n) for n in shortest) + 2 * self.indentation() + mark + 4 * margin

    def _fit_name_column(self) -> None:
        """The name column stretches, but never below what keeps every quant in view: when the tree is
        narrower than that, the other columns scroll instead."""
        header = self.header()
        others = sum(header.sectionSize(c) for c in range(1, len(self.COLUMNS)))
        if self.viewport().width() - others >= self._name_floor:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        else:
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(0, self._name_floor)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        # Handled before the view's own press, which would first clear the selection (a model's name
        # cannot be selected) and report "nothing selected" for an instant. The branch arrow, left of
        # the name, still expands and collapses.
        item = self.itemAt(event.position().toPoint())
        if (
            item is not None
            and event.button() == Qt.MouseButton.LeftButton
            and event.position().x() >= self.visualRect(self.indexFromItem(item, 0)).left()
            and self._select_first_file(item)
        ):
            self.setFocus(Qt.FocusReason.MouseFocusReason)
            event.accept()
            return
        super().mousePressEvent(event)

    def _select_first_file(self, item: QTreeWidgetItem, _column: int = 0) -> bool:
        """A model's name row selects its first file that can be loaded (or its first file); False for
        any other row."""
        if item.parent() is not None or item.childCount() == 0:
            return False
        files = [c for i in range(item.childCount()) if (c := item.child(i)) is not None]
        loadable = [c for c in files if not c.data(0, Qt.ItemDataRole.UserRole).not_loadable]
        item.setExpanded(True)
        self.setCurrentItem((loadable or files)[0])
        return True

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
            item.setStatusTip(0, tr("loaded") if loaded else "")

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

    def shown_name(self, item: QTreeWidgetItem) -> str:
        """The file name as drawn now, at the column's width."""
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        index = self.indexFromItem(item, 0)
        option.rect = self.visualRect(index)
        return self.names.fitted_text(option, index)

    def shutdown(self) -> None:
        self.empty.shutdown()
        self.library.stop()
