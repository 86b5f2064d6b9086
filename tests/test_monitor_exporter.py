"""Other machines' GPUs in the Monitor tab, from their exporter over real HTTP on 127.0.0.1: a row each beside this
machine's card, named by their machine, in the charts and the alerts, read-only (the power cap acts on this
machine's GPUs only, and says so); the URL typed is checked, an unreachable exporter is said in words, and a slow
one never holds the window."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from exporter_server import DCGM_P40X2, NVITOP_V100, Answer, ExporterServer, exporter_server, free_port, trickle
from fake_nvml import FakeGpu, FakeNvml
from monitor_kit import FakeClock, MakeView
from pytestqt.qtbot import QtBot

from gui.core.alerts import Alert
from gui.core.preferences import GPU_EXPORTERS
from gui.services.nvml import Nvml
from gui.services.settings_store import SettingsStore
from gui.ui.monitor import MonitorView
from tests.i18n_kit import chinese, english, english_words, untranslated

__all__ = ["chinese", "english"]  # fixtures, used by name


@pytest.fixture
def server() -> Iterator[ExporterServer]:
    with exporter_server() as running:
        yield running


def local_p40() -> Nvml:
    return Nvml(
        FakeNvml(
            [
                FakeGpu(
                    name="Tesla P40",
                    total_mib=24576.0,
                    used_mib=1024.0,
                    readings={
                        "temperature_c": 55,
                        "power_mw": 120_000,
                        "power_limit_mw": 250_000,
                        "min_limit_mw": 125_000,
                        "max_limit_mw": 250_000,
                    },
                )
            ]
        )
    )


def watched(qtbot: QtBot, view: MonitorView, clock: FakeClock, urls: list[str], gpus: int) -> None:
    """Start the view watching ``urls`` and take a tick once the exporters' GPUs (``gpus`` of them) are in."""
    view.set_exporters(urls)
    view.start()
    qtbot.waitUntil(lambda: all(s.answered for s in view.exporters.statuses()), timeout=10_000)
    assert len(view.exporters.samples()) == gpus
    clock.t += 1.0
    view.sample_now()


def row_texts(view: MonitorView) -> dict[str, dict[str, str]]:
    """Each row's texts by its GPU's name (the name without its colour mark, selection mark or alert sign)."""
    return {
        labels["name"].text().split("</span> ")[1].split(" <span")[0]: {k: v.text() for k, v in labels.items()}
        for labels in view.gpu_rows.values()
    }


def test_an_exporters_gpus_appear_beside_this_machines(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, server: ExporterServer, english: None
) -> None:
    view = make_view(local_p40())
    url = server.serve("/metrics", DCGM_P40X2)
    watched(qtbot, view, clock, [url], 2)
    rows = row_texts(view)
    assert list(rows) == ["GPU 0 P40", "gpu-box GPU 0 · Tesla P40", "gpu-box GPU 1 · Tesla P40"]
    assert view.gpu_rows[0]["name"].text().startswith("▶ ")  # the card the power cap acts on
    busy = rows["gpu-box GPU 0 · Tesla P40"]
    assert (busy["temperature"], busy["power"], busy["util"]) == ("78 °C", "187 W", "97%")
    assert (busy["vram"], busy["clocks"], busy["limit"]) == ("21.2/23.9 GiB", "1531 MHz", "n/a")
    assert view.gpu_rows_frame.isVisibleTo(view) and not view.readout_frame.isVisibleTo(view)
    # The charts draw all three, each named as in its row.
    assert list(view.charts.shared_gpus.values()) == [
        "GPU 0 P40",
        "gpu-box GPU 0 · Tesla P40",
        "gpu-box GPU 1 · Tesla P40",
    ]
    # Read-only: the power cap acts on this machine's card alone, and the window says so.
    assert view.selected_gpu == 0 and view.gpu_combo.count() == 1
    assert view.power_panel.isVisibleTo(view) and not view.power_panel.cap_all_button.isVisibleTo(view)
    assert view.remote_note.isVisibleTo(view) and "read-only" in view.remote_note.text()
    remote_row = next(labels for index, labels in view.gpu_rows.items() if index != 0)
    assert "On gpu-box, read from its exporter: read-only here (no power cap)" in remote_row["name"].toolTip()
    assert view.exporter_panel.line_text(url) == f"{url} — 2 GPUs on gpu-box, read-only"


def test_a_remote_gpus_temperature_alert_names_its_machine(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, server: ExporterServer
) -> None:
    view = make_view(local_p40())
    view.alert_threshold_c = 80.0
    url = server.serve("/metrics", NVITOP_V100)  # the V100 is at 86 °C
    raised: list[Alert] = []
    view.alert.connect(raised.append)
    watched(qtbot, view, clock, [url], 1)
    assert [(a.kind, a.message) for a in raised] == [
        ("temperature", "GPU 10.0.0.7:0 is at 86 °C (alert threshold 80 °C)")
    ]
    assert raised[0].gpu_index >= 1000 and raised[0].fields["gpu"] == "10.0.0.7:0"
    assert "GPU 10.0.0.7:0 is at 86 °C" in view.banner_text()
    clock.t += 1.0
    view.sample_now()
    assert len(raised) == 1  # once per event, as for this machine's cards


