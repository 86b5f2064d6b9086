"""The real window, offscreen, driving the real engine on the demo model."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from window_kit import open_window

from gui.core import protocol as p
from gui.ui.main_window import MainWindow
from tests.i18n_kit import english

pytestmark = pytest.mark.engine

LOAD_MS = 120_000
REPLY_MS = 120_000


__all__ = ["english"]  # a fixture, used by name


@pytest.fixture
def window(qtbot, demo_model: Path, english: None):
    """The window as the app opens it: a language installed first (English holds the plural forms)."""
    win = open_window(qtbot, demo_model.parent, demo_model)
    yield win
    win.close()


def load(qtbot, win: MainWindow) -> p.Loaded:
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=LOAD_MS) as blocker:
        qtbot.mouseClick(win.load_bar.load_button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def send(qtbot, win: MainWindow, text: str) -> None:
    win.chat.input.setPlainText(text)
    qtbot.mouseClick(win.chat.send_button, Qt.MouseButton.LeftButton)


def test_picker_lists_the_demo_model_from_its_header(window: MainWindow, demo_model: Path) -> None:
    entry = window.picker.current()
    assert entry is not None and entry.path == demo_model
    assert (entry.quant, entry.n_layer) == ("Q4_1", 30)
    group = window.picker.topLevelItem(0)
    assert "llama" in group.toolTip(0) and "30 layers" in group.toolTip(0) and "chat template" in group.toolTip(0)
    item = group.child(0)
    assert [item.text(c) for c in range(4)] == [demo_model.name, "Q4_1", "94 MiB", f"{entry.bits_per_weight:.2f}"]
    assert 5.0 < entry.bits_per_weight < 6.5  # Q4_1 blocks are 5 bits per weight, the embedding is Q8_0
    # The layer slider now ends at the model's blocks + output layer.
    assert window.params.rows["n_gpu_layers"].maximum == 31
    assert "CPU build" in window.engine_label.text()


def test_chat_streams_a_reply_into_the_pane(qtbot, window: MainWindow) -> None:
    loaded = load(qtbot, window)
    assert loaded.n_ctx == 1024 and window.chat.send_button.isEnabled()
    window.chat.sampling = p.Sampling(temperature=0.0)
    window.chat.max_tokens = 64
    seen_partial: list[str] = []

    def partial_text_visible() -> None:
        text = window.chat.transcript.toPlainText()
        assert window.chat.streaming and "\nModel\n" in text
        seen_partial.append(text)

    with qtbot.waitSignal(window.chat.reply_finished, timeout=REPLY_MS) as done:
        send(qtbot, window, "Say hello to the sea.")
        qtbot.waitUntil(lambda: len(window.chat.arrivals) >= 2, timeout=REPLY_MS)
        partial_text_visible()
    stats: p.ReplyStats = done.args[0]
    reply = window.chat.conversation.turns[-1]
    assert reply.role == "assistant" and reply.text and reply.stats == stats
    # Tokens arrived in several updates while the reply was being written, and all of them landed.
    assert len(window.chat.arrivals) >= 2
    assert sum(n for _, n in window.chat.arrivals) >= stats.n_gen
    assert reply.text.strip()[:20] in window.chat.transcript.toPlainText()
    assert f"{stats.n_gen} tokens" in window.chat.stats_label.text()
    assert "tok\u2060/\u2060s" in window.chat.stats_label.text()  # kept on one line
    assert window.chat.conversation.turns[0].text == "Say hello to the sea."


def test_killed_worker_keeps_the_window_and_the_conversation(qtbot, window: MainWindow) -> None:
    load(qtbot, window)
    window.chat.sampling = p.Sampling(temperature=0.0)
    window.chat.max_tokens = 400
    send(qtbot, window, "Count from 1 to 100, separated by commas.")
    qtbot.waitUntil(lambda: sum(n for _, n in window.chat.arrivals) >= 5, timeout=REPLY_MS)
    with qtbot.waitSignal(window.features.engine.engine_died, timeout=30_000) as died:
        window.features.bridge.client.kill()
    assert "SIGKILL" in died.args[0].reason

    # The window says what happened, in words, and keeps every turn.
    assert window.isVisible()
    assert window.chat.notice.isVisible()
    notice = window.chat.notice.text()
    assert "killed" in notice and "conversation is kept" in notice
    user, reply = window.chat.conversation.turns
    assert user.text.startswith("Count from 1 to 100")
    assert reply.text and reply.note == "interrupted: the engine stopped"
    transcript = window.chat.transcript.toPlainText()
    assert "Count from 1 to 100" in transcript and "interrupted" in transcript
    assert not window.chat.send_button.isEnabled() and not window.chat.streaming

    # A fresh worker comes up by itself; loading again continues the same conversation.
    qtbot.waitUntil(
        lambda: window.features.bridge.client.alive and window.load_bar.load_button.isEnabled(), timeout=LOAD_MS
    )
    load(qtbot, window)
    window.chat.max_tokens = 8
    with qtbot.waitSignal(window.chat.reply_finished, timeout=REPLY_MS):
        send(qtbot, window, "Thanks.")
    assert [t.role for t in window.chat.conversation.turns] == ["user", "assistant", "user", "assistant"]
    assert not window.chat.notice.isVisible()
