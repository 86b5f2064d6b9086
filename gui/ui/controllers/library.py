"""The library: the folders scanned (one more added and remembered), a download that finished rescanned and
selected, and the Quants tab: the selected model's other quants and the hub's, each planned on the window's
planning context, a row chosen selected and fitted to the card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QLabel, QPushButton

from gui.services.models import ModelEntry
from gui.ui.controllers.load import LoadController
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.i18n import Tr
from gui.ui.model_picker import ModelPicker, describe_group
from gui.ui.models_tab import ModelsTab
from gui.ui.plain import plain_tip

tr = Tr("library")


class LibraryController(Feature):
    def __init__(
        self,
        shared: Shared,
        *,
        load: LoadController,
        picker: ModelPicker,
        folder_label: QLabel,
        rescan_button: QPushButton,
        add_folder_button: QPushButton,
        models_tab: ModelsTab,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.load = load
        self.picker = picker
        self.folder_label = folder_label
        self.models_tab = models_tab
        rescan_button.clicked.connect(lambda: picker.rescan())
        add_folder_button.clicked.connect(self._add_folder_clicked)
        picker.add_folder_requested.connect(self._add_folder_clicked)
        picker.hub_requested.connect(lambda: self.tabs.setCurrentWidget(models_tab))
        picker.hub_requested.connect(models_tab.focus_repository)
        picker.selected.connect(self._model_selected)
        models_tab.local_chosen.connect(self._quant_chosen)
        models_tab.download_finished.connect(self._downloaded)
        self.tabs.currentChanged.connect(lambda _: self.refresh_quants())  # at once: the tab is being shown
        load.after_replan.timeout.connect(self.refresh_quants)
        self._show_folders()

    def _show_folders(self) -> None:
        folders = self.picker.folders
        self.folder_label.setText(tr("Folders: {folders}").format(folders=", ".join(str(f) for f in folders)))
        self.folder_label.setToolTip(plain_tip("\n".join(str(f) for f in folders)))

    def _add_folder_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.dialog_parent, tr("Add a folder of GGUF models"))
        if folder:
            self.add_model_folder(Path(folder))

    def add_model_folder(self, folder: Path) -> None:
        """Scan another folder from now on, and remember it."""
        self.store.add_model_folder(folder)
        folders = self.picker.folders
        if folder not in folders:
            self.picker.set_folders([*folders, folder])
        self._show_folders()

    def _downloaded(self, path: Path | None) -> None:
        if path is not None:
            self.picker.rescan(select=path)

    def _quant_chosen(self, row: Any) -> None:
        """A row of the quant table: select that file and size it to the card."""
        if row.path is not None and self.picker.select_path(Path(row.path)):
            self.load.auto_fit()

    def refresh_quants(self) -> None:
        if self.tabs.currentWidget() is not self.models_tab:
            return  # planned when the tab is shown
        self.models_tab.set_context(self.planning.context())

    def _model_selected(self, _entry: ModelEntry | None) -> None:
        group = self.picker.current_group()
        if group is not None:
            self.models_tab.set_local_variants(f"{group.name}: {describe_group(group)}", group.variants)