def test_only_remote_gpus_without_a_local_card(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, server: ExporterServer
) -> None:
    view = make_view(Nvml(FakeNvml([])))
    url = server.serve("/metrics", NVITOP_V100)
    watched(qtbot, view, clock, [url], 1)
    assert view.status_label.text() == "no GPU found here: showing other machines' GPUs"
    assert list(row_texts(view)) == ["10.0.0.7 GPU 0 · Tesla V100-SXM2-16GB"]
    assert not view.no_gpu_label.isVisibleTo(view) and not view.power_panel.isVisibleTo(view)
    assert view.charts.gpu_charts_visible and view.charts.gpu_index is not None


def test_an_unreachable_exporter_is_said_and_a_slow_one_does_not_hold_the_window(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, server: ExporterServer
) -> None:
    view = make_view(local_p40())
    nobody = f"http://127.0.0.1:{free_port()}/metrics"
    slow = server.serve("/metrics", Answer(stream=trickle(b"# wait\n", 0.2, 30.0)))
    view.exporters.timeout_s = 2.0
    view.set_exporters([nobody, slow])
    view.start()
    qtbot.waitUntil(lambda: view.exporters.statuses()[0].answered, timeout=10_000)
    # While the slow one is still being read, a tick takes what is known, at once.
    started = time.monotonic()
    clock.t += 1.0
    view.sample_now()
    assert time.monotonic() - started < 1.0
    assert view.exporter_panel.line_text(nobody).startswith(f"{nobody} — 127.0.0.1 cannot be read: ")
    assert "refused" in view.exporter_panel.line_text(nobody)
    assert view.exporter_panel.line_text(slow) == f"{slow} — asking…"
    qtbot.waitUntil(lambda: view.exporters.statuses()[1].answered, timeout=10_000)
    clock.t += 1.0
    view.sample_now()
    assert "cannot be read" in view.exporter_panel.line_text(slow)
    assert list(view.gpu_rows) == [0]  # no GPU of theirs was ever read


def test_the_url_typed_is_checked_kept_and_removed(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, server: ExporterServer, tmp_path: Path
) -> None:
    view = make_view(local_p40())
    panel = view.exporter_panel
    emitted: list[list[str]] = []
    view.exporters_changed.connect(emitted.append)
    panel.entry.setText("ftp://gpu-box/metrics")
    panel.add_typed()
    assert panel.note.isVisibleTo(view) and panel.note.text() == (
        "Not added: 'ftp://gpu-box/metrics': only http and https are read, not 'ftp'"
    )
    assert panel.urls() == [] and emitted == [] and not panel.list.isVisibleTo(view)
    panel.entry.setText("gpu-box:9400")
    panel.add_typed()
    assert "no http:// or https:// in front (e.g. http://gpu-box:9400/metrics)" in panel.note.text()

    url = server.serve("/metrics", DCGM_P40X2)
    panel.entry.setText(url.removesuffix("/metrics"))
    panel.add_typed()
    assert emitted == [[url]] and panel.urls() == [url] and not panel.note.isVisibleTo(view)
    assert panel.entry.text() == "" and panel.list.isVisibleTo(view)
    panel.entry.setText(url)
    panel.add_typed()
    assert panel.note.text() == f"Not added: {url} is already watched" and emitted == [[url]]

    # Kept as the window keeps it: the settings file, read back checked.
    store = SettingsStore(tmp_path / "settings.json")
    store.write(GPU_EXPORTERS, emitted[-1])
    assert SettingsStore(tmp_path / "settings.json").read(GPU_EXPORTERS) == [url]

    view.start()
    qtbot.waitUntil(lambda: len(view.exporters.samples()) == 2, timeout=10_000)
    clock.t += 1.0
    view.sample_now()
    assert len(view.gpu_rows) == 3
    panel.list.setCurrentRow(0)
    panel.remove_selected()
    assert emitted[-1] == [] and panel.urls() == []
    clock.t += 1.0
    view.sample_now()
    assert list(view.gpu_rows) == [0] and list(view.samples) == [0] and not view.remote_note.isVisibleTo(view)


def test_remote_gpus_in_chinese(
    qtbot: QtBot, make_view: MakeView, clock: FakeClock, server: ExporterServer, chinese: None
) -> None:
    view = make_view(local_p40())
    nobody = f"http://127.0.0.1:{free_port()}/metrics"
    url = server.serve("/metrics", DCGM_P40X2)
    watched(qtbot, view, clock, [url, nobody], 2)
    assert untranslated(view.exporter_panel) == []
    assert english_words(view.remote_note.text()) == []
    line = view.exporter_panel.line_text(url)
    assert "gpu-box" in line and english_words(line.split(" — ")[1].replace("gpu-box", "")) == []
    view.exporter_panel.entry.setText("ftp://gpu-box/metrics")
    view.exporter_panel.add_typed()
    note = view.exporter_panel.note.text()
    assert "'ftp://gpu-box/metrics'" in note
    assert english_words(note.replace("'ftp://gpu-box/metrics'", "").replace("'ftp'", "")) == ["http", "https"]
