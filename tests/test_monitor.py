"""The GPU monitor view, offscreen: readout, charts (pixels), pause/follow, export, power cap, alerts, no driver.

Time is a fake clock stepped one second per tick and ticks are taken with `sample_now()`, so nothing sleeps;
one test runs the real telemetry thread at 0.25 s to cover the threaded path and its join.
"""

from __future__ import annotations

import csv
import math
import threading
import time
from pathlib import Path

import pytest
from fake_nvml import FakeGpu, FakeNvml
from monitor_kit import FakeClock, MakeView, count_colour, plot_area, ticks
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from gui.core.alerts import Alert
from gui.core.simulated_gpu import SimulatedGpu
from gui.core.telemetry_history import TelemetryWindow
from gui.services.bundle import GpuServices
from gui.services.nvml import Nvml
from gui.services.power_limit import Outcome, PowerLimiter
from gui.services.telemetry import SimulatedSource
from gui.ui.charts import CHARTS, TEMPERATURE_COLOUR
from gui.ui.monitor import MonitorView


def simulated(clock: FakeClock, *cards: str) -> SimulatedSource:
    return SimulatedSource([SimulatedGpu(card, index=i) for i, card in enumerate(cards or ("v100-16gb",))], clock=clock)


# --- simulated card: drawing and labelling -------------------------------------------------------------


def test_simulated_card_is_drawn_and_labelled(make_view: MakeView, clock: FakeClock, tmp_path: Path) -> None:
    view = make_view(simulated(clock))
    view.show()
    view.set_engine_rate(40.0)
    ticks(view, clock, 90)
    view.set_engine_rate(0.0)
    ticks(view, clock, 30)
    image = view.grab().toImage()
    image.save(str(tmp_path / "monitor.png"))
    assert (image.width(), image.height()) == (740, 800)  # the compact layout fits
    assert count_colour(image, plot_area(view, "temperature"), TEMPERATURE_COLOUR) > 100
    # Nothing else is drawn in the temperature colour: the pixels are the curve's.
    assert count_colour(image, plot_area(view, "power"), TEMPERATURE_COLOUR) == 0
    assert view.simulated_label.isVisible() and view.simulated_label.text() == "SIMULATED"
    assert "SIMULATED" in view.title_label.text() and "SIMULATED" in view.windowTitle()
    assert "SIMULATED" in view.gpu_combo.itemText(0)


def test_readout_says_na_where_the_card_has_no_reading(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock))
    view.set_engine_rate(30.0)
    ticks(view, clock, 3)
    text = {key: label.text() for key, label in view.readout.items()}
    assert text["fan"] == "n/a"  # passive data-centre card
    assert text["limit"] == "300 W" and text["pstate"] == "P0"
    assert text["util"] == "100% (mem 90%)" and text["pcie"] == "3×16 (max 3×16)"
    assert text["ecc"] == "0 corr., 0 uncorr." and text["throttle"] == "none"
    assert text["temperature"].endswith("°C") and text["clocks"].endswith("MHz")


def test_the_video_engines_are_a_readout_row_and_lines_in_the_utilisation_chart(
    make_view: MakeView, clock: FakeClock
) -> None:
    gpu = FakeGpu(readings={"temperature_c": 50, "util_gpu": 90, "encoder_util_pct": [50, 167000]})
    view = make_view(Nvml(FakeNvml([gpu])))  # this card's decoder answers NotSupported
    view.show()
    ticks(view, clock, 60)
    assert view.readout["codec"].text() == "50% / n/a"
    assert "Enc/dec: 50% / n/a" in view.readout["codec"].toolTip()
    encoder = next(c for spec in CHARTS for c in spec.curves if c.field == "encoder_util_pct")
    image = view.grab().toImage()
    area = plot_area(view, "utilisation")
    assert count_colour(image, area, encoder.colour) > area.width() // 6  # a line through the minute of five shown
    assert count_colour(image, plot_area(view, "temperature"), encoder.colour) == 0
    title = view.charts.plots["utilisation"].getPlotItem().titleLabel.text
    assert "encoder" in title and "decoder" in title


