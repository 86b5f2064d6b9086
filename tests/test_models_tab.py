"""The library and the quant table in the window: grouping, files coming and going, Hugging Face."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from fake_hub import FakeHub, Hostile, write_small_model
from model_shapes import SHAPES, write_shape
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from window_kit import open_window

from gui.core.cards import find_card
from gui.core.gguf_reader import read_model
from gui.core.params import LoadSettings
from gui.core.planner import Verdict
from gui.services.devices import device_from_card
from gui.services.download import DownloadProgress
from gui.services.history import HistoryStore
from gui.services.hub import HubClient
from gui.services.quant_table import quant_rows
from gui.services.settings_store import SettingsStore
from gui.ui.main_window import MainWindow
from gui.ui.models_tab import COLUMNS, QuantTable
from gui.ui.plain import plain_tip
from gui.ui.vram_bar import VERDICT_COLOURS

TIMEOUT = 60_000
REPO = "someone/Qwen3.5-27B-GGUF"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    write_shape(models / "Qwen3.5-27B-Q4_K_M.gguf", SHAPES["qwen35-27b"])
    write_shape(models / "Qwen3.5-27B-Q3_K_S.gguf", SHAPES["qwen35-27b-q3ks"])
    (models / "notes.gguf").write_bytes(b"PK\x03\x04 this is a zip, not a model")
    return models


def open_quants_window(qtbot, folder: Path, tmp_path: Path, hub: FakeHub | None = None) -> MainWindow:
    win = open_window(
        qtbot,
        folder,
        folder / "Qwen3.5-27B-Q4_K_M.gguf",
        LoadSettings(n_threads=2, n_ctx=8192),
        also=lambda w: [w.features.machine.ram_measured],
        engine=FakeEngine(),
        history=HistoryStore(tmp_path / "h.sqlite3"),
        store=SettingsStore(tmp_path / "settings.json"),
        hub=HubClient(endpoint=hub.endpoint, timeout=10) if hub is not None else None,
    )
    win.plan_panel.select_target("v100-16gb")
    return win


def test_quants_of_one_model_are_grouped_and_bad_files_listed(qtbot, folder: Path, tmp_path: Path) -> None:
    win = open_quants_window(qtbot, folder, tmp_path)
    picker = win.picker
    assert [g.name for g in picker.groups] == ["Qwen3.5-27B-shaped"]
    assert [v.quant for v in picker.groups[0].variants] == ["Q4_K_M", "Q3_K_S"]
    bad = [e for e in picker.entries if e.error]
    assert [e.path.name for e in bad] == ["notes.gguf"] and "not a GGUF file" in (bad[0].error or "")
    win.close()


def test_the_quant_table_says_which_quant_fits_and_picks_it(qtbot, folder: Path, tmp_path: Path) -> None:
    win = open_quants_window(qtbot, folder, tmp_path)
    win.tabs.setCurrentWidget(win.models_tab)
    table = win.models_tab.local_table
    qtbot.waitUntil(lambda: table.rowCount() == 2 and all(r.tok_s for r in table.rows), timeout=5000)
    q4, q3 = table.rows
    assert (q4.quant, q4.fits) == ("Q4_K_M", Verdict.WONT_FIT) and not q4.all_layers
    assert (q3.quant, q3.fits) == ("Q3_K_S", Verdict.FITS)
    assert q3.max_ctx_full_offload and q3.max_ctx_full_offload >= 32768
    assert table.item(1, 4).text() == "yes" and table.item(0, 4).text() == "no"
    assert q3.tok_s and q4.tok_s and q3.tok_s > q4.tok_s  # smaller and all on the GPU: faster
    assert table.item(1, 8).text() and "quantize" in table.item(1, 8).toolTip()
    # Choosing the row selects that file and sizes the load to the card.
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        table.cellDoubleClicked.emit(1, 0)
    assert win.picker.current() is not None and win.picker.current().path.name == "Qwen3.5-27B-Q3_K_S.gguf"
    assert (
        win.features.load.plan is not None
        and win.features.load.plan.fits
        and win.features.load.plan.layers_on_gpu == 65
    )
    win.close()


def test_files_added_and_removed_are_noticed(qtbot, folder: Path, tmp_path: Path) -> None:
    win = open_quants_window(qtbot, folder, tmp_path)
    extra = write_shape(folder / "Qwen3.5-2B-Q4_K_M.gguf", SHAPES["qwen35-2b"])
    with qtbot.waitSignal(win.picker.scanned, timeout=TIMEOUT):
        win.picker.rescan()
    assert any(e.path == extra for e in win.picker.entries)
    extra.unlink()
    with qtbot.waitSignal(win.picker.scanned, timeout=TIMEOUT):
        win.picker.rescan()
    assert all(e.path != extra for e in win.picker.entries)
    # A folder the user adds is scanned and remembered.
    other = tmp_path / "more"
    other.mkdir()
    write_shape(other / "Qwen3.5-2B-Q4_K_M.gguf", SHAPES["qwen35-2b"])
    with qtbot.waitSignal(win.picker.scanned, timeout=TIMEOUT):
        win.features.library.add_model_folder(other)
    assert any(e.path.parent == other for e in win.picker.entries)
    assert str(other) in SettingsStore(tmp_path / "settings.json").model_folders
    win.close()


def test_hugging_face_repo_is_planned_from_headers_then_downloaded(qtbot, folder: Path, tmp_path: Path) -> None:
    src = tmp_path / "hub-files"
    src.mkdir()
    small = write_small_model(src / "Tiny-Q4_K_M.gguf")
    big = write_shape(src / "Qwen3.5-27B-Q3_K_S.gguf", SHAPES["qwen35-27b-q3ks"])
    with FakeHub() as hub:
        hub.add_file(REPO, "Tiny-Q4_K_M.gguf", small)
        hub.add_file(REPO, "Qwen3.5-27B-Q3_K_S.gguf", big, sha256="3" * 64)  # header-only: never downloaded
        win = open_quants_window(qtbot, folder, tmp_path, hub)
        tab = win.models_tab
        win.tabs.setCurrentWidget(tab)
        tab.repo.setText(REPO)
        with qtbot.waitSignal(tab.listed, timeout=TIMEOUT):
            tab.list_button.click()
        assert "2 GGUF file(s)" in tab.hub_status.text() and "Could not read" not in tab.hub_status.text(), (
            tab.hub_status.text()
        )
        rows = {r.label: r for r in tab.hub_table.rows}
        assert rows["Qwen3.5-27B-Q3_K_S.gguf"].fits is Verdict.FITS
        # Only the header of the 11 GiB file was asked for: every request for it carried a Range.
        big_hits = hub.cdn_hits("Qwen3.5-27B-Q3_K_S.gguf")
        assert big_hits and all(h.range and h.range.startswith("bytes=0-") for h in big_hits)

        tab.hub_table.selectRow([r.label for r in tab.hub_table.rows].index("Tiny-Q4_K_M.gguf"))
        with qtbot.waitSignal(tab.download_finished, timeout=TIMEOUT) as done:
            tab.download_button.click()
        assert done.args[0] == folder / "Tiny-Q4_K_M.gguf"
        assert (folder / "Tiny-Q4_K_M.gguf").read_bytes() == small.read_bytes()
        assert "verified" in tab.download_status.text()
        qtbot.waitUntil(lambda: any(e.path.name == "Tiny-Q4_K_M.gguf" for e in win.picker.entries), timeout=TIMEOUT)
        win.close()


def test_offline_is_said_in_words(qtbot, folder: Path, tmp_path: Path) -> None:
    win = open_quants_window(qtbot, folder, tmp_path)
    win.models_tab.client = HubClient(endpoint="http://127.0.0.1:9", timeout=3)
    win.models_tab.repo.setText(REPO)
    with qtbot.waitSignal(win.models_tab.listed, timeout=TIMEOUT):
        win.models_tab.list_button.click()
    assert "offline" in win.models_tab.hub_status.text().lower() or "reach" in win.models_tab.hub_status.text()
    assert win.picker.groups  # the rest works
    win.close()


def interrupted_download(hub: FakeHub, small: Path, folder: Path) -> None:
    """What an earlier run left: a download of ``small`` paused after its first MiB, then the window closed."""
    hub.add_file(REPO, "Tiny-Q4_K_M.gguf", small)
    client = HubClient(endpoint=hub.endpoint, timeout=10)
    (remote,) = client.list_gguf(REPO)
    paused = threading.Event()

    def pause_early(progress: DownloadProgress) -> None:
        if progress.done >= 1 << 20 and not paused.is_set():
            paused.set()
            first.pause()

    first = client.download(remote, folder, on_progress=pause_early, chunk_size=256 << 10, progress_interval_s=0.0)
    first.start()
    assert first.wait(30) and first.state == "paused"


def test_an_interrupted_download_is_offered_again_after_a_restart(qtbot, folder: Path, tmp_path: Path) -> None:
    src = tmp_path / "hub-files"
    src.mkdir()
    small = write_small_model(src / "Tiny-Q4_K_M.gguf")
    with FakeHub() as hub:
        interrupted_download(hub, small, folder)
        win = open_quants_window(qtbot, folder, tmp_path, hub)
        tab = win.models_tab
        qtbot.waitUntil(lambda: tab.pending is not None, timeout=10_000)
        assert "Interrupted download: Tiny-Q4_K_M.gguf" in tab.download_status.text()
        assert tab.pause_button.text() == "Resume" and tab.pause_button.isEnabled()
        with qtbot.waitSignal(tab.download_finished, timeout=TIMEOUT) as done:
            tab.pause_button.click()
        assert done.args[0] == folder / "Tiny-Q4_K_M.gguf"
        assert (folder / "Tiny-Q4_K_M.gguf").read_bytes() == small.read_bytes()
        assert hub.cdn_hits()[-1].range not in (None, "bytes=0-")  # it picked up where it stopped
        win.close()


def test_cancel_stops_a_slow_download_at_once_and_removes_the_partial_file(qtbot, folder: Path, tmp_path: Path) -> None:
    src = tmp_path / "hub-files"
    src.mkdir()
    small = write_small_model(src / "Tiny-Q4_K_M.gguf")
    with FakeHub() as hub:
        hub.add_file(REPO, "Tiny-Q4_K_M.gguf", small)
        win = open_quants_window(qtbot, folder, tmp_path, hub)
        tab = win.models_tab
        (remote,) = tab.client.list_gguf(REPO)
        hub.hostile = Hostile(prefix="/cdn/", trickle_bps=50)
        tab.start_download(remote)
        assert tab.cancel_button.isEnabled()
        qtbot.waitUntil(lambda: (folder / "Tiny-Q4_K_M.gguf.part.json").exists(), timeout=10_000)  # a byte came
        tab.cancel_button.click()
        qtbot.waitUntil(lambda: "cancelled" in tab.download_status.text(), timeout=1000)
        assert tab.download_status.text() == "Download of Tiny-Q4_K_M.gguf cancelled; the partial file was removed."
        assert not any(p.name.startswith("Tiny-Q4_K_M.gguf") for p in folder.iterdir())
        assert not tab.cancel_button.isEnabled() and not tab.pause_button.isEnabled()
        win.close()


def test_cancel_removes_a_download_interrupted_in_an_earlier_run(qtbot, folder: Path, tmp_path: Path) -> None:
    src = tmp_path / "hub-files"
    src.mkdir()
    small = write_small_model(src / "Tiny-Q4_K_M.gguf")
    with FakeHub() as hub:
        interrupted_download(hub, small, folder)
        win = open_quants_window(qtbot, folder, tmp_path, hub)
        tab = win.models_tab
        qtbot.waitUntil(lambda: tab.pending is not None, timeout=10_000)
        assert tab.cancel_button.isEnabled()
        tab.cancel_button.click()
        qtbot.waitUntil(lambda: "partial file was removed" in tab.download_status.text(), timeout=5000)
        assert not any(p.name.startswith("Tiny-Q4_K_M.gguf") for p in folder.iterdir())
        win.close()


def test_a_token_entered_in_the_tab_opens_a_gated_repository_for_the_session(
    qtbot, folder: Path, tmp_path: Path
) -> None:
    src = tmp_path / "hub-files"
    src.mkdir()
    small = write_small_model(src / "Tiny-Q4_K_M.gguf")
    token = "hf_typed_in_the_window_42"
    with FakeHub(token=token) as hub:
        hub.add_repo(REPO, gated=True)
        hub.add_file(REPO, "Tiny-Q4_K_M.gguf", small)
        win = open_quants_window(qtbot, folder, tmp_path, hub)
        tab = win.models_tab
        tab.repo.setText(REPO)
        with qtbot.waitSignal(tab.listed, timeout=TIMEOUT):
            tab.list_button.click()
        assert "gated repository (401)" in tab.hub_status.text() and "token" in tab.hub_status.text()

        assert tab.token.echoMode() == QLineEdit.EchoMode.Password
        tab.token.setText(token)
        with qtbot.waitSignal(tab.token_checked, timeout=10_000):
            tab.token_button.click()
        assert tab.token.text() == ""  # never shown again
        # This machine has no keyring (the tests use keyring's "fail" backend): the session only.
        assert tab.token_status.text().startswith("Token set for this session only: no system keyring"), (
            tab.token_status.text()
        )
        with qtbot.waitSignal(tab.listed, timeout=TIMEOUT):
            tab.list_button.click()
        assert "1 GGUF file(s)" in tab.hub_status.text(), tab.hub_status.text()
        qtbot.waitUntil(lambda: tab.token_status.text() == "Token: the one entered here, for this session only.")
        labels = [tab.hub_status, tab.token_status, tab.download_status, tab.local_title]
        assert not any(token in label.text() for label in labels)
        win.close()
    settings = tmp_path / "settings.json"
    assert not settings.exists() or token not in settings.read_text()


def test_names_and_messages_from_the_hub_are_shown_as_plain_text(qtbot, folder: Path, tmp_path: Path) -> None:
    src = tmp_path / "hub-files"
    src.mkdir()
    (src / "page.gguf").write_text("<html>not a model</html>")
    name = "<img src=x onerror=alert(1)>-Q4_K_M.gguf"
    with FakeHub() as hub:
        hub.add_file(REPO, name, src / "page.gguf")
        win = open_quants_window(qtbot, folder, tmp_path, hub)
        tab = win.models_tab
        labels = [tab.hub_status, tab.token_status, tab.download_status, tab.local_title]
        assert all(label.textFormat() == Qt.TextFormat.PlainText for label in labels)
        tab.repo.setText(REPO)
        with qtbot.waitSignal(tab.listed, timeout=TIMEOUT):
            tab.list_button.click()
        assert f"Could not read: {name}: " in tab.hub_status.text(), tab.hub_status.text()
        win.close()


def test_a_tooltip_shows_markup_as_text() -> None:
    assert plain_tip("<b>x</b> & y\n\ntwo") == "<p style='white-space:pre-wrap'>&lt;b&gt;x&lt;/b&gt; &amp; y\n\ntwo</p>"


def test_a_long_file_name_gives_way_in_its_middle_not_the_figures(qtbot, tmp_path: Path) -> None:
    """At 1024x600 the quant table was scrolled sideways with the names cut to their start: the name column
    takes the room that is left and loses its middle, the whole name in its tooltip."""
    long_name = "Qwen3.5-27B-Instruct-abliterated-imatrix-calibrated-" + "x" * 40 + "-Q3_K_S.gguf"
    header = read_model(write_shape(tmp_path / long_name, SHAPES["qwen35-27b-q3ks"]))
    rows = quant_rows([header], LoadSettings(n_ctx=8192), [device_from_card(find_card("v100-16gb"))])
    table = QuantTable()
    qtbot.addWidget(table)
    table.resize(560, 200)
    table.show()
    table.show_rows(rows)
    qtbot.waitUntil(lambda: table.horizontalHeader().sectionSize(0) > 0)
    assert table.textElideMode() == Qt.TextElideMode.ElideMiddle
    assert table.horizontalScrollBar().maximum() == 0  # every column in view, none pushed sideways
    name = table.item(0, 0)
    assert name is not None and long_name in name.toolTip()
    shown = table.fontMetrics().horizontalAdvance(long_name)
    assert table.horizontalHeader().sectionSize(0) < shown  # the name is what gave way


def test_a_moe_row_says_how_many_layers_experts_stay_on_the_cpu(qtbot, tmp_path: Path) -> None:
    header = read_model(write_shape(tmp_path / "Qwen3-30B-A3B-Q4_0.gguf", SHAPES["qwen3moe-30b"]))
    (row,) = quant_rows([header], LoadSettings(n_ctx=8192), [device_from_card(find_card("v100-16gb"))])
    table = QuantTable()
    qtbot.addWidget(table)
    table.show_rows([row])
    fits = table.item(0, COLUMNS.index("Fits"))
    assert fits is not None and fits.text() == f"with {row.cpu_expert_layers} layers' experts on the CPU"
    assert fits.foreground().color().name() == VERDICT_COLOURS[Verdict.FITS]
    layers = table.item(0, COLUMNS.index("GPU layers"))
    assert layers is not None and layers.text() == "all"
