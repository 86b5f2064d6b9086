"""What a new user meets in the first hour: the window says what it does, and does what it says."""

from __future__ import annotations

from pathlib import Path

from fake_engine import FakeEngine
from window_kit import load, open_window


def test_settings_moved_after_a_load_ask_for_a_reload_and_the_library_marks_the_loaded_file(
    qtbot, demo_model: Path
) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, engine=FakeEngine())
    assert win.load_button.text() == "&Load"
    load(qtbot, win)
    item = win.picker.topLevelItem(0).child(0)
    assert item.font(0).bold() and not item.icon(0).isNull()
    win.params.rows["n_ctx"].set_value(2048)
    assert win.load_button.text() == "&Reload to apply" and "changed since the load" in win.load_button.toolTip()
    win.params.rows["n_ctx"].set_value(1024)  # back to what is loaded
    assert win.load_button.text() == "&Load"
    win.unload()
    assert not item.font(0).bold() and item.icon(0).isNull()
    win.close()
