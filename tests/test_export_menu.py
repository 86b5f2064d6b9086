"""The Export button on its own: what it copies, saves and opens, with the hashing off the UI thread."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import threading
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication

from gui.core.export import llama_server_command
from gui.core.params import LoadSettings
from gui.core.tuning_card import CardFacts, TuningCard
from gui.services.tuning_card import read_card, write_card
from gui.ui.background import Background
from gui.ui.export_menu import ExportMenu

SETTINGS = LoadSettings(n_gpu_layers=12, n_ctx=2048, n_threads=3, cache_type_k="q8_0", cache_type_v="q8_0")


class Harness:
    def __init__(self, qtbot, model: Path | None) -> None:
        self.model = model
        self.settings = SETTINGS
        self.node: int | None = None
        self.background = Background("export-test")
        self.menu = ExportMenu(
            lambda: self.model,
            lambda: self.settings,
            lambda: self.node,
            self.background,
            facts=lambda: CardFacts(card_name="Tesla P40", driver="535.0"),
        )
        qtbot.addWidget(self.menu)
        self.messages: list[str] = []
        self.opened: list[LoadSettings] = []
        self.menu.message.connect(self.messages.append)
        self.menu.settings_opened.connect(self.opened.append)
        self.asked: list[str] = []

    def wait_message(self, qtbot, text: str) -> str:
        qtbot.waitUntil(lambda: any(text in m for m in self.messages), timeout=20000)
        return next(m for m in self.messages if text in m)


@pytest.fixture
def harness(qtbot, demo_model: Path):
    made = Harness(qtbot, demo_model)
    yield made
    made.menu.cancel()
    made.background.shutdown(wait=True)


def test_copies_the_llama_server_command_for_the_current_model_and_pin(qtbot, harness: Harness) -> None:
    harness.node = 1
    harness.menu.copy_server.trigger()
    text = QGuiApplication.clipboard().text()
    assert text == llama_server_command(harness.model, SETTINGS, 1).text
    words = shlex.split(text)
    assert words[:4] == ["numactl", "--cpunodebind=1", "--membind=1", "llama-server"]
    assert words[words.index("--ctx-size") + 1] == "2048" and words[words.index("--cache-type-k") + 1] == "q8_0"
    assert "clipboard" in harness.messages[-1]
    harness.menu.copy_cli.trigger()
    assert shlex.split(QGuiApplication.clipboard().text())[3] == "llama-cli"
    harness.menu.copy_preset.trigger()
    assert QGuiApplication.clipboard().text().startswith("[SmolLM2-135M-Instruct.Q4_1]\n")


def test_without_a_model_the_actions_are_off_and_say_why(qtbot) -> None:
    made = Harness(qtbot, None)
    made.menu.menu().aboutToShow.emit()
    assert not made.menu.copy_server.isEnabled() and not made.menu.save_card.isEnabled()
    made.menu.save_card_file()
    assert "Select a model first" in made.messages[-1]
    made.background.shutdown(wait=True)


def test_a_setting_the_target_cannot_take_is_said_not_copied(qtbot, harness: Harness, tmp_path: Path) -> None:
    harness.settings = SETTINGS.with_values(cache_type_v="f16")
    harness.menu.ask_save_path = lambda *_: str(tmp_path / "x.kcpps")
    harness.menu.save_kcpps_file()
    assert "one KV cache type" in harness.messages[-1]
    assert not (tmp_path / "x.kcpps").exists()


def test_saves_a_kcpps_file(qtbot, harness: Harness, tmp_path: Path) -> None:
    target = tmp_path / "smol.kcpps"
    harness.menu.ask_save_path = lambda *_: str(target)
    harness.menu.save_kcpps_file()
    harness.wait_message(qtbot, "Saved smol.kcpps")
    data = json.loads(target.read_text())
    assert data["gpulayers"] == 12 and data["quantkv"] == 1 and data["model_param"] == str(harness.model)


def test_saves_a_tuning_card_hashed_off_the_ui_thread(qtbot, harness: Harness, tmp_path: Path) -> None:
    target = tmp_path / "smol.tuning.json"
    harness.menu.ask_save_path = lambda title, name, _filters: harness.asked.append(name) or str(target)
    ui = threading.get_ident()
    with qtbot.waitSignal(harness.menu.busy_changed) as started:
        harness.menu.save_card_file()
    assert started.args == [True] and harness.menu.busy
    harness.wait_message(qtbot, "Saved the tuning card")
    assert not harness.menu.busy and threading.get_ident() == ui
    assert harness.asked == ["SmolLM2-135M-Instruct.Q4_1.tuning.json"]
    card = read_card(target)
    assert harness.model is not None
    assert card.model_sha256 == hashlib.sha256(harness.model.read_bytes()).hexdigest()
    assert card.settings == SETTINGS and card.card_name == "Tesla P40" and card.driver == "535.0"


def test_opens_a_matching_card_and_hands_out_its_settings(qtbot, harness: Harness, tmp_path: Path) -> None:
    assert harness.model is not None
    sha = hashlib.sha256(harness.model.read_bytes()).hexdigest()
    tuned = LoadSettings(n_ctx=4096, n_threads=2, flash_attn="off")
    path = write_card(tmp_path / "c.json", TuningCard(harness.model.name, sha, tuned))
    harness.menu.ask_open_path = lambda *_: str(path)
    harness.menu.open_card_file()
    qtbot.waitUntil(lambda: harness.opened == [tuned], timeout=20000)
    assert "next load" in harness.messages[-1]


@pytest.mark.parametrize("apply", [False, True])
def test_a_card_for_another_file_asks_first(qtbot, harness: Harness, tmp_path: Path, apply: bool) -> None:
    assert harness.model is not None
    tuned = LoadSettings(n_ctx=1024, n_threads=2)
    path = write_card(tmp_path / "other.json", TuningCard("other.gguf", "1" * 64, tuned))
    harness.menu.ask_open_path = lambda *_: str(path)
    harness.menu.confirm = lambda _title, text: harness.asked.append(text) or apply
    harness.menu.open_card_file()
    qtbot.waitUntil(lambda: len(harness.asked) == 1, timeout=20000)
    assert "SHA-256 does not match" in harness.asked[0]
    if apply:
        qtbot.waitUntil(lambda: harness.opened == [tuned], timeout=20000)
        assert "anyway" in harness.messages[-1]
    else:
        harness.wait_message(qtbot, "not applied")
        assert harness.opened == []


def test_a_broken_card_is_one_line(qtbot, harness: Harness, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_bytes(b"[" * 300_000)
    harness.menu.ask_open_path = lambda *_: str(path)
    harness.menu.open_card_file()
    message = harness.wait_message(qtbot, "Could not open broken.json")
    assert "\n" not in message and harness.opened == []


def test_hashing_a_large_model_stops_when_asked(qtbot, harness: Harness, tmp_path: Path) -> None:
    big = tmp_path / "big.gguf"
    with open(big, "wb") as file:
        file.truncate(64 << 30)  # sparse: 64 GiB that take no disk, and far longer to hash than this test
    harness.model = big
    harness.menu.ask_save_path = lambda *_: str(tmp_path / "big.json")
    harness.menu.save_card_file()
    assert harness.menu.busy
    harness.menu.menu().aboutToShow.emit()
    assert harness.menu.stop_hashing.isVisible() and not harness.menu.save_card.isEnabled()
    harness.menu.stop_hashing.trigger()
    harness.wait_message(qtbot, "Stopped hashing")
    assert not harness.menu.busy and not (tmp_path / "big.json").exists()


def test_in_the_window_a_saved_card_carries_the_load_and_its_speeds_and_opening_one_sets_the_sliders(
    qtbot, demo_model: Path, tmp_path: Path
) -> None:
    """The window's Export button: the selected model and the sliders; a card saved after a reply with these very
    settings records its speeds (and none once the sliders moved); a card opened sets the sliders."""
    from fake_engine import FakeEngine
    from window_kit import TIMEOUT, load, open_window

    models = tmp_path / "models"
    models.mkdir()
    (models / demo_model.name).symlink_to(demo_model)
    engine = FakeEngine()
    engine.decode_tok_s = 42.0
    win = open_window(qtbot, models, models / demo_model.name, LoadSettings(n_threads=2, n_ctx=1024), engine=engine)
    menu = win.export_menu
    menu.menu().aboutToShow.emit()  # as when the button is clicked: the actions follow the selection
    menu.copy_server.trigger()
    words = shlex.split(QGuiApplication.clipboard().text())
    assert words[words.index("--model") + 1] == str(models / demo_model.name)
    assert words[words.index("--ctx-size") + 1] == "1024" and words[words.index("--threads") + 1] == "2"
    load(qtbot, win)
    win.chat.input.setPlainText("Hello")
    with qtbot.waitSignal(win.chat.reply_finished, timeout=TIMEOUT):
        win.chat.send()
    facts = win.features.card_facts()
    assert facts.gen_tok_s == 42.0 and facts.engine_build is not None
    target = tmp_path / "tuned.json"
    menu.ask_save_path = lambda *_: str(target)
    menu.save_card_file()
    qtbot.waitUntil(lambda: target.exists() and not menu.busy, timeout=TIMEOUT)
    card = read_card(target)
    assert card.settings == win.params.settings() and card.gen_tok_s == 42.0
    win.params.set_settings(win.params.settings().with_values(n_threads=1))
    assert win.features.card_facts().gen_tok_s is None  # speeds of other settings are not these settings' speeds
    menu.ask_open_path = lambda *_: str(target)
    menu.open_card_file()
    qtbot.waitUntil(lambda: win.params.settings().n_threads == 2, timeout=TIMEOUT)
    win.close()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_chosen_as_a_card_or_a_model_is_refused_and_export_is_free_again(
    qtbot, harness: Harness, tmp_path: Path
) -> None:
    fifo = tmp_path / "card.json"
    os.mkfifo(fifo)
    try:
        harness.menu.ask_open_path = lambda *_: str(fifo)
        harness.menu.open_card_file()
        message = harness.wait_message(qtbot, "Could not open card.json")
        assert (
            message
            == "Could not open card.json: card.json is not a tuning card: it is a named pipe, not a regular file"
        )
        qtbot.waitUntil(lambda: not harness.menu.busy, timeout=10000)
        harness.model = fifo
        harness.menu.ask_save_path = lambda *_: str(tmp_path / "out.json")
        harness.menu.save_card_file()
        harness.wait_message(qtbot, "named pipe")
        qtbot.waitUntil(lambda: not harness.menu.busy, timeout=10000)
        assert not (tmp_path / "out.json").exists() and harness.opened == []
    finally:  # a reader stuck on the pipe (the bug) is let go, so the suite ends
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
