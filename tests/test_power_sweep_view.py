"""The power-cap sweep in the window, on a simulated V100 (its physics) with the engine decoding: the sweep planned
before it starts, rows and a chart filling in, the recommended cap applied with one click, and the card put back at
the limit it had whether the sweep ends, is stopped, the engine dies or the window closes mid-sweep."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from window_kit import TIMEOUT, load, open_window

from gui.core.cards import find_card
from gui.core.params import LoadSettings
from gui.core.power_sweep import SweepResult
from gui.core.simulated_gpu import SimulatedGpu


def sweep_window(qtbot, demo_folder: Path, demo_model: Path, *, loaded: bool = True):
    engine = FakeEngine("one two three four five six seven eight")
    win = open_window(
        qtbot, demo_folder, demo_folder / demo_model.name, LoadSettings(n_threads=2, n_ctx=1024),
        engine=engine, simulate=find_card("v100-16gb"),
    )  # fmt: skip
    win.monitor.bridge.sample_now()  # a first reading of the card, as the telemetry thread would give
    win.tabs.setCurrentWidget(win.tune_pages)
    win.tune_pages.setCurrentWidget(win.power_sweep)
    if loaded:
        load(qtbot, win)
    return win, engine


def card(win) -> SimulatedGpu:
    simulated = win.features.services.gpu.simulated
    assert simulated is not None
    return simulated.gpus[0]


def quick(win, caps: str, measure_s: float = 1.0) -> None:
    view = win.power_sweep
    view.caps.setText(caps)
    view.warmup.setValue(0)
    view.measure.setValue(measure_s)


def run_to_end(qtbot, win) -> SweepResult:
    with qtbot.waitSignal(win.features.power.finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(win.power_sweep.start_button, Qt.MouseButton.LeftButton)
    result = done.args[0]
    assert isinstance(result, SweepResult), result
    return result


def test_the_sweep_is_planned_from_the_card_and_bad_caps_are_said(qtbot, demo_folder: Path, demo_model: Path) -> None:
    win, _engine = sweep_window(qtbot, demo_folder, demo_model, loaded=False)
    view = win.power_sweep
    assert win.tune_pages.tabText(win.tune_pages.indexOf(view)) == "Power caps (SIMULATED)"
    # The card's own range gives the default caps; the warm-up is three of its thermal time constants.
    assert view.caps.placeholderText() == "300, 265, 225, 190, 150 W"
    assert view.warmup.value() == 90
    summary = view.summary.text()
    assert summary.startswith("5 caps on Tesla V100-SXM2-16GB (SIMULATED): 300, 265, 225, 190, 150 W (150-300 W")
    assert "90 s warm-up, then 30 s measured, at each cap; about 10 min in all" in summary
    assert view.start_button.isEnabled()
    view.caps.setText("200, abc")
    assert view.summary.text() == "'abc' is not a number of watts: list whole watts, e.g. 150,175,200 or 150-250/25"
    assert not view.start_button.isEnabled()
    view.caps.setText("100,200")
    assert view.summary.text().startswith("100 W is below this card's minimum power limit (150-300 W")
    view.caps.setText("150-300/10")
    assert view.summary.text() == "'150-300/10' is 16 caps, too many for one sweep (at most 12); use a larger step"
    # Nothing loaded yet: Start says what it needs instead of starting.
    view.caps.setText("250")
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    assert view.summary.text() == "Load a model first: at each cap the sweep measures it decoding."
    assert win.features.power.runner is None
    win.close()


def test_a_sweep_measures_each_cap_restores_the_limit_and_applies_the_recommendation(
    qtbot, demo_folder: Path, demo_model: Path
) -> None:
    win, engine = sweep_window(qtbot, demo_folder, demo_model)
    view, gpu = win.power_sweep, card(win)
    before = gpu.power_limit_w
    quick(win, "300,150")
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(view.phase.text()), timeout=TIMEOUT)
    # While it runs: chat waits and says why, the power panel waits, loads wait.
    assert "power-cap sweep is using the engine" in win.chat.engine_busy
    assert win.monitor.power_panel.locked and not win.monitor.power_panel.cap_button.isEnabled()
    assert not win.load_bar.load_button.isEnabled() and not view.start_button.isEnabled()
    with qtbot.waitSignal(win.features.power.finished, timeout=TIMEOUT) as done:
        pass
    result: SweepResult = done.args[0]
    assert [row.cap_w for row in result.rows] == [300, 150] and not result.partial
    assert result.restored and gpu.power_limit_w == before
    assert all(row.tokens > 0 and row.mean_power_w is not None for row in result.rows)
    assert engine.requests and all(r.ignore_eos for r in engine.requests)  # the fixed decode workload
    # Table and chart, one row and point per cap; the simulated card's own columns.
    assert view.table.rowCount() == 2 and view.table.item(0, 0).text() == "300"
    assert view.table.horizontalHeaderItem(3).text() == "engine tok/s"
    xs, ys = (list(values) for values in view._speed.getData())
    assert xs == [150.0, 300.0] and max(ys) == pytest.approx(100.0)
    assert view.recommendation.text().startswith("Recommended: ")
    assert "is back at 300 W" in view.summary.text()
    assert not win.chat.engine_busy and not win.monitor.power_panel.locked and win.load_bar.load_button.isEnabled()
    # One click applies the recommendation through the power panel; the card holds it.
    chosen = result.recommendation
    assert chosen is not None and view.apply_button.text() == f"Cap at {chosen.cap_w} W"
    with qtbot.waitSignal(win.monitor.power_panel.finished, timeout=TIMEOUT):
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert gpu.power_limit_w == chosen.cap_w
    assert view.recommendation.text().endswith(f"applied: simulated card capped at {chosen.cap_w} W")
    win.close()


def test_stop_keeps_the_caps_measured_and_restores(qtbot, demo_folder: Path, demo_model: Path) -> None:
    win, _engine = sweep_window(qtbot, demo_folder, demo_model)
    view, gpu = win.power_sweep, card(win)
    quick(win, "300,250,200", measure_s=1.0)
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.table.rowCount() == 1, timeout=TIMEOUT)
    assert not view.measure.isEnabled() and not view.caps.isEnabled()  # what runs is what was planned
    with qtbot.waitSignal(win.features.power.finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(view.stop_button, Qt.MouseButton.LeftButton)
    result: SweepResult = done.args[0]
    assert result.partial and result.reason == "stopped" and 1 <= len(result.rows) < 3
    assert result.restored and gpu.power_limit_w == 300
    assert view.summary.text().startswith(f"Partial: {len(result.rows)} of 3 caps measured (stopped).")
    assert view.table.rowCount() == len(result.rows)
    win.close()


def test_an_engine_that_dies_mid_sweep_ends_it_partial_with_the_limit_back(
    qtbot, demo_folder: Path, demo_model: Path
) -> None:
    win, engine = sweep_window(qtbot, demo_folder, demo_model)
    view, gpu = win.power_sweep, card(win)
    quick(win, "250,200", measure_s=60.0)
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: gpu.power_limit_w == 250 and bool(engine.requests), timeout=TIMEOUT)
    with qtbot.waitSignal(win.features.power.finished, timeout=TIMEOUT) as done:
        engine.kill()
    result: SweepResult = done.args[0]
    assert result.partial and result.reason.startswith("the engine stopped")
    assert result.restored and gpu.power_limit_w == 300
    assert "the engine stopped" in view.summary.text()
    win.close()


def test_closing_the_window_mid_sweep_puts_the_limit_back(qtbot, demo_folder: Path, demo_model: Path) -> None:
    win, _engine = sweep_window(qtbot, demo_folder, demo_model)
    view, gpu = win.power_sweep, card(win)
    quick(win, "150,200", measure_s=60.0)  # highest first: 200, then 150
    qtbot.mouseClick(view.start_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: gpu.power_limit_w == 200, timeout=TIMEOUT)
    runner = win.features.power.runner
    assert runner is not None and runner.running
    win.close()
    assert not runner.running  # the close waited for the sweep to end and restore
    assert gpu.power_limit_w == 300


def test_without_a_gpu_the_page_says_what_a_sweep_needs(qtbot, demo_folder: Path, demo_model: Path) -> None:
    win = open_window(qtbot, demo_folder, demo_folder / demo_model.name, engine=FakeEngine())
    win.monitor.bridge.sample_now()  # a reading of this machine: no NVIDIA GPU in it
    view = win.power_sweep
    assert view.summary.text().startswith("No NVIDIA GPU to sweep here")
    assert "--simulate v100-16gb" in view.summary.text() and not view.start_button.isEnabled()
    win.close()
