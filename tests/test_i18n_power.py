"""The power cap's words in a Chinese window: the power panel on simulated cards capping one card, clamping a cap
below a card's minimum ("Cap all" over a V100 and a P40), refused for want of the helper and for want of
permission, and the sweep's and the memory check's sentences. Each is Chinese with no English left but names,
units and paths, with its watts; its English (the CLI, the logs, the reports) stays what it was."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from fake_nvml import FakeNvml
from pytestqt.qtbot import QtBot

from gui.core.memory_check import Correction, MemoryCheck
from gui.core.simulated_gpu import SimulatedGpu
from gui.services.nvml import Nvml
from gui.services.power_limit import Outcome, PowerLimiter, RunOutput
from gui.services.power_restore import Watchdog, WatchdogError
from gui.services.power_sweep import Workload
from gui.ui.i18n import core_text, error_text
from gui.ui.power_panel import PowerPanel, PowerReport
from tests.i18n_kit import chinese, english, english_words, untranslated

__all__ = ["chinese", "english"]  # fixtures, used by name

HELPER = Path(__file__).resolve().parent.parent / "packaging" / "tightfit-power-helper"


def simulated_panel(qtbot: QtBot, cards: Sequence[SimulatedGpu]) -> PowerPanel:
    limiter = PowerLimiter(simulators={card.index: card for card in cards})
    panel = PowerPanel(limiter, read_back=lambda index: cards[index].power_limit_w)
    qtbot.addWidget(panel)
    samples = [card.sample(0.0) for card in cards]
    panel.set_sample(samples[0])
    panel.set_samples(samples)
    return panel


def click(qtbot: QtBot, panel: PowerPanel, action: str) -> PowerReport:
    with qtbot.waitSignal(panel.finished, timeout=5000) as done:
        getattr(panel, action)()
    report = done.args[0]
    assert isinstance(report, PowerReport)
    return report


def chinese_shown(panel: PowerPanel) -> str:
    """The outcome line as shown, checked to be all Chinese (with the rest of the panel)."""
    shown = panel.outcome_line()
    assert english_words(shown) == [], shown
    assert untranslated(panel) == []
    return shown


# --- the panel ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_a_cap_on_the_simulated_card(qtbot: QtBot, request: pytest.FixtureRequest, language: str) -> None:
    request.getfixturevalue(language)
    panel = simulated_panel(qtbot, [SimulatedGpu("v100-16gb")])
    panel.cap_watts = 200
    report = click(qtbot, panel, "apply_cap")
    assert (report.outcome, report.message) == (Outcome.APPLIED, "simulated card capped at 200 W")
    assert panel.outcome_text() == "applied: simulated card capped at 200 W"  # the report's English, always
    if language == "english":
        assert panel.outcome_line() == "applied: simulated card capped at 200 W"
    else:
        assert chinese_shown(panel) == "已设置：模拟卡的功耗上限已设为 200 W"
    report = click(qtbot, panel, "restore_default")
    assert report.message == "GPU 0 is back at its default limit, 300 W"
    if language == "chinese":
        assert chinese_shown(panel) == "已设置：GPU 0 已恢复默认功耗上限 300 W"


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_a_cap_below_a_cards_minimum_is_clamped(qtbot: QtBot, request: pytest.FixtureRequest, language: str) -> None:
    request.getfixturevalue(language)
    # The spin box takes what one of the cards accepts: 140 W is the P40's, below the V100's 150 W.
    panel = simulated_panel(qtbot, [SimulatedGpu("v100-16gb", index=0), SimulatedGpu("p40", index=1)])
    panel.cap_watts = 140
    report = click(qtbot, panel, "apply_cap_all")
    english_line = (
        "GPU 0: clamped: 140 W is below this card's minimum; capping at 150 W; simulated card capped at 150 W "
        "(read back 150 W); GPU 1: applied: simulated card capped at 140 W (read back 140 W)"
    )
    assert (report.outcome, report.message) == (Outcome.CLAMPED, english_line)
    if language == "english":
        assert panel.outcome_line() == f"clamped: {english_line}"
    else:
        assert chinese_shown(panel) == (
            "已调整到范围内：GPU 0：已调整到范围内：140 W 低于此卡的最小值；功耗上限设为 150 W；"
            "模拟卡的功耗上限已设为 150 W（读回 150 W）；GPU 1：已设置：模拟卡的功耗上限已设为 140 W（读回 140 W）"
        )


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_a_cap_without_the_helper(qtbot: QtBot, request: pytest.FixtureRequest, language: str, tmp_path: Path) -> None:
    request.getfixturevalue(language)
    missing = tmp_path / "tightfit-power-helper"
    panel = PowerPanel(PowerLimiter(helper=missing, which={"pkexec": "/usr/bin/pkexec"}.get))
    qtbot.addWidget(panel)
    panel.set_sample(Nvml(FakeNvml.replay("nvml_v100_session.json")).sample(0))
    # Said before any click: what to install, once.
    before = panel.outcome_line()
    assert before.startswith(
        "The power cap needs its small helper" if language == "english" else "设置功耗上限需要一个小辅助程序"
    )
    assert f"tightfit-power-helper {missing} && sudo install -m 0644" in before
    panel.cap_watts = 200
    report = click(qtbot, panel, "apply_cap")
    english_message = f"the power-limit helper is not installed at {missing} (see packaging/README.md)"
    assert (report.outcome, report.message) == (Outcome.HELPER_MISSING, english_message)
    if language == "english":
        assert panel.outcome_line() == f"helper missing: {english_message}"
    else:
        assert chinese_shown(panel) == f"缺少辅助程序：功耗上限辅助程序没有安装在 {missing}（见 packaging/README.md）"


def test_no_permission_names_each_path_in_chinese(qtbot: QtBot, chinese: None) -> None:
    """Sentences inside sentences: why pkexec could not ask, sudo's refusal and where the set-up is written,
    each translated; what stays English is sudo's own words, its sudoers file and the README's section title."""
    answers = {
        "pkexec": RunOutput(127, "", "Error executing command as another user: No authentication agent found.\n"),
        "sudo": RunOutput(1, "", "sudo: a password is required\n"),
    }
    limiter = PowerLimiter(
        helper=HELPER,
        runner=lambda argv, _timeout: answers[Path(argv[0]).name],
        which={"pkexec": "/usr/bin/pkexec", "sudo": "/usr/bin/sudo"}.get,
    )
    panel = PowerPanel(limiter)
    qtbot.addWidget(panel)
    panel.set_sample(Nvml(FakeNvml.replay("nvml_v100_session.json")).sample(0))
    panel.cap_watts = 200
    report = click(qtbot, panel, "apply_cap")
    assert report.outcome is Outcome.NO_PERMISSION and report.message.startswith("pkexec found no polkit")
    shown = panel.outcome_line()
    assert shown == (
        "没有权限：pkexec 找不到可以询问密码的 polkit 认证代理，而且sudo -n 被拒绝（sudo: a password is required）："
        "请运行一个 polkit 认证代理，或者为辅助程序添加 sudoers 规则"
        "（见 packaging/README.md 中的“Without a polkit agent: sudo -n”一节）"
    )
    assert set(english_words(shown)) == {"password", "required", "sudoers", "Without", "agent"}


# --- the sweep's and the memory check's sentences ------------------------------------------------------


def test_the_sweeps_workload_in_chinese(chinese: None) -> None:
    timed, counted = Workload(90.0, 30.0), Workload(45.0, tokens=512)
    assert (timed.describe(), counted.describe()) == (
        "90 s warm-up, then 30 s measured, at each cap",
        "45 s warm-up, then 512 tokens measured, at each cap",
    )
    assert core_text("power_sweep", timed.describe()) == "每个功耗上限先预热 90 秒，再测量 30 秒"
    assert core_text("power_sweep", counted.describe()) == "每个功耗上限先预热 45 秒，再测量 512 个词元"
    with pytest.raises(ValueError) as bad:
        Workload(-1.0).validated()
    assert str(bad.value) == "the warm-up must be zero or more seconds (got -1)"
    assert error_text(bad.value, "power_sweep") == "预热时间必须是 0 秒或更长（收到 -1）"


def test_a_watchdog_that_did_not_start_is_said_in_chinese(chinese: None, tmp_path: Path) -> None:
    # A watchdog told to restore 0 W refuses its arguments: the sweep must not touch the card.
    with pytest.raises(WatchdogError) as refused:
        Watchdog.start(0, 0, token_dir=tmp_path, log_path=tmp_path / "power-restore.log")
    assert str(refused.value) == (
        "the watchdog that restores the power limit did not start (it said 'bad arguments'); the card was not changed"
    )
    assert error_text(refused.value, "power_sweep") == (
        "负责恢复功耗上限的看门狗进程没有启动（它输出了 'bad arguments'）；显卡没有被改动"
    )


def test_planned_against_measured_memory_in_chinese(chinese: None) -> None:
    check = MemoryCheck("GPU 0: Tesla V100-SXM2-16GB", 5000.0, 5230.4, 4810.0)
    assert check.describe() == (
        "Measured after loading: the driver reports 5,230 MiB for the engine on GPU 0: Tesla V100-SXM2-16GB "
        "(planned 5,000 MiB: +230 MiB, +4.6%); llama.cpp's own buffers there: 4,810 MiB."
    )
    shown = core_text("plan", check.describe())
    assert shown == (
        "加载后实测：驱动报告引擎在 GPU 0: Tesla V100-SXM2-16GB 上占用 5,230 MiB 显存（计划 5,000 MiB：差 +230 MiB，"
        "+4.6%）；llama.cpp 自己在这张卡上的缓冲区：4,810 MiB。"
    )
    assert english_words(shown) == []
    simulated = MemoryCheck("GPU 0: Tesla P40", 8000.0, 7900.0, None, simulated=True)
    assert core_text("plan", simulated.describe()).startswith("加载后实测：模拟卡报告引擎在 GPU 0: Tesla P40 上")
    assert Correction(230.0, 3).describe() == "corrected by +230 MiB from 3 loads on this card"
    assert core_text("plan", Correction(230.0, 3).describe()) == "已按此卡 3 次加载的结果修正 +230 MiB"
    assert core_text("plan", Correction(-40.0, 1).describe()) == "已按此卡 1 次加载的结果修正 -40 MiB"