def test_engine_rate_is_charted_and_drives_the_simulated_load(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock))
    view.set_engine_rate(55.0)
    ticks(view, clock, 5)
    assert view.samples[0].gpu_util_pct == 100.0
    _, last = view.history.host.last  # type: ignore[misc]
    assert last["engine_tok_s"] == 55.0
    view.set_engine_rate(0.0)
    ticks(view, clock, 2)
    assert view.samples[0].gpu_util_pct == 0.0
    view.set_engine_rate(None)
    ticks(view, clock, 1)
    assert math.isnan(view.history.host.last[1]["engine_tok_s"])  # type: ignore[index]


def test_several_gpus_are_selectable(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock, "v100-16gb", "p40"))
    ticks(view, clock, 3)
    assert view.gpu_combo.count() == 2 and not view.gpu_combo.isHidden()
    assert view.selected_gpu == 0 and "V100" in view.title_label.text()
    view.select_gpu(1)
    assert view.selected_gpu == 1 and "P40" in view.title_label.text()
    assert view.charts.gpu_index == 1 and len(view.history.gpus[1]) == 3


# --- pause, follow, export ------------------------------------------------------------------------------


def test_pause_freezes_the_view_while_readings_keep_arriving(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock))
    ticks(view, clock, 10)
    before = view.charts.visible_range()
    view.charts.pause_button.click()
    assert view.charts.paused
    recorded = len(view.history.host)
    ticks(view, clock, 20)
    assert len(view.history.host) == recorded + 20  # data keeps coming
    assert view.charts.visible_range() == pytest.approx(before)  # the view does not move
    view.charts.pause_button.click()
    assert view.charts.visible_range()[1] == pytest.approx(before[1] + 20)  # back at the live edge


def test_follow_window_and_mouse_zoom(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock))
    ticks(view, clock, 10)
    x0, x1 = view.charts.visible_range()
    assert x1 - x0 == pytest.approx(300.0)  # the 5-minute default
    view.charts.window_combo.setCurrentText("1 h")
    x0, x1 = view.charts.visible_range()
    assert x1 - x0 == pytest.approx(3600.0)
    box = view.charts.plots["power"].getPlotItem().getViewBox()
    box.scaleBy(x=0.5)  # what the mouse wheel does
    box.sigRangeChangedManually.emit([True, False])
    assert not view.charts.follow and not view.charts.follow_box.isChecked()
    zoomed = view.charts.visible_range()
    ticks(view, clock, 5)
    assert view.charts.visible_range() == pytest.approx(zoomed)  # not following: stays put
    view.charts.set_window(300.0)  # choosing a window goes back to the live edge
    assert view.charts.follow
    assert view.charts.visible_range()[1] == pytest.approx(x1 + 5)


def test_export_writes_the_rows_in_the_visible_range(make_view: MakeView, clock: FakeClock, tmp_path: Path) -> None:
    view = make_view(simulated(clock))
    ticks(view, clock, 15)  # the engine has not reported a rate yet: a gap
    view.set_engine_rate(20.0)
    ticks(view, clock, 25)
    times = list(view.history.host.view().t)
    view.charts.set_follow(False)
    view.charts.plots["temperature"].setXRange(times[10], times[19], padding=0.0)
    path = tmp_path / "visible.csv"
    assert view.charts.export_visible_csv(path) == 10
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [float(r["time_unix"]) for r in rows] == pytest.approx(times[10:20])
    assert "gpu0_temperature_c" in rows[0]  # the selected GPU; its cells: tests/test_telemetry_history.py


