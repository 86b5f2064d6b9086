"""The monitor with several GPUs in one box (two P40s, a V100 beside P40s): every GPU at once in the readout
(a row each), the charts (a line per GPU, one legend), the alerts (each GPU's own state, a banner line each)
and the power cap ("Cap all", each card checked against its own range). Offscreen, fake clock, FakeNvml or
the app's simulated cards at the hardware edge."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeGpu, FakeNvml
from monitor_kit import FakeClock, MakeView, count_colour, plot_area, ticks
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from gui.core.gpu_sample import GpuSample
from gui.core.simulated_gpu import SimulatedGpu
from gui.services.nvml import Nvml
from gui.services.power_limit import Outcome
from gui.services.telemetry import SimulatedSource
from gui.ui.i18n import install_language
from gui.ui.monitor import MonitorView, compact_sample, gpu_name
from gui.ui.theme import current_palette
from tests.i18n_kit import english_words, untranslated


def p40(temperature_c: int, power_w: int, util: int) -> FakeGpu:
    return FakeGpu(
        name="Tesla P40",
        total_mib=24576.0,
        used_mib=1024.0,
        compute_capability=(6, 1),
        readings={
            "temperature_c": temperature_c,
            "slowdown_c": 92,
            "power_mw": power_w * 1000,
            "power_limit_mw": 250_000,
            "min_limit_mw": 125_000,
            "max_limit_mw": 250_000,
            "util_gpu": util,
            "util_memory": util // 2,
        },
    )


def test_the_short_name_keeps_the_model() -> None:
    assert gpu_name(GpuSample(index=0, timestamp=0.0, name="Tesla P40")) == "GPU 0 P40"
    assert gpu_name(GpuSample(index=3, timestamp=0.0, name="NVIDIA Tesla V100-SXM2-16GB")) == "GPU 3 V100-SXM2-16GB"
    assert gpu_name(GpuSample(index=1, timestamp=0.0, name="NVIDIA GeForce RTX 3090")) == "GPU 1 GeForce RTX 3090"
    assert gpu_name(GpuSample(index=2, timestamp=0.0, name=None)) == "GPU 2"


def test_two_p40s_each_have_a_row_a_line_and_a_legend_entry(make_view: MakeView, clock: FakeClock) -> None:

    fake = FakeNvml([p40(40, 50, 0), p40(40, 50, 0)])
    view = make_view(Nvml(fake))
    view.show()

    def warm_gpu_1(step: int) -> None:  # GPU 1 runs a job and warms up; GPU 0 idles
        fake.gpus[1].readings.update(temperature_c=45 + step // 2, power_mw=240_000, util_gpu=100)

    ticks(view, clock, 60, warm_gpu_1)
    assert set(view.samples) == {0, 1} and view.selected_gpu == 0  # the power panel's GPU, as before
    assert view.readout_frame.isHidden() and not view.gpu_rows_frame.isHidden()
    rows = {index: {k: label.text() for k, label in labels.items()} for index, labels in view.gpu_rows.items()}
    assert "GPU 0 P40" in rows[0]["name"] and "GPU 1 P40" in rows[1]["name"]
    assert (rows[0]["temperature"], rows[1]["temperature"]) == ("40 °C", "74 °C")
    assert (rows[0]["power"], rows[1]["power"], rows[1]["limit"]) == ("50 W", "240 W", "250 W")
    assert (rows[0]["util"], rows[1]["util"]) == ("0%", "100%")
    assert rows[1]["vram"] == "1.0/24.0 GiB" and rows[1]["clocks"] == "n/a"
    assert "Util GPU: 100% (mem " in view.gpu_rows[1]["util"].toolTip()  # the rest is in the tooltip

    charts = view.charts
    assert charts.shared and charts.shared_gpus == {0: "GPU 0 P40", 1: "GPU 1 P40"}
    assert not charts.gpu_legend.isHidden()
    legend = charts.gpu_legend.text()
    assert "GPU 0 P40" in legend and "GPU 1 P40" in legend
    colours = {index: charts.gpu_colour(index) for index in (0, 1)}
    palette = current_palette()
    assert colours == {0: palette.series["gpu_0"], 1: palette.series["gpu_1"]} and colours[0] != colours[1]
    assert all(colour in legend for colour in colours.values())
    image = view.grab().toImage()
    for key in ("temperature", "power", "utilisation"):
        area = plot_area(view, key)
        assert count_colour(image, area, colours[0]) > 50, key
        assert count_colour(image, area, colours[1]) > 50, key
    # The single-GPU curves are empty while every GPU is drawn: no line is drawn twice.
    assert all(len(charts.curves[f].xData or []) == 0 for f in ("temperature_c", "power_w", "gpu_util_pct"))
    top = charts.plots["temperature"].getPlotItem().getViewBox().viewRange()[1][1]
    assert top >= 97  # room above both cards' slowdown line


def test_one_gpu_looks_as_it_did(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(Nvml(FakeNvml([p40(60, 200, 90)])))
    ticks(view, clock, 3)
    assert not view.readout_frame.isHidden() and view.gpu_rows_frame.isHidden()
    assert not view.charts.shared and view.charts.gpu_legend.isHidden() and not view.charts.gpu_curves
    assert view.power_panel.cap_all_button.isHidden() and view.gpu_combo.isHidden()
    assert view.readout["temperature"].text() == "60 °C" and view.title_label.text() == "GPU 0: Tesla P40"


def test_each_gpu_alerts_on_its_own_and_the_banner_keeps_a_line_each(make_view: MakeView, clock: FakeClock) -> None:
    fake = FakeNvml([p40(60, 200, 90), p40(60, 200, 90)])
    view = make_view(Nvml(fake))
    ticks(view, clock, 2)
    fake.gpus[1].readings["temperature_c"] = 85
    ticks(view, clock, 5)
    assert [(a.kind, a.gpu_index) for a in view.alerts] == [("temperature", 1)]  # once, and GPU 1's only
    assert view.alerts[0].message.startswith("GPU 1 is at 85 °C")
    assert view.banner_text().count("\n") == 0 and "GPU 1" in view.banner_text()
    assert "⚠" in view.gpu_rows[1]["name"].text() and "⚠" not in view.gpu_rows[0]["name"].text()
    fake.gpus[0].readings["temperature_c"] = 84
    ticks(view, clock, 3)
    assert [(a.kind, a.gpu_index) for a in view.alerts] == [("temperature", 1), ("temperature", 0)]
    lines = view.banner_text().split("\n")
    assert len(lines) == 2 and "GPU 0 is at 84" in lines[0] and "GPU 1 is at 85" in lines[1]
    fake.gpus[1].readings["temperature_c"] = 60  # GPU 1 cools and re-arms; GPU 0 stays hot: no new alert
    ticks(view, clock, 3)
    fake.gpus[1].readings["temperature_c"] = 86
    ticks(view, clock, 3)
    assert [(a.kind, a.gpu_index) for a in view.alerts][-1] == ("temperature", 1) and len(view.alerts) == 3


def test_a_lost_gpu_is_said_while_the_others_are_watched(make_view: MakeView, clock: FakeClock) -> None:
    fake = FakeNvml([p40(60, 200, 90), p40(61, 200, 90)])
    view = make_view(Nvml(fake))
    ticks(view, clock, 2)
    fake.gpus[1].lost = True
    ticks(view, clock, 2)
    assert "GPU 1 fell off the bus" in view.status_label.text()
    assert view.gpu_rows[1]["temperature"].text() == "n/a" and view.gpu_rows[0]["temperature"].text() == "60 °C"
    assert [(a.kind, a.gpu_index) for a in view.alerts] == [("lost", 1)]


def test_cap_all_checks_each_card_and_says_how_each_went(qtbot: QtBot, make_view: MakeView, clock: FakeClock) -> None:
    cards = [SimulatedGpu("v100-16gb", index=0), SimulatedGpu("p40", index=1)]
    view = make_view(SimulatedSource(cards, clock=clock))
    ticks(view, clock, 2)
    panel = view.power_panel
    assert not panel.cap_all_button.isHidden() and panel.cap_all_button.isEnabled()
    # The spin box takes what one of the cards accepts: the P40's 125 W to the V100's 300 W.
    assert (panel.spin.minimum(), panel.spin.maximum()) == (125, 300)
    view.cap_watts = 280
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        panel.cap_all_button.click()
    report = done.args[0]
    assert report.outcome is Outcome.CLAMPED  # the P40 cannot take 280 W
    assert [r.index for r in report.results] == [0, 1] and [r.requested_w for r in report.results] == [280, 250]
    assert report.message.startswith("GPU 0: applied: simulated card capped at 280 W (read back 280 W); ")
    assert "GPU 1: clamped: 280 W is above this card's maximum; capping at 250 W" in report.message
    assert report.enforced_w == 280.0  # the panel's own GPU, read back
    ticks(view, clock, 2)
    assert (view.samples[0].power_limit_w, view.samples[1].power_limit_w) == (280.0, 250.0)
    view.cap_watts = 140
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        panel.cap_all_button.click()
    assert "GPU 0: clamped: 140 W is below this card's minimum; capping at 150 W" in done.args[0].message
    assert "GPU 1: applied" in done.args[0].message
    ticks(view, clock, 1)
    assert (view.samples[0].power_limit_w, view.samples[1].power_limit_w) == (150.0, 140.0)


def test_cap_all_refuses_cards_that_cannot_be_capped_and_caps_the_rest(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock
) -> None:
    cards = [SimulatedGpu("p40", index=0), SimulatedGpu("p40", index=1)]
    view = make_view(SimulatedSource(cards, clock=clock))
    ticks(view, clock, 1)
    panel = view.power_panel
    view.samples[1] = GpuSample(
        index=1, timestamp=0.0, name="Tesla P40", lost=True
    )  # fell off the bus since the last tick
    panel.set_samples(view.samples.values())
    view.cap_watts = 200
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        panel.apply_cap_all()
    report = done.args[0]
    assert report.outcome is Outcome.FAILED and [r.index for r in report.results] == [0]
    assert report.message.startswith("GPU 0: applied") and "GPU 1: the GPU fell off the bus" in report.message


def test_export_with_several_gpus_writes_every_gpu(make_view: MakeView, clock: FakeClock, tmp_path: Path) -> None:
    view = make_view(Nvml(FakeNvml([p40(60, 200, 90), p40(70, 210, 95)])))
    ticks(view, clock, 5)
    path = tmp_path / "all.csv"
    assert view.charts.export_visible_csv(path) == 5
    with path.open(newline="") as handle:
        row = next(csv.DictReader(handle))
    assert (row["gpu0_temperature_c"], row["gpu1_temperature_c"]) == ("60", "70")


def test_four_gpus_fit_at_a_small_size(make_view: MakeView, clock: FakeClock, tmp_path: Path) -> None:
    view = make_view(Nvml(FakeNvml([p40(40 + 10 * i, 100 + 30 * i, 25 * i) for i in range(4)])))
    view.resize(620, 560)
    view.show()
    ticks(view, clock, 10)
    view.grab().save(str(tmp_path / "four.png"))
    assert view.width() == 620 and len(view.gpu_rows) == 4
    assert all(view.gpu_rows[i]["name"].isVisibleTo(view) for i in range(4))
    assert [compact_sample(view.samples[i])["temperature"] for i in range(4)] == ["40 °C", "50 °C", "60 °C", "70 °C"]
    assert min(plot.height() for plot in view.charts.plots.values()) >= 64


@pytest.fixture
def chinese(qapp: Any) -> Iterator[None]:
    assert install_language("zh_CN") == "zh_CN"
    yield
    install_language("en")


def test_the_monitor_in_chinese_shows_no_english(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, chinese: None
) -> None:
    """Every widget of the view, with one GPU and with several (rows, legend, "Cap all"), and the chart titles
    drawn by pyqtgraph. The power panel's outcome line is left out of the walk: it says what the limiter and
    its helper (gui/services) answered, in their own words; its outcome word is ours and checked here."""

    def english_shown(view: MonitorView) -> list[str]:
        outcome = view.power_panel.outcome_label
        kept = outcome.text()
        outcome.setText("")
        try:
            return untranslated(view)
        finally:
            outcome.setText(kept)

    one = make_view(Nvml(FakeNvml([p40(60, 200, 90)])))
    ticks(one, clock, 2)
    assert english_shown(one) == []
    cards = [SimulatedGpu("v100-16gb", index=0), SimulatedGpu("p40", index=1)]
    view = make_view(SimulatedSource(cards, clock=clock))
    ticks(view, clock, 2)
    view.cap_watts = 280
    with qtbot.waitSignal(view.power_panel.finished, timeout=5000) as done:
        view.power_panel.cap_all_button.click()
    assert done.args[0].outcome is Outcome.CLAMPED  # the report keeps its English word; the line says it in Chinese
    assert "<b>已调整到范围内</b>" in view.power_panel.outcome_label.text()
    assert "GPU 1：已调整到范围内：" in view.power_panel.outcome_label.text()
    assert english_shown(view) == []
    assert view.power_panel.cap_all_button.text() == "全部设置上限"
    assert "GPU 0 V100-SXM2-16GB" in view.charts.gpu_legend.text()
    titles = {key: plot.getPlotItem().titleLabel.text for key, plot in view.charts.plots.items()}
    assert "温度" in titles["temperature"] and "功耗" in titles["power"] and "显存" in titles["vram"]
    assert all(not english_words(re.sub(r"<[^>]+>|&[a-z]+;", " ", t)) for t in titles.values()), titles


def test_the_video_engines_read_in_chinese(make_view: MakeView, clock: FakeClock, chinese: None) -> None:
    view = make_view(Nvml(FakeNvml([p40(60, 200, 90)])))
    ticks(view, clock, 2)
    titles = [label.text() for label in view.readout_frame.findChildren(QLabel)]
    assert "编码/解码" in titles and "Enc/dec" not in titles
    legend = view.charts.plots["utilisation"].getPlotItem().titleLabel.text
    assert "编码器" in legend and "解码器" in legend
