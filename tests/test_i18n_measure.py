"""What the window measures, said in Chinese: the journey's "what changed" column, the power sweep's recommendation
and refusals, the Tune tab's rows and where a sweep's time went, the stats line under a chat reply, an export's notes
and a tuning card for another file. Each is a sentence composed in gui/core (its English unchanged for the CLI),
translated by template where it is shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from model_shapes import SHAPES, write_shape
from PySide6.QtCore import Qt
from window_kit import TIMEOUT as WINDOW_TIMEOUT
from window_kit import load, open_window

from gui.core.bench import BenchRow, BenchTest, plan_jobs, sweep_grid, time_summary
from gui.core.chat import format_stats
from gui.core.export import kcpps
from gui.core.gguf_reader import read_model
from gui.core.gpu_sample import GpuSample
from gui.core.journey import STAGE_COLUMNS, JourneyData
from gui.core.params import LoadSettings
from gui.core.planner import Device
from gui.core.power_sweep import SweepRow
from gui.core.protocol import ReplyStats
from gui.core.tuning_card import CardMismatch, TuningCard, check_model
from gui.core.words import joined
from gui.services.journey import JourneyStore
from gui.ui.i18n import core_text, error_text
from gui.ui.journey_view import JourneyView
from gui.ui.power_sweep_view import PowerSweepView
from gui.ui.tune_view import TuneView
from tests.i18n_kit import chinese, english, english_words
from tests.test_journey import CPU_BUILD, TIMEOUT, a_load, fill, replies, seed_story

__all__ = ["chinese", "english"]  # fixtures, used by name


# ---- the journey -------------------------------------------------------------------------------------


def _journey(qtbot, tmp_path: Path) -> JourneyView:
    """The field notes' four stages, then a fifth on the CPU build with the file read rather than mapped: a card,
    an engine and a switch that changed."""
    seed = seed_story()
    last = a_load("s5", 500, seed.loads[-1].model_path, layers=0, build=CPU_BUILD, card="CPU", use_mmap=False,
                  n_threads=8, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on")  # fmt: skip
    store = JourneyStore(tmp_path / "journey.sqlite3")
    fill(store, JourneyData(loads=[*seed.loads, last], replies=[*seed.replies, *replies("s5", 500, 3.0, 3.1)]))
    view = JourneyView(store)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.refreshed, timeout=TIMEOUT):
        view.refresh()
    return view


def _changed(view: JourneyView) -> list[str]:
    column = STAGE_COLUMNS.index("what changed")
    return [view.table.item(row, column).text() for row in range(view.table.rowCount())]


def test_the_journey_says_what_changed_in_chinese(qtbot, tmp_path: Path, chinese: None) -> None:
    view = _journey(qtbot, tmp_path)
    try:
        changed = _changed(view)
        assert len(changed) == 5
        for line in changed:
            assert english_words(line) == [], line
        assert changed[0].startswith("基线：GPU 层数 40") and "线程 16" in changed[0]
        assert "运行于 Tesla V100 SXM2 16GB" in changed[0] and "CUDA 构建 0.3.16（面向 7.0）" in changed[0]
        assert changed[1] == "GPU 层数 40 → 48；线程 16 → 8"
        assert changed[2].startswith("模型 Qwen3.5-27B-Q4_K_M.gguf → Qwen3.5-27B-Q3_K_S.gguf；")
        assert "K 缓存类型 f16 → q8_0" in changed[3]
        assert "内存映射模型文件 开启 → 关闭" in changed[4]
        assert "显卡 Tesla V100 SXM2 16GB → CPU" in changed[4]
        assert "引擎 CUDA 构建 0.3.16（面向 7.0） → CPU 构建 0.3.16" in changed[4]
        # The tooltip says the same, and the stored stage keeps its English for the exports.
        assert changed[4] in view.table.item(4, STAGE_COLUMNS.index("what changed")).toolTip()
        assert "memory-map the file on → off" in view.stages[4].changed
    finally:
        view.shutdown()


def test_the_journey_in_english_is_as_composed(qtbot, tmp_path: Path, english: None) -> None:
    view = _journey(qtbot, tmp_path)
    try:
        changed = _changed(view)
        assert changed == [s.changed for s in view.stages]
        assert changed[1] == "GPU layers 40 → 48; threads 16 → 8"
    finally:
        view.shutdown()


# ---- the power sweep -----------------------------------------------------------------------------------


def _sweep_view(qtbot) -> PowerSweepView:
    view = PowerSweepView()
    qtbot.addWidget(view)
    card = GpuSample(0, 0.0, name="Tesla V100-SXM2-16GB", power_min_w=150.0, power_max_w=300.0, power_default_w=300.0)
    view.set_card(card, 0.0)
    return view


def _row(cap_w: int, tok_s: float, power_w: float) -> SweepRow:
    return SweepRow(
        cap_w=cap_w, enforced_w=float(cap_w), tok_s=tok_s, engine_tok_s=tok_s, tokens=int(tok_s * 30), seconds=30.0,
        mean_power_w=power_w, tokens_per_joule=tok_s / power_w, end_temperature_c=60.0, mean_sm_clock_mhz=1400.0,
        throttle={}, samples=30,
    )  # fmt: skip


def test_the_power_sweep_recommends_in_chinese(qtbot, chinese: None) -> None:
    view = _sweep_view(qtbot)
    for row in (_row(300, 60.0, 280.0), _row(225, 58.2, 200.0), _row(150, 40.0, 150.0)):
        view.add_row(row)
    said = view.recommendation.text()
    assert said == "推荐：225 W：58.2 tok/s，比最佳（300 W 时 60.0 tok/s）低 3.0%，功耗少 29%。"
    assert english_words(said) == []
    assert view.table.item(0, 2).text() == "最佳"
    # What applying it did follows the recommendation, which stays whole.
    view.say_applied("已应用")
    assert view.recommendation.text() == f"{said}——已应用"
    view.say_applied("又一次")
    assert view.recommendation.text() == f"{said}——又一次"
    # A list the card cannot take is refused in the window's language.
    view.caps.setText("200, abc")
    assert view.summary.text() == "'abc' 不是瓦数：请列出整数瓦数，例如 150,175,200 或 150-250/25"
    view.caps.setText("100,200")
    assert view.summary.text() == "100 W 低于这张显卡的最低功耗上限（150-300 W，默认 300 W）"
    assert english_words(view.summary.text()) == []


def test_the_power_sweep_in_english_is_as_composed(qtbot, english: None) -> None:
    view = _sweep_view(qtbot)
    for row in (_row(300, 60.0, 280.0), _row(225, 58.2, 200.0)):
        view.add_row(row)
    said = view.recommendation.text()
    assert said == "Recommended: 225 W: 58.2 tok/s, 3.0% below the best (60.0 tok/s at 300 W), 29% less power."
    view.say_applied("applied: capped at 225 W")
    assert view.recommendation.text() == f"{said} — applied: capped at 225 W"


# ---- the Tune tab ----------------------------------------------------------------------------------------

BASE = LoadSettings(n_threads=2, n_ctx=1024)


@pytest.fixture(scope="module")
def big_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 27B-shaped header-only file: planned, never loaded."""
    return write_shape(tmp_path_factory.mktemp("m") / "Qwen3.5-27B-Q4_K_M.gguf", SHAPES["qwen35-27b"])


