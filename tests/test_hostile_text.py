"""Text from strangers is shown as written, never as rich text that loads what it names.

Every route by which a model file, a hub server, a model's reply, a chat template or a log line reaches
the window gets two payloads: an image of /dev/zero (read forever: the window dies of memory) and an
image of a named pipe (the read blocks: the window freezes). The window must stay up, show the text
literally, and render every label and tooltip that carries it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from fake_hub import FakeHub, write_small_model
from gguf_factory import write_gguf
from PySide6.QtCore import QPoint, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QListWidgetItem, QMessageBox, QToolTip, QWidget
from window_kit import TIMEOUT, load, open_window

from gui.services.history import HistoryStore
from gui.services.hub import HubClient
from gui.ui.main_window import MainWindow


@pytest.fixture(params=["zero", "fifo"])
def payload(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "zero":
        return '<img src="file:///dev/zero">'
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    return f'<b>bold?</b><img src="file://{fifo}">'


def render_everything(win: MainWindow, tips: list[str]) -> None:
    """Paint the window and show each tooltip: what a user would see, and what would load an image."""
    win.grab()
    for tip in tips:
        QToolTip.showText(QPoint(10, 10), tip, win)
        QApplication.processEvents()
    QToolTip.hideText()


def picker_tips(win: MainWindow) -> list[str]:
    tips = []
    for i in range(win.picker.topLevelItemCount()):
        top = win.picker.topLevelItem(i)
        tips.append(top.toolTip(0))
        tips += [top.child(j).toolTip(c) for j in range(top.childCount()) for c in range(4)]
    return tips


def data_labels_are_plain(win: MainWindow, payload: str) -> None:
    showing = [label for label in win.findChildren(QLabel) if payload in label.text()]
    assert showing, "the text is shown somewhere"
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in showing)


def test_a_model_name_from_the_file(qtbot, tmp_path: Path, payload: str) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    model = write_small_model(folder / "Evil-Q4_K.gguf", name=payload)
    win = open_window(qtbot, folder, model, engine=FakeEngine())
    win.tabs.setCurrentWidget(win.models_tab)  # the quant table names the model
    qtbot.waitUntil(lambda: win.models_tab.local_table.rowCount() == 1, timeout=TIMEOUT)
    assert win.models_tab.local_title.text().startswith(payload)
    assert win.picker.topLevelItem(0).text(0) == payload
    table = win.models_tab.local_table
    render_everything(win, picker_tips(win) + [table.item(0, c).toolTip() for c in range(table.columnCount())])
    data_labels_are_plain(win, payload)
    win.close()


def test_a_metadata_key_in_a_reader_error(qtbot, tmp_path: Path, payload: str) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    twin = payload[:-1] + "?"  # as long as the payload: turned into a second copy of it below
    path = write_gguf(folder / "twice.gguf", metadata={payload: 1, twin: 2})
    data = path.read_bytes()
    path.write_bytes(data.replace(twin.encode(), payload.encode()))
    win = open_window(qtbot, folder, engine=FakeEngine())
    (bad,) = [e for e in win.picker.entries if e.error]
    assert "duplicate metadata key" in (bad.error or "") and payload in (bad.error or "")
    tips = [win.picker.topLevelItem(0).toolTip(c) for c in range(4)]
    assert any("&lt;img" in tip for tip in tips)
    render_everything(win, tips)
    win.close()


def test_a_chat_template_error_and_a_reply(
    qtbot, tmp_path: Path, payload: str, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = FakeEngine(reply=f"Here: {payload} and ![x](file:///dev/zero) [a link](https://example.com/docs) done.")
    engine.notice = f"The chat template failed: {payload}. This reply was formatted as ChatML instead."
    win = open_window(qtbot, demo_model.parent, demo_model, engine=engine)
    load(qtbot, win)
    win.chat.input.setPlainText("hello")
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
        win.chat.send()
    assert payload in win.chat.notice.text()
    assert payload in win.chat.transcript.toPlainText()
    render_everything(win, [])
    data_labels_are_plain(win, payload)

    # A link opens in the browser; the transcript stays as it was.
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url) or True))
    before = win.chat.transcript.toPlainText()
    found = win.chat.transcript.document().find("a link")
    inside = QTextCursor(win.chat.transcript.document())
    inside.setPosition(found.selectionStart() + 2)
    rect = win.chat.transcript.cursorRect(inside)
    QTest.mouseClick(win.chat.transcript.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: bool(opened), timeout=5000)
    assert opened[0].toString() == "https://example.com/docs"
    assert win.chat.transcript.toPlainText() == before
    win.close()


def test_a_history_search_snippet(qtbot, tmp_path: Path, payload: str, demo_model: Path) -> None:
    db = tmp_path / "h.sqlite3"
    engine = FakeEngine(reply=f"The answer is {payload} indeed.")
    win = open_window(qtbot, demo_model.parent, demo_model, engine=engine, history=HistoryStore(db))
    load(qtbot, win)
    win.chat.input.setPlainText("question")
    with qtbot.waitSignals([win.chat.reply_finished, win.history.saved], timeout=TIMEOUT):
        win.chat.send()
    win.history.search.setText("answer")
    # The search hit (not a listing that was already on its way) names the reply's text.
    qtbot.waitUntil(lambda: "answer" in (win.history.list.item(0) or QListWidgetItem()).text(), timeout=TIMEOUT)
    item = win.history.list.item(0)
    assert "img" in item.text() and "&lt;img" in item.toolTip()
    render_everything(win, [item.toolTip()])
    win.close()


def test_a_log_line_when_the_engine_dies(qtbot, tmp_path: Path, payload: str, demo_model: Path) -> None:
    engine = FakeEngine()
    win = open_window(qtbot, demo_model.parent, demo_model, engine=engine)
    load(qtbot, win)
    with qtbot.waitSignal(win.features.engine.engine_died, timeout=TIMEOUT):
        engine.kill(exitcode=-6, log=(f"llama_model_load: error loading model: {payload}", "GGML_ASSERT(x) failed"))
    assert payload in win.chat.notice.text() and payload in win.load_bar.status.text()
    render_everything(win, [])
    data_labels_are_plain(win, payload)
    win.close()


def test_a_hub_listing_that_quotes_a_file(qtbot, tmp_path: Path, payload: str) -> None:
    """A file on the hub whose header is refused: the listing quotes the reader's words, key and all."""
    folder = tmp_path / "models"
    folder.mkdir()
    twin = payload[:-1] + "?"
    hosted = write_gguf(tmp_path / "hosted.gguf", metadata={payload: 1, twin: 2})
    hosted.write_bytes(hosted.read_bytes().replace(twin.encode(), payload.encode()))
    with FakeHub() as hub:
        hub.add_file("someone/evil", "Evil-Q4_K.gguf", hosted)
        win = open_window(qtbot, folder, engine=FakeEngine(), hub=HubClient(endpoint=hub.endpoint, timeout=10))
        win.tabs.setCurrentWidget(win.models_tab)
        win.models_tab.repo.setText("someone/evil")
        with qtbot.waitSignal(win.models_tab.listed, timeout=TIMEOUT):
            win.models_tab.list_repo()
        assert payload in win.models_tab.hub_status.text()
        render_everything(win, [])
        data_labels_are_plain(win, payload)
        win.close()


