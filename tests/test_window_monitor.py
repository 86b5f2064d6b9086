"""The monitor inside the window: a simulated card labelled as such, driven by the real engine's activity."""

from __future__ import annotations

from pathlib import Path

import pytest
from window_kit import open_window

from gui.core.cards import find_card
from gui.core.preferences import CAP_WATTS
from gui.core.simulated_gpu import SimulatedGpu
from gui.services.bundle import GpuServices
from gui.services.history import HistoryStore
from gui.services.settings_store import SettingsStore
from gui.services.telemetry import SimulatedSource

TIMEOUT = 120_000


@pytest.mark.engine
def test_simulated_card_follows_the_engine_and_remembers_the_cap(qtbot, demo_model: Path, tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.write(CAP_WATTS, 180)
    win = open_window(
        qtbot, demo_model.parent, demo_model, simulate=find_card("v100-16gb"), store=store,
        history=HistoryStore(tmp_path / "h.sqlite3"),
    )  # fmt: skip
    assert win.tabs.tabText(1) == "&Monitor (SIMULATED)"
    assert win.monitor.cap_watts == 180  # remembered from last time
    source = win.monitor.source
    assert isinstance(source, SimulatedSource)

    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    chat = win.chat
    chat.max_tokens = 300
    chat.ignore_eos = True
    chat.input.setPlainText("Tell me a story.")
    chat.send()
    # While tokens stream, the engine's rate reaches the monitor and loads the simulated card.
    qtbot.waitUntil(lambda: (win.monitor.bridge.engine_rate or 0) > 0, timeout=TIMEOUT)
    busy = source.sample(0)
    assert busy.simulated and (busy.gpu_util_pct or 0) > 50
    with qtbot.waitSignal(chat.reply_finished, timeout=TIMEOUT):
        chat.stop()
    assert win.monitor.bridge.engine_rate == 0

    win.monitor.cap_watts = 210
    assert store.read(CAP_WATTS) == 210
    win.close()


def test_the_sampling_interval_is_set_from_the_monitor(qtbot, tmp_path: Path) -> None:
    from gui.ui.monitor import MonitorView

    view = MonitorView(GpuServices.create(SimulatedSource([SimulatedGpu("t4")])))
    qtbot.addWidget(view)
    view.interval_spin.setValue(0.5)
    assert view.bridge.service.interval_s == 0.5
    view.interval_spin.setValue(9)  # out of range: the spin box keeps it to 5 s
    assert view.bridge.service.interval_s == 5.0
    view.stop()
