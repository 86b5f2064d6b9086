"""The window starts whatever is in the user's files: the composition root (gui.app.build_services) builds
the real settings store and history from the user directories, here a settings file full of values no
preference accepts and a folder where the history database should be."""

from __future__ import annotations

import json
from pathlib import Path

import window_kit
from fake_engine import FakeEngine
from window_kit import open_window

from gui.core import protocol as p
from gui.core.preferences import CAP_WATTS, MARGIN_MIB
from gui.services.history import default_history_path
from gui.services.settings_store import default_settings_path

TIMEOUT = 120_000


def test_the_window_starts_with_a_hostile_settings_file_and_a_folder_for_a_history(qtbot, demo_model: Path) -> None:
    settings = default_settings_path()
    settings.parent.mkdir(parents=True)
    settings.write_text(
        json.dumps(
            {
                "margin_mib": float("nan"),
                "cap_watts": float("inf"),
                "sampling_preset": "Balanced\0",
                "model_folders": ["/models\0/elsewhere", 12],
                "sampling_presets": {"Mine": {"top_k": float("-inf")}, "Also mine": {"temperature": 10**400}},
                "last_settings": {demo_model.name: {"n_ctx": float("inf")}},
            },
            allow_nan=True,
        ),
        encoding="utf-8",
    )
    history = default_history_path()
    history.mkdir(parents=True)

    win = open_window(qtbot, demo_model.parent, demo_model, also=lambda w: [w.history.listed], engine=FakeEngine())
    assert win.plan_panel.margin.value() == MARGIN_MIB.default
    assert win.monitor.cap_watts == CAP_WATTS.default
    assert win.features.services.settings.model_folders == []
    # The history says, for the whole session, why it is not kept; chats still work in memory.
    assert win.history.notice.isVisibleTo(win) and "is a folder" in win.history.notice.text()
    win.plan_panel.select_target("cpu")
    window_kit.load(qtbot, win)
    chat = win.chat
    chat.sampling = p.Sampling(temperature=0.0, seed=0)
    chat.input.setPlainText("Still here?")
    with qtbot.waitSignals([win.history.saved, chat.reply_finished], timeout=TIMEOUT):
        chat.send()
    qtbot.waitUntil(lambda: win.history.list.count() == 1, timeout=10_000)
    win.close()  # writes the preferences it has: a good file from now on
    assert history.is_dir() and not any(history.iterdir())
    assert json.loads(settings.read_text(encoding="utf-8"))["margin_mib"] == MARGIN_MIB.default