# ---- dialogs and message boxes ---------------------------------------------------------------------------


class Boxes:
    """Every QMessageBox the window runs, answered without a person: each is painted first (what would load
    an image), then answered ``yes`` or ``no`` by its title."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answers: dict[str, bool]) -> None:
        self.seen: list[QMessageBox] = []
        self.answers = answers
        boxes = self

        def run(box: QMessageBox) -> int:
            boxes.check(box)
            yes = boxes.answers.get(box.windowTitle(), False)
            return int(QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.No)

        monkeypatch.setattr(QMessageBox, "exec", run)

    def check(self, box: QMessageBox) -> None:
        self.seen.append(box)
        box.grab()
        QApplication.processEvents()
        labels = [label for label in box.findChildren(QLabel) if label.text()]
        assert labels and all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
        assert box.textFormat() == Qt.TextFormat.PlainText

    def text(self, box: QMessageBox) -> str:
        return "\n".join([box.text(), box.informativeText()])


def as_entities(payload: str) -> str:
    """The payload written without a slash: a card's file name may not hold one; rich text reads it back."""
    return payload.replace("/", "&#47;")


def test_the_tuning_card_dialogs(qtbot, tmp_path: Path, payload: str, demo_model: Path, monkeypatch) -> None:
    """A card for another file names that file: the question shows the name as written; the question about
    the card's other machines is plain text too."""
    from gui.core.params import LoadSettings
    from gui.core.tuning_card import TuningCard
    from gui.services.tuning_card import write_card

    name = as_entities(payload)
    card = TuningCard(name, "1" * 64, LoadSettings(n_ctx=1024, n_threads=2, rpc_servers="127.0.0.1:9"))
    path = write_card(tmp_path / "card.json", card)
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    boxes = Boxes(monkeypatch, {"Tuning card for another file": True, "Tuning card names other machines": False})
    win.export_menu.ask_open_path = lambda *_: str(path)
    with qtbot.waitSignal(win.export_menu.settings_opened, timeout=TIMEOUT) as opened:
        win.export_menu.open_card_file()
    mismatch, remote = boxes.seen
    assert repr(name)[:50] in boxes.text(mismatch)  # literally, entities and all (a long name is cut at 60)
    assert "127.0.0.1:9" in boxes.text(remote)
    assert opened.args[0].rpc_servers == "" and opened.args[0].n_ctx == 1024
    render_everything(win, [])
    win.close()


def test_the_overcommit_dialog(qtbot, tmp_path: Path, payload: str, demo_model: Path) -> None:
    """The GPU's name (from the driver, or an RPC worker's answer) in the box that stops a load."""
    from fake_nvml import FakeGpu, FakeNvml

    from gui.core.params import LoadSettings
    from gui.services.nvml import Nvml

    gpu = FakeGpu(name=payload, total_mib=200.0, used_mib=150.0)
    win = open_window(
        qtbot,
        demo_model.parent,
        demo_model,
        LoadSettings(n_gpu_layers=99, n_ctx=8192),
        nvml=Nvml(FakeNvml([gpu])),
        engine=FakeEngine(),
    )
    win.plan_panel.set_engine_offload(True)
    qtbot.waitUntil(lambda: win.features.load.plan is not None, timeout=TIMEOUT)
    win.features.load.load_selected()
    box = win.features.load.overcommit_dialog
    assert box is not None and payload in box.text()
    labels = [label for label in box.findChildren(QLabel) if label.text()]
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    box.grab()
    box.reject()
    win.close()


def test_the_unexpected_error_box(qtbot, tmp_path: Path, payload: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from gui.app import install_excepthook

    parent = QWidget()
    qtbot.addWidget(parent)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # put back after the test
    monkeypatch.delenv("QT_QPA_PLATFORM")  # the box is shown on a desktop (the platform is already offscreen)
    install_excepthook(parent)
    try:
        raise RuntimeError(f"cannot read {payload}")
    except RuntimeError as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
    (box,) = parent.findChildren(QMessageBox)
    assert box.text() == f"cannot read {payload}"
    labels = [label for label in box.findChildren(QLabel) if label.text()]
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
    box.grab()
    box.done(0)
