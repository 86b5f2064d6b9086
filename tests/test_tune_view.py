"""The Tune tab: a sweep planned before it starts, run on the window's one engine with rows and a chart filling in,
Apply, Stop keeping what was measured, and chat saying why it waits meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from window_kit import TIMEOUT, load, open_window

from gui.core.bench import BenchRow, BenchTest, Config, Job
from gui.core.params import LoadSettings
from gui.core.words import words
from gui.services.bench_run import BenchRun
from gui.ui.tune_view import TuneView
from tests.i18n_kit import chinese, english, english_words

__all__ = ["chinese", "english"]  # fixtures, used by name


def set_sweep(win, grid: str, pp: int, tg: int, reps: int | None = None) -> None:
    tune = win.tune
    tune.grid.setText(grid)
    tune.pp.setValue(pp)
    tune.tg.setValue(tg)
    if reps is not None:
        tune.reps.setValue(reps)


def tune_window(qtbot, demo_folder: Path, demo_model: Path, engine=None):
    engine = engine or FakeEngine()
    win = open_window(
        qtbot, demo_folder, demo_folder / demo_model.name, LoadSettings(n_threads=2, n_ctx=1024), engine=engine
    )
    win.tabs.setCurrentWidget(win.tune_pages)
    return win, engine


def test_the_sweep_is_planned_before_it_starts_and_bad_grids_are_said(
    qtbot, demo_folder: Path, demo_model: Path
) -> None:
    win, _engine = tune_window(qtbot, demo_folder, demo_model)
    tune = win.tune
    set_sweep(win, "threads=1,2; flash-attn=on,off", 16, 4)
    assert "4 configurations × 2 tests, 2 loads" in tune.summary.text()
    assert "about" not in tune.summary.text()  # no speed measured yet: no made-up time
    tune.grid.setText("threads=1,x")
    assert "'x' is not a whole number" in tune.summary.text() and not tune.start_button.isEnabled()
    tune.grid.setText("turbo=on")
    assert "no setting called 'turbo'" in tune.summary.text()
    # A grid is planned as it is typed: one too large to plan at once is said, not attempted.
    tune.grid.setText("threads=" + ",".join(str(n) for n in range(1, 65)) + "; batch=64,128,256")
    assert "192 configurations is more than one sweep here takes (128)" in tune.summary.text()
    assert not tune.start_button.isEnabled()
    win.close()


def test_a_sweep_fills_the_table_and_chart_and_apply_sets_the_sliders(
    qtbot, demo_folder: Path, demo_model: Path
) -> None:
    win, engine = tune_window(qtbot, demo_folder, demo_model)
    tune = win.tune
    set_sweep(win, "threads=1,2", 16, 4, 2)
    with qtbot.waitSignal(win.features.tune.sweep_finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(tune.start_button, Qt.MouseButton.LeftButton)
    rows: list[BenchRow] = done.args[0]
    assert [(r.test.name, r.settings.n_threads) for r in rows] == [("pp16", 1), ("tg4", 1), ("pp16", 2), ("tg4", 2)]
    assert all(len(r.samples_ns) == 2 and not r.skipped for r in rows)
    assert [b.n_threads for b in engine.benches] == [1, 1, 2, 2]
    assert len(engine.loads) == 1  # threads change without a reload
    assert tune.table.rowCount() == 4 and tune.table.item(0, 0).text() == "threads 1"
    assert tune.table.item(0, 2).text() == "1,000.0"  # the fake engine's speed
    xs, ys = tune._points["tg"]
    assert xs == [2.0, 4.0] and ys == [1000.0, 1000.0]
    assert "Done: 4 tests measured" in tune.summary.text() and tune.start_button.isEnabled()
    tune.table.selectRow(2)
    qtbot.mouseClick(tune.apply_button, Qt.MouseButton.LeftButton)
    assert win.params.settings().n_threads == 2
    win.close()


def test_stop_keeps_what_was_measured_and_chat_says_why_it_waits(qtbot, demo_folder: Path, demo_model: Path) -> None:
    engine = FakeEngine()
    engine.bench_rep_s = 0.2
    win, _ = tune_window(qtbot, demo_folder, demo_model, engine)
    load(qtbot, win)
    tune = win.tune
    set_sweep(win, "threads=1,2", 16, 0, 5)
    qtbot.mouseClick(tune.start_button, Qt.MouseButton.LeftButton)
    assert tune.stop_button.isEnabled() and not tune.start_button.isEnabled()
    # The chat shares the engine: a message now is not sent, and says why.
    win.chat.input.setPlainText("Hello")
    win.chat.send()
    assert "benchmark sweep is using the engine" in win.chat.notice.text()
    assert win.chat.input.toPlainText() == "Hello" and not engine.requests
    assert win.features.tune.runner is not None
    with qtbot.waitSignal(win.features.tune.runner.progress, timeout=TIMEOUT):  # the first repetition is in
        pass
    with qtbot.waitSignal(win.features.tune.sweep_finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(tune.stop_button, Qt.MouseButton.LeftButton)
    rows: list[BenchRow] = done.args[0]
    assert len(rows) == 1 and rows[0].partial and 0 < len(rows[0].samples_ns) < 5
    assert "Stopped: 1 test measured in" in tune.summary.text()
    assert win.chat.engine_busy == ""  # chat may use the engine again
    win.close()


def test_an_engine_that_dies_mid_sweep_ends_it_keeping_the_rows(qtbot, demo_folder: Path, demo_model: Path) -> None:
    engine = FakeEngine()
    engine.bench_rep_s = 0.2
    win, _ = tune_window(qtbot, demo_folder, demo_model, engine)
    load(qtbot, win)
    tune = win.tune
    set_sweep(win, "threads=1,2", 16, 0, 2)
    with qtbot.waitSignal(win.features.tune.sweep_finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(tune.start_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(engine.benches) == 2, timeout=TIMEOUT)  # the first test is done
        engine.kill("killed by a test")
    rows: list[BenchRow] = done.args[0]
    assert len(rows[0].samples_ns) == 2 and not rows[0].skipped
    assert rows[-1].skipped and "the engine stopped" in rows[-1].reason
    assert "Stopped:" in tune.summary.text() and tune.start_button.isEnabled() and win.chat.engine_busy == ""
    win.close()


def test_a_load_that_failed_is_not_tried_again_with_other_threads(qtbot, demo_folder: Path, demo_model: Path) -> None:
    engine = FakeEngine()
    engine.load_error = lambda s: "llama.cpp could not load the model" if s.n_batch == 128 else ""
    win, _ = tune_window(qtbot, demo_folder, demo_model, engine)
    set_sweep(win, "batch=128,256; threads=1,2", 16, 0, 1)
    with qtbot.waitSignal(win.features.tune.sweep_finished, timeout=TIMEOUT) as done:
        qtbot.mouseClick(win.tune.start_button, Qt.MouseButton.LeftButton)
    rows: list[BenchRow] = done.args[0]
    assert [(r.settings.n_batch, r.settings.n_threads, r.skipped) for r in rows] == [
        (128, 1, True), (128, 2, True), (256, 1, False), (256, 2, False),
    ]  # fmt: skip
    assert rows[0].reason == rows[1].reason == "could not load: llama.cpp could not load the model"
    assert [s.n_batch for _, s in engine.loads] == [128, 256]  # batch 128 with 2 threads: not loaded again
    assert "Done: 2 tests measured" in win.tune.summary.text()
    win.close()


@pytest.mark.engine
def test_a_sweep_on_the_real_engine(qtbot, demo_folder: Path, demo_model: Path) -> None:
    # The decode ceiling on the CPU needs the RAM bandwidth, measured once at start.
    win = open_window(
        qtbot,
        demo_folder,
        demo_folder / demo_model.name,
        LoadSettings(n_threads=1, n_ctx=512),
        also=lambda w: [w.features.machine.ram_measured],
    )
    tune = win.tune
    set_sweep(win, "threads=1", 16, 4, 2)
    with qtbot.waitSignal(win.features.tune.sweep_finished, timeout=TIMEOUT) as done:
        tune.start_requested.emit()
    rows: list[BenchRow] = done.args[0]
    assert [r.test.name for r in rows] == ["pp16", "tg4"]
    for row in rows:
        assert row.avg_ts is not None and row.avg_ts > 0 and row.peak_rss_mib is not None and row.peak_rss_mib > 50
        assert row.backend == "CPU" and row.ceiling_tok_s
    assert rows[1].pct_of_ceiling is not None
    win.close()


def _refused_rows() -> list[BenchRow]:
    """The shared runner's reasons for two configurations whose loads failed, one in the engine's words and one
    without a word from it, as `tightfit bench` and the Tune tab both make them."""
    settings = LoadSettings(n_threads=2, n_ctx=1024)
    jobs = [Job(Config(settings)), Job(Config(settings.with_values(n_batch=256)))]
    run = BenchRun(Path("m.gguf"), jobs, [BenchTest(16, 0)], 1)
    run.start()
    run.load_failed(words("llama.cpp could not load the model"))
    run.load_failed("")
    return run.rows


def test_the_runners_reasons_read_in_chinese_in_the_table(qtbot, chinese: None) -> None:
    view = TuneView()
    qtbot.addWidget(view)
    for row in _refused_rows():
        view.add_row(row, "batch 512")
    notes = [view.table.item(i, view.table.columnCount() - 1).text() for i in range(2)]
    assert notes == ["无法加载：llama.cpp 无法加载该模型", "无法加载：引擎已停止"]
    assert all(english_words(note) == [] for note in notes)


def test_the_runners_reasons_in_english_are_the_clis(qtbot, english: None) -> None:
    view = TuneView()
    qtbot.addWidget(view)
    rows = _refused_rows()
    for row in rows:
        view.add_row(row, "batch 512")
    notes = [view.table.item(i, view.table.columnCount() - 1).text() for i in range(2)]
    assert notes == ["could not load: llama.cpp could not load the model", "could not load: the engine stopped"]
    assert notes == [str(row.reason) for row in rows]
