"""What the window remembers between runs: sampling presets, the margin, each model's last load settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui.core.params import LoadSettings
from gui.services.history import HistoryStore
from gui.services.settings_store import SettingsStore
from gui.ui.main_window import MainWindow

pytestmark = pytest.mark.engine  # every test opens the window, which starts the engine process
TIMEOUT = 120_000


def open_window(qtbot, demo_model: Path, tmp_path: Path) -> MainWindow:
    win = MainWindow(
        demo_model.parent,
        LoadSettings(n_threads=2, n_ctx=1024),
        history=HistoryStore(tmp_path / "h.sqlite3"),
        settings_store=SettingsStore(tmp_path / "settings.json"),
    )
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals([win.engine_ready, win.picker.scanned], timeout=TIMEOUT):
        win.start(select=demo_model)
    return win


def test_presets_margin_and_last_settings_come_back(qtbot, demo_model: Path, tmp_path: Path) -> None:
    win = open_window(qtbot, demo_model, tmp_path)
    panel = win.chat.sampling_panel
    panel.temperature.setValue(0.33)
    panel.top_k.setValue(17)
    assert panel.save_preset("Mine")
    assert not panel.save_preset("Balanced")  # built-ins stay as they are
    win.plan_panel.margin.setValue(1536)
    win.plan_panel.select_target("cpu")
    win.params.rows["n_ctx"].set_value(2048)
    with qtbot.waitSignal(win.model_loaded, timeout=TIMEOUT):
        win.load_selected()
    win.close()

    again = open_window(qtbot, demo_model, tmp_path)
    sampling = again.chat.sampling_panel
    assert sampling.preset.currentText() == "Mine"
    assert again.chat.sampling.temperature == 0.33 and again.chat.sampling.top_k == 17
    assert again.plan_panel.margin.value() == 1536
    assert again.params.settings().n_ctx == 2048  # the demo model's last load settings
    again.close()


def test_a_damaged_settings_file_starts_from_defaults(qtbot, demo_model: Path, tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{"sampling_presets": {"Bad": {"temperature": "hot"}}, "margin_mib": 512}')
    win = open_window(qtbot, demo_model, tmp_path)
    assert "Bad" not in win.chat.sampling_panel.presets
    assert win.plan_panel.margin.value() == 512
    win.close()