def _rows(big_model: Path) -> list[BenchRow]:
    """Two measured tests, and one the planner skipped as too big for the card."""
    (job,) = plan_jobs(
        read_model(big_model),
        sweep_grid(BASE, {"n_gpu_layers": [999]}),
        [Device("Tesla P40", 4096.0, 4096.0, bandwidth_gbs=300.0)],
        1024.0,
        50.0,
        anyway=False,
    )
    assert job.skip
    return [
        BenchRow("m.gguf", BenchTest(512, 0), BASE, 2, samples_ns=(1_000_000_000, 1_000_000_000)),
        BenchRow("m.gguf", BenchTest(0, 128), BASE, 1, samples_ns=(1_000_000_000,)),
        BenchRow("m.gguf", BenchTest(512, 0), job.config.settings, 1, skipped=True, reason=job.skip),
    ]


def test_the_tune_tab_says_where_the_time_went_in_chinese(qtbot, big_model: Path, chinese: None) -> None:
    view = TuneView()
    qtbot.addWidget(view)
    rows = _rows(big_model)
    for row in rows:
        view.add_row(row, "ngl 999")
    view.say_finished(False, time_summary(rows, 10.0))
    summary = view.summary.text()
    assert summary.startswith(
        "完成：共测 2 项，用时 10.0 s，其中 3.0 s 用于计时重复；其余时间（预热、填充深度、加载）每个配置 7.0 s。"
    )
    assert english_words(summary) == [], summary
    skipped = view.table.item(2, view.table.columnCount() - 1).text()
    assert skipped.startswith("放不下：Tesla P40 需要 ") and "MiB，空闲 4,096 MiB" in skipped
    assert skipped.endswith("（加 --anyway 仍会运行）") and english_words(skipped) == []


