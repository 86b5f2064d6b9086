"""Chat history in the window: stored as the chat goes, restored after a restart, renamed, searched, deleted."""

from __future__ import annotations

from pathlib import Path

import window_kit
from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from window_kit import open_window

from gui.core import protocol as p
from gui.services.history import HistoryStore
from gui.ui.main_window import MainWindow

TIMEOUT = 120_000


def open_history_window(qtbot, demo_model: Path, db: Path, load: bool = True) -> MainWindow:
    """The chat's replies come from a test engine: what is stored, not what the model says, is the subject."""
    win = open_window(
        qtbot, demo_model.parent, demo_model, also=lambda w: [w.history.listed], engine=FakeEngine(),
        history=HistoryStore(db),
    )  # fmt: skip
    if load:
        win.plan_panel.select_target("cpu")
        window_kit.load(qtbot, win)
    return win


def test_history_survives_a_restart(qtbot, demo_model: Path, tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite3"
    win = open_history_window(qtbot, demo_model, db)
    chat = win.chat
    chat.sampling = p.Sampling(temperature=0.0, seed=0)
    chat.max_tokens = 16
    chat.system_prompt.setPlainText("Be brief.")
    chat.input.setPlainText("What colour is the sky?")
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT):
        chat.send()
    reply = chat.conversation.turns[-1]
    qtbot.waitUntil(lambda: win.history.list.count() == 1, timeout=10_000)
    win.close()  # saves and closes the database

    # A real SQLite file in WAL mode, with the reply's model, settings and stats.
    with HistoryStore(db) as store:
        (summary,) = store.list()
        assert summary.title == "What colour is the sky?" and summary.n_turns == 2
        stored = store.load(summary.id)
    assert stored.system_prompt == "Be brief."
    assert stored.turns[1].text == reply.text and stored.turns[1].stats == reply.stats
    assert stored.turns[1].model_file == demo_model.name
    assert stored.turns[1].settings is not None and stored.turns[1].settings["n_ctx"] == 1024
    assert stored.turns[1].sampling is not None and stored.turns[1].sampling["temperature"] == 0.0

    again = open_history_window(qtbot, demo_model, db, load=False)
    qtbot.waitUntil(lambda: len(again.chat.conversation.turns) == 2, timeout=10_000)
    assert again.chat.conversation.turns[1].text == reply.text
    assert again.chat.system_prompt.toPlainText() == "Be brief."
    assert "What colour is the sky?" in again.chat.transcript.toPlainText()
    again.close()


def test_rename_search_delete_and_new_chat(qtbot, demo_model: Path, tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite3"
    win = open_history_window(qtbot, demo_model, db)
    chat, history = win.chat, win.history
    chat.sampling = p.Sampling(temperature=0.0, seed=0)
    chat.max_tokens = 8
    for question in ("Tell me about lighthouses.", "Tell me about volcanoes."):
        win.features.chat.new_chat()
        chat.input.setPlainText(question)
        with qtbot.waitSignals([history.saved, chat.reply_finished], timeout=TIMEOUT):
            chat.send()
    qtbot.waitUntil(lambda: history.list.count() == 2, timeout=10_000)
    volcano_id = history.current_id
    assert volcano_id is not None

    with qtbot.waitSignal(history.listed, timeout=10_000):
        history.rename(volcano_id, "Volcanoes")
    assert history.list.item(0).text().startswith("Volcanoes")

    with qtbot.waitSignal(history.listed, timeout=10_000):
        history.search.setText("lighthouses")
    assert history.list.count() == 1 and "lighthouses" in history.list.item(0).text().lower()

    # Opening a search hit puts that conversation back in the chat pane.
    with qtbot.waitSignal(history.opened, timeout=10_000):
        history.open(int(history.list.item(0).data(0x0100)))
    assert chat.conversation.turns[0].text == "Tell me about lighthouses."
    # The line under the chat speaks of the conversation shown: its last reply's figures, none for a new one.
    shown = chat.conversation.turns[-1].stats
    assert shown is not None and chat.stats_label.text().startswith(f"{shown.n_gen} tokens · first token ")
    assert f"({shown.n_prompt_evaluated} of {shown.n_prompt} computed)" in chat.stats_label.text()

    with qtbot.waitSignal(history.listed, timeout=10_000):
        history.search.setText("")
    with qtbot.waitSignal(history.listed, timeout=10_000):
        history.delete(volcano_id)
    assert history.list.count() == 1 and history.undo_box.isVisible()
    assert history.undo_label.text() == "Deleted “Volcanoes”."
    with qtbot.waitSignal(history.listed, timeout=10_000):  # changed my mind
        qtbot.mouseClick(history.undo_button, Qt.MouseButton.LeftButton)
    assert history.list.count() == 2 and not history.undo_box.isVisible()
    win.features.chat.new_chat()
    assert chat.stats_label.text() == "No reply yet."
    with qtbot.waitSignal(history.listed, timeout=10_000):
        history.delete(volcano_id)
    with qtbot.waitSignal(history.listed, timeout=10_000):  # the undo time runs out
        history.delete_for_good()
    with HistoryStore(db) as store:
        assert [s.title for s in store.list()] == ["Tell me about lighthouses."]
    win.close()
