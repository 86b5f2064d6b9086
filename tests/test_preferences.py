"""What the window remembers between runs: sampling presets, the margin, each model's last load settings and
chat format."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from fake_hub import write_small_model
from PySide6.QtCore import Qt
from window_kit import open_window

from gui.core.load_state import Phase
from gui.core.preferences import CHAT_FORMATS, LAST_SETTINGS
from gui.services.history import HistoryStore
from gui.services.settings_store import SettingsStore
from gui.ui.main_window import MainWindow

TIMEOUT = 120_000


def open_prefs_window(qtbot, demo_model: Path, tmp_path: Path, engine: FakeEngine | None = None) -> MainWindow:
    return open_window(
        qtbot,
        demo_model.parent,
        demo_model,
        engine=engine or FakeEngine(),
        history=HistoryStore(tmp_path / "h.sqlite3"),
        store=SettingsStore(tmp_path / "settings.json"),
    )


def test_presets_margin_and_last_settings_come_back(qtbot, demo_model: Path, tmp_path: Path) -> None:
    win = open_prefs_window(qtbot, demo_model, tmp_path)
    panel = win.chat.sampling_panel
    panel.boxes["temperature"].setValue(0.33)
    panel.boxes["top_k"].setValue(17)
    assert panel.save_preset("Mine")
    assert not panel.save_preset("Balanced")  # built-ins stay as they are
    win.plan_panel.margin.setValue(1536)
    win.plan_panel.select_target("cpu")
    win.params.rows["n_ctx"].set_value(2048)
    win.monitor.threshold_spin.setValue(76)
    win.monitor.interval_spin.setValue(2.5)
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    win.close()

    again = open_prefs_window(qtbot, demo_model, tmp_path)
    sampling = again.chat.sampling_panel
    assert sampling.preset.currentText() == "Mine"
    assert again.chat.sampling.temperature == 0.33 and again.chat.sampling.top_k == 17
    assert again.plan_panel.margin.value() == 1536
    assert again.params.settings().n_ctx == 2048  # the demo model's last load settings
    assert again.monitor.alert_threshold_c == 76 and again.monitor.bridge.service.interval_s == 2.5
    again.close()


def test_a_damaged_settings_file_starts_from_defaults(qtbot, demo_model: Path, tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{"sampling_presets": {"Bad": {"temperature": "hot"}}, "margin_mib": 512}')
    win = open_prefs_window(qtbot, demo_model, tmp_path)
    assert "Bad" not in win.chat.sampling_panel.presets
    assert win.plan_panel.margin.value() == 512
    win.close()


def test_the_load_that_was_sent_is_the_one_remembered(qtbot, demo_model: Path, tmp_path: Path) -> None:
    """Sliders moved and another model selected while a load runs change nothing about that load."""
    folder = tmp_path / "models"
    folder.mkdir()
    model = folder / demo_model.name
    model.symlink_to(demo_model)
    other = write_small_model(folder / "Other-Q4_K.gguf", name="Other")
    engine = FakeEngine()
    engine.release.clear()  # the load waits until the test lets it finish
    history = HistoryStore(tmp_path / "h.sqlite3")
    store = SettingsStore(tmp_path / "settings.json")
    win = open_window(qtbot, folder, model, engine=engine, history=history, store=store)
    win.plan_panel.select_target("cpu")
    win.params.rows["n_ctx"].set_value(2048)
    win.features.load.load_selected()
    qtbot.waitUntil(lambda: win.features.session.state.phase is Phase.LOADING, timeout=TIMEOUT)

    win.params.rows["n_ctx"].set_value(4096)
    win.params.rows["n_batch"].set_value(256)
    assert win.picker.select_path(other)
    win.params.rows["n_ctx"].set_value(8192)
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        engine.release.set()

    state = win.features.session.state
    assert state.model == model and state.settings is not None and state.settings.n_ctx == 2048
    remembered = store.read(LAST_SETTINGS)
    assert set(remembered) == {model.name}
    assert remembered[model.name].n_ctx == 2048 and remembered[model.name].n_batch == 512

    # A reply records the load it was generated with, not what the sliders show.
    win.chat.input.setPlainText("Hello?")
    with qtbot.waitSignals([win.chat.reply_finished, win.history.saved], timeout=TIMEOUT):
        win.chat.send()
    reply = win.chat.conversation.turns[-1]
    assert reply.model_file == model.name and reply.settings is not None and reply.settings["n_ctx"] == 2048
    win.close()
    with HistoryStore(tmp_path / "h.sqlite3") as again:
        (summary,) = again.list()
        stored = again.load(summary.id).turns[-1]
    assert stored.model_file == model.name and stored.settings is not None
    assert stored.settings["n_ctx"] == 2048 and stored.settings["n_batch"] == 512


def test_the_chat_format_picked_for_a_model_comes_back_after_a_restart(qtbot, demo_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    model = folder / demo_model.name
    model.symlink_to(demo_model)
    other = write_small_model(folder / "Other-Q4_K.gguf", name="Other")

    def start(engine: FakeEngine) -> MainWindow:
        win = open_window(
            qtbot,
            folder,
            model,
            engine=engine,
            history=HistoryStore(tmp_path / "h.sqlite3"),
            store=SettingsStore(tmp_path / "settings.json"),
        )
        win.plan_panel.select_target("cpu")
        return win

    def load_and_ask(win: MainWindow, path: Path) -> None:
        assert win.picker.select_path(path)
        with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
            win.features.load.load_selected()
        win.chat.input.setPlainText("Hello?")
        with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
            win.chat.send()

    engine = FakeEngine()
    win = start(engine)
    assert not win.chat.format_box.isEnabled()  # nothing loaded, nothing to pick a format for
    load_and_ask(win, model)
    assert win.chat.format_box.currentText() == "From the model" and engine.requests[-1].chat_format == ""
    assert win.chat.format_note.isHidden()  # the model's own template: nothing to explain
    win.chat.format_box.setCurrentIndex(win.chat.format_box.findData("gemma"))
    win.chat.input.setPlainText("And now?")
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
        win.chat.send()
    assert engine.requests[-1].chat_format == "gemma"  # at the next reply, without a reload
    assert len(engine.loads) == 1
    load_and_ask(win, other)  # another file has a choice of its own
    assert win.chat.chat_format == "" and engine.requests[-1].chat_format == ""
    win.close()

    engine = FakeEngine()
    again = start(engine)
    load_and_ask(again, model)
    assert again.chat.format_box.currentText() == "Gemma" and engine.requests[-1].chat_format == "gemma"
    assert "chat format: Gemma (your choice)." in again.load_bar.status.text()
    again.chat.format_box.setCurrentIndex(0)  # the engine's choice again: nothing left to remember
    assert again.features.services.settings.read(CHAT_FORMATS) == {}
    load_and_ask(again, other)
    assert "chat format: the model's own." in again.load_bar.status.text()
    again.close()


def test_a_worker_that_does_not_answer_unload_is_ended(
    qtbot, demo_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("gui.ui.load_session.ACK_S", 0.5)
    engine = FakeEngine()
    win = open_prefs_window(qtbot, demo_model, tmp_path, engine)
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    engine.freeze()
    with qtbot.waitSignal(win.features.engine.engine_died, timeout=10_000) as died:
        qtbot.mouseClick(win.load_bar.unload_button, Qt.MouseButton.LeftButton)
    assert "did not acknowledge Unload within 0.5 s" in died.args[0].failure.summary
    assert not win.features.session.state.ready and "acknowledge Unload" in win.chat.notice.text()
    win.close()