def test_the_export_button_writes_on_a_worker_thread_and_says_how_it_went(
    make_view: MakeView, clock: FakeClock, tmp_path: Path, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = make_view(simulated(clock))
    ticks(view, clock, 30)
    gate = threading.Event()
    writer_threads: list[str] = []
    window_export = TelemetryWindow.export_csv

    def export(window: TelemetryWindow, path: str | Path) -> int:
        writer_threads.append(threading.current_thread().name)
        gate.wait(10)
        return window_export(window, path)

    monkeypatch.setattr(TelemetryWindow, "export_csv", export)
    path = tmp_path / "visible.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(path), ""))
    messages: list[str] = []
    view.message.connect(messages.append)
    qtbot.mouseClick(view.charts.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(writer_threads), timeout=10_000)
    ticks(view, clock, 5)  # recording goes on while the file is written; the export is of the click's copy
    gate.set()
    qtbot.waitUntil(lambda: any(m.startswith("exported") for m in messages), timeout=10_000)
    assert writer_threads and writer_threads[0] != threading.main_thread().name
    assert messages[0].startswith("exporting 30 readings") and messages[-1] == f"exported 30 readings to {path}"
    with path.open(newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 30

    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(tmp_path / "no" / "x.csv"), ""))
    qtbot.mouseClick(view.charts.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: messages[-1].startswith("cannot export"), timeout=10_000)
    assert "No such file or directory" in messages[-1]


def test_csv_log_toggle_logs_every_tick(make_view: MakeView, clock: FakeClock, tmp_path: Path) -> None:
    view = make_view(simulated(clock))
    path = tmp_path / "log.csv"
    view.set_csv_log(path)
    assert view.log_box.isChecked()
    view.start()  # the service writes the log on its own thread
    try:
        assert view.bridge.service.csv_path == path
    finally:
        view.stop()
    assert not view.log_box.isChecked() and view.bridge.service.csv_path is None


def test_real_telemetry_thread_delivers_ticks_on_the_ui_thread_and_joins(qtbot: QtBot, make_view: MakeView) -> None:
    view = make_view(simulated(FakeClock()), interval_s=0.25, clock=time.monotonic)
    threads: list[threading.Thread] = []
    view.bridge.tick.connect(lambda _live: threads.append(threading.current_thread()))
    view.start()
    qtbot.waitUntil(lambda: len(view.history.host) >= 3, timeout=5000)
    view.stop()
    assert not view.running
    assert threads and all(t is threading.main_thread() for t in threads)
    settled = len(view.history.host)
    qtbot.wait(1)  # nothing queued before stop() may still land
    assert len(view.history.host) == settled


# --- power cap -----------------------------------------------------------------------------------------


def test_cap_at_200_w_on_the_simulated_card(qtbot: QtBot, make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock))
    view.set_engine_rate(40.0)
    ticks(view, clock, 5)
    assert view.samples[0].power_w == pytest.approx(300.0)  # SXM2 board power at full load
    panel = view.power_panel
    assert panel.cap_button.text() == "Cap at 200 W"
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        qtbot.mouseClick(panel.cap_button, Qt.MouseButton.LeftButton)
    report = done.args[0]
    assert report.outcome is Outcome.APPLIED and report.enforced_w == 200.0
    assert panel.outcome_text() == "applied: simulated card capped at 200 W"
    assert "200 W (read back)" in panel.enforced_label.text()
    ticks(view, clock, 30)
    assert view.samples[0].power_limit_w == 200.0 and view.readout["limit"].text() == "200 W"
    assert all(s <= 200.0 for s in view.history.gpus[0].view()["power_w"][-30:])
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        qtbot.mouseClick(panel.restore_button, Qt.MouseButton.LeftButton)
    assert done.args[0].outcome is Outcome.APPLIED and done.args[0].enforced_w == 300.0
    assert done.args[0].message == "GPU 0 is back at its default limit, 300 W"


def test_a_cap_beyond_the_card_is_brought_into_its_range_and_said(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock
) -> None:
    view = make_view(simulated(clock))
    ticks(view, clock, 2)
    panel = view.power_panel
    assert (panel.spin.minimum(), panel.spin.maximum()) == (150, 300)  # the simulated V100's constraints
    panel.spin.lineEdit().selectAll()
    QTest.keyClicks(panel.spin, "5000")
    QTest.keyClick(panel.spin, Qt.Key.Key_Return)
    assert panel.cap_watts == 300 and panel.cap_button.text() == "Cap at 300 W"
    assert "5,000 W is not possible: the most this card takes is 300 W" in panel.outcome_label.text()
    view.cap_watts = 50  # a remembered value from another card
    assert panel.cap_watts == 150
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        panel.cap_button.click()
    assert done.args[0].outcome is Outcome.APPLIED and done.args[0].enforced_w == 150.0