def test_the_tune_tab_in_english_is_as_composed(qtbot, big_model: Path, english: None) -> None:
    view = TuneView()
    qtbot.addWidget(view)
    rows = _rows(big_model)
    view.add_row(rows[2], "ngl 999")
    view.say_finished(True, time_summary(rows, 10.0))
    assert view.summary.text() == (
        "Stopped: 2 tests measured in 10.0 s, 3.0 s of it in the timed repetitions; the rest (warm-ups, depths, "
        "loads) 7.0 s per configuration. Select a row and Apply to put its settings on the sliders."
    )
    assert view.table.item(0, view.table.columnCount() - 1).text() == rows[2].reason


# ---- the chat --------------------------------------------------------------------------------------------


def test_the_stats_line_under_a_reply_is_in_chinese(qtbot, demo_folder: Path, demo_model: Path, chinese: None) -> None:
    win = open_window(qtbot, demo_folder, demo_folder / demo_model.name, engine=FakeEngine("one two three four"))
    try:
        load(qtbot, win)
        with qtbot.waitSignal(win.chat.reply_finished, timeout=WINDOW_TIMEOUT) as done:
            win.chat.input.setPlainText("你好")
            qtbot.mouseClick(win.chat.send_button, Qt.MouseButton.LeftButton)
        stats: ReplyStats = done.args[0]
        english = format_stats(stats)  # the CLI's line, unchanged
        assert english.startswith(f"{stats.n_gen} tokens · first token ")
        under = win.chat.stats_label.text().replace("\u2060", "")  # "tok/s" is kept on one line
        assert (
            under.startswith(f"{stats.n_gen} 个词元 · 首个词元 ") and "提示词 " in under and "tok/s（计算了 " in under
        )
        assert english_words(under) == [], under
        transcript = win.chat.transcript.toPlainText().replace("\u2060", "")
        assert under in transcript  # the same line under the reply in the transcript
    finally:
        win.close()


def test_a_grid_the_tune_tab_refuses_is_said_in_chinese(qtbot, chinese: None) -> None:
    view = TuneView()
    qtbot.addWidget(view)
    view.grid.setText("nonsense=1,2")
    with pytest.raises(ValueError, match="no setting called 'nonsense'") as refused:
        view.parsed()
    view.say_error(refused.value)
    assert view.summary.text().startswith("没有名为 'nonsense' 的设置（可用：")


# ---- exports and tuning cards ---------------------------------------------------------------------------


def test_export_notes_and_a_card_for_another_file_are_in_chinese(chinese: None) -> None:
    settings = LoadSettings(n_batch=512, n_ubatch=256, flash_attn="auto", n_parallel=2)
    notes = kcpps("/models/m.gguf", settings).notes
    assert "koboldcpp serves one request at a time: 2 parallel slots not written" in notes  # English, as the CLI has it
    shown = core_text("export", joined("; ", notes))
    assert "koboldcpp 没有微批：它一次计算整个批（512），而不是 256" in shown
    assert "koboldcpp 一次只处理一个请求：2 个并行槽位未写入" in shown
    assert english_words(shown) == [], shown
    card = TuningCard("m.gguf", "2" * 64, settings, None)
    with pytest.raises(CardMismatch) as mismatch:
        check_model(card, "1" * 64, "n.gguf")
    said = error_text(mismatch.value, "export")
    assert said == (
        "模型的 SHA-256 不符：这张卡是给 'm.gguf' 的（SHA-256 2222222222222222…），"
        "这个文件 'n.gguf' 是 1111111111111111…"
    )
