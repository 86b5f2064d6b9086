"""Sentences of gui/core and gui/services keep their translation on the way to the widget that shows them:
formatted into a window's sentence, capitalised, or carried by a signal, they reach the user in Chinese, and
the English stays as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from gui.core import protocol as p
from gui.core.params import LoadSettings
from gui.core.tuning_card import CardFacts, TuningCard
from gui.services.api_server import ApiActivity
from gui.services.engine_worker import _prompt_decode_failed
from gui.services.journey import JourneyStore
from gui.services.tuning_card import write_card
from gui.ui.background import Background
from gui.ui.export_menu import ExportMenu
from gui.ui.journey_recorder import JourneyRecorder
from gui.ui.param_panel import ParamPanel
from gui.ui.plan_panel import format_verify
from gui.ui.serve_panel import ServePanel
from tests.i18n_kit import chinese, english, english_words, untranslated

__all__ = ["chinese", "english"]  # fixtures, used by name

TIMEOUT = 20000


def _menu(qtbot: QtBot, model: Path, settings: LoadSettings) -> tuple[ExportMenu, Background, list[str]]:
    background = Background("i18n-display-test")
    menu = ExportMenu(
        lambda: model,
        lambda: settings,
        lambda: None,
        background,
        facts=lambda: CardFacts(card_name="Tesla P40", driver="535.0"),
    )
    qtbot.addWidget(menu)
    messages: list[str] = []
    menu.message.connect(messages.append)
    return menu, background, messages


def _open_card(qtbot: QtBot, demo_model: Path, tmp_path: Path) -> str:
    """Open a tuning card made for ``demo_model``; the status line it ends with."""
    sha = hashlib.sha256(demo_model.read_bytes()).hexdigest()
    path = write_card(tmp_path / "c.json", TuningCard(demo_model.name, sha, LoadSettings(n_ctx=4096)))
    menu, background, messages = _menu(qtbot, demo_model, LoadSettings())
    opened: list[LoadSettings] = []
    menu.settings_opened.connect(opened.append)
    menu.ask_open_path = lambda *_: str(path)
    try:
        menu.open_card_file()
        qtbot.waitUntil(lambda: bool(opened), timeout=TIMEOUT)
    finally:
        background.shutdown(wait=True)
    return messages[-1]


def test_a_tuning_card_applied_is_said_in_chinese(
    chinese: None, qtbot: QtBot, demo_model: Path, tmp_path: Path
) -> None:
    said = _open_card(qtbot, demo_model, tmp_path)
    assert demo_model.name in said and english_words(said) == [], said


def test_a_tuning_card_applied_keeps_its_english(english: None, qtbot: QtBot, demo_model: Path, tmp_path: Path) -> None:
    said = _open_card(qtbot, demo_model, tmp_path)
    assert said == f"Settings from the tuning card for {demo_model.name} applied; they take effect at the next load."


def test_settings_a_tuning_card_cannot_hold_are_said_in_chinese(chinese: None, qtbot: QtBot, demo_model: Path) -> None:
    menu, background, messages = _menu(qtbot, demo_model, LoadSettings(tensor_split="0,0"))
    try:
        menu.save_card_file()
    finally:
        background.shutdown(wait=True)
    assert len(messages) == 1 and "Tensor" not in messages[0]
    assert english_words(messages[0]) == [], messages[0]


def test_a_doctor_fix_says_what_it_set_in_chinese(chinese: None, qtbot: QtBot) -> None:
    panel = ParamPanel(LoadSettings())
    qtbot.addWidget(panel)
    for key, value in (("use_mmap", "off"), ("n_ctx", "8192")):
        changed = panel.set_value(key, value)
        assert english_words(changed) == [], changed
    assert panel.settings().n_ctx == 8192 and not panel.settings().use_mmap
    with pytest.raises(ValueError) as refusal:
        panel.set_value("use_mmap", "maybe")
    refused = str(refusal.value)
    assert "'maybe'" in refused and english_words(refused.replace("'maybe'", "")) == [], refused


def test_a_doctor_fix_keeps_its_english(english: None, qtbot: QtBot) -> None:
    panel = ParamPanel(LoadSettings())
    qtbot.addWidget(panel)
    assert panel.set_value("use_mmap", "off").endswith(" set to off")
    assert panel.set_value("n_ctx", "8192").endswith(" set to 8192")


def test_a_failed_api_request_row_is_in_chinese(chinese: None, qtbot: QtBot) -> None:
    panel = ServePanel()
    qtbot.addWidget(panel)
    failed = ApiActivity(7, "chat", True, finish_reason="error", error=_prompt_decode_failed(3))
    panel.add_request(failed, now=0.0)
    item = panel.requests.item(0, panel.requests.columnCount() - 1)
    assert item is not None and "llama_decode" in item.text() and "(status" not in item.text()
    assert untranslated(panel) == []


def test_a_failed_dry_run_is_said_in_chinese(chinese: None) -> None:
    result = p.DryRunResult(1, "m.gguf", False, _prompt_decode_failed(2), 0, 0, 0.0, 0.0, {}, {}, 0.0, ())
    said = format_verify(result, None)
    assert "llama_decode" in said and english_words(said.replace("llama.cpp", "")) == [], said


def test_a_journey_record_that_fails_is_said_in_chinese(chinese: None, qtbot: QtBot, tmp_path: Path) -> None:
    store = JourneyStore(tmp_path / "journey.sqlite3")
    recorder = JourneyRecorder(store)
    try:
        with qtbot.waitSignal(recorder.failed, timeout=TIMEOUT) as bad:
            recorder.record_bench_row({"avg_ts": 1.0}, None)
    finally:
        recorder.shutdown()
        store.close()
    assert bad.args[0].startswith("调优记录：基准测试行未记录：")