def test_cap_watts_is_remembered_through_a_signal(qtbot: QtBot, make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(simulated(clock))
    with qtbot.waitSignal(view.cap_changed) as changed:
        view.cap_watts = 180
    assert changed.args == [180] and view.cap_watts == 180
    assert view.power_panel.cap_button.text() == "Cap at 180 W"


def test_cap_is_refused_where_the_card_reports_no_limit_range(qtbot: QtBot, make_view: MakeView) -> None:
    fake = FakeNvml.replay("nvml_v100_session.json")
    for key in ("min_limit_mw", "max_limit_mw"):
        del fake.gpus[0].readings[key]
    view = make_view(Nvml(fake))
    view.sample_now()
    with qtbot.waitSignal(view.power_panel.finished, timeout=1000) as done:
        view.power_panel.cap_button.click()
    assert done.args[0].outcome is Outcome.NOT_SUPPORTED and done.args[0].result is None
    assert "cannot be changed" in view.power_panel.outcome_text()


# --- recorded sessions: alerts, lost GPU, no driver ----------------------------------------------------------


def test_recorded_v100_session_raises_each_alert_once(make_view: MakeView) -> None:
    fake = FakeNvml.replay("nvml_v100_session.json")
    view = make_view(Nvml(fake))
    seen: list[Alert] = []
    view.alert.connect(seen.append)
    banners = []
    for _ in range(len(fake.gpus[0].frames)):
        view.sample_now()
        banners.append(view.banner_text())
        if view.samples[0].lost:
            assert "fell off the bus" in view.status_label.text()
            assert view.readout["temperature"].text() == "n/a"
        fake.step()
    assert [a.kind for a in seen] == ["throttle", "temperature", "ecc", "lost"]
    assert [a.kind for a in seen].count("temperature") == 1
    assert "83 °C" in seen[1].message and "fell off the bus" in seen[3].message
    assert "fell off the bus" in banners[9] and not view.banner.isHidden()
    assert view.status_label.text() == ""  # back again
    assert view.readout["temperature"].text() == "70 °C" and view.readout["fan"].text() == "n/a"
    assert not view.simulated_label.isVisible() and "SIMULATED" not in view.windowTitle()


def test_no_driver_shows_the_host_charts_only(make_view: MakeView, tmp_path: Path) -> None:
    view = make_view(Nvml(FakeNvml.replay("nvml_no_driver.json")))
    view.show()
    view.sample_now()
    view.sample_now()
    assert "no NVIDIA driver" in view.status_label.text()
    plots = view.charts.plots
    assert all(plots[k].isHidden() for k in ("temperature", "power", "utilisation", "vram", "clocks"))
    assert all(not plots[k].isHidden() for k in ("cpu", "memory", "tokens"))
    assert view.readout_frame.isHidden() and view.power_panel.isHidden()
    assert len(view.history.host) == 2 and not view.history.gpus
    view.grab().save(str(tmp_path / "no-driver.png"))


def test_without_a_gpu_the_monitor_says_why_there_is_no_cap(make_view: MakeView) -> None:
    view = make_view(Nvml(FakeNvml.replay("nvml_no_driver.json")))
    view.sample_now()
    assert not view.power_panel.isVisibleTo(view) and view.no_gpu_label.isVisibleTo(view)
    text = view.no_gpu_label.text()
    assert text.startswith("No NVIDIA GPU to watch or cap here (") and "--simulate v100-16gb" in text


def test_a_missing_helper_is_said_before_the_first_click(qtbot: QtBot, clock: FakeClock, tmp_path: Path) -> None:
    nvml = Nvml(FakeNvml([FakeGpu()]))
    gpu = GpuServices.create(nvml, clock=clock)
    gpu.limiter = PowerLimiter(helper=tmp_path / "not-installed", nvml=nvml)
    view = MonitorView(gpu)
    qtbot.addWidget(view)
    view.sample_now()
    label = view.power_panel.outcome_label
    assert label.isVisibleTo(view) and "not installed at" in label.text() and "sudo install -m 0755" in label.text()
    view.stop()
