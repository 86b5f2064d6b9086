"""Refusals of typed settings and the RPC workers' problems in a Chinese window: the words gui/core/specs.py,
gui/core/params.py and gui/services/rpc.py compose from what was typed and found are translated by template,
with the setting's label as the settings panel names it; the English (CLI, logs) is unchanged."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication
from test_rpc_window import SETTINGS, add_worker, models, two_gpu_window, type_split
from window_kit import open_window

from gui.core.params import LOAD_SPECS, SPECS_BY_KEY, LoadSettings, changes, describe, rpc_endpoints
from gui.services.rpc import free_port, unreachable
from gui.ui.i18n import core_text, error_text
from tests.fake_engine import FakeEngine
from tests.i18n_kit import chinese, english_words

__all__ = ["chinese", "models"]  # fixtures, used by name


def test_a_refused_tensor_split_is_said_in_chinese_and_the_old_value_kept(qtbot, models, chinese: None) -> None:
    win = two_gpu_window(qtbot, models)
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        type_split(qtbot, win, "3/1")
    type_split(qtbot, win, "3,x")
    note = win.params.note.text()
    assert note.startswith("张量切分：") and "'x' 不是数字" in note, note
    assert english_words(note) == [], note
    assert win.params.settings().tensor_split == "3,1"
    win.close()


def test_an_unreachable_worker_and_a_bad_address_are_said_in_chinese(qtbot, models, chinese: None) -> None:
    win = open_window(qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=FakeEngine())
    endpoint = f"127.0.0.1:{free_port('127.0.0.1')}"  # nothing listens there once the probe socket is closed
    add_worker(qtbot, win, endpoint)
    said = win.plan_panel.remote_label.text()
    assert f"RPC 服务器 {endpoint} 拒绝了连接" in said and english_words(said) == [], said
    assert english_words(win.params.rpc.list.item(0).toolTip()) == []
    win.params.rpc.entry.setText("10.0.0.256:50052")
    win.params.rpc.add_button.click()
    refused = win.params.rpc.note.text()
    assert "不是 IPv4 地址" in refused and english_words(refused) == [], refused
    win.close()


@pytest.mark.parametrize(
    ("value", "chinese_words"),
    [
        ("", "空项"),
        ("a:1,a:1", "重复填写"),
        ("10.0.0.5", "没有端口"),
        ("[::1]:5", "IPv6"),
        ("h:99999", "端口须为"),
        (",".join(f"h{i}:1" for i in range(17)), "最多支持 16 个"),
    ],
)
def test_every_rpc_refusal_reads_in_chinese(value: str, chinese_words: str, chinese: None) -> None:
    with pytest.raises(ValueError) as refused:
        rpc_endpoints(value or ",")
    shown = error_text(refused.value, "params")
    assert chinese_words in shown and english_words(shown) == [], shown
    assert str(refused.value).startswith("RPC servers")  # the English, for the CLI


def test_range_and_type_refusals_name_the_setting_as_the_panel_does(chinese: None) -> None:
    n_ctx = SPECS_BY_KEY["n_ctx"]
    label = QCoreApplication.translate("params", n_ctx.label)
    for bad in (10**9, 1.5, "x"):
        with pytest.raises(ValueError) as refused:
            n_ctx.parse(bad)
        shown = error_text(refused.value)
        assert shown.startswith(label) and english_words(shown) == [], shown
    with pytest.raises(ValueError) as refused:
        LoadSettings(n_batch=256, n_ubatch=512).validated()
    assert error_text(refused.value) == "微批大小（512）不能超过批大小（256）"


def test_the_lists_of_settings_read_in_chinese_and_stay_english_for_the_cli(chinese: None) -> None:
    before, after = LoadSettings(n_ctx=8192, n_gpu_layers=65), LoadSettings(n_ctx=4096, n_gpu_layers=56)
    moved = changes(before, after)
    assert str(moved) == "GPU layers 65 → 56, context 8192 → 4096"
    shown = core_text("main_window", moved)
    assert "65 → 56" in shown and "上下文 8192 → 4096" in shown and "，" in shown and english_words(shown) == []
    assert english_words(core_text("main_window", changes(before, before))) == []
    listed = core_text("journey", describe(after))
    assert english_words(listed) == [] and "4096" in listed
    assert all(core_text("params", s.label) for s in LOAD_SPECS)


def test_an_unreachable_server_list_is_one_translated_line(chinese: None) -> None:
    ports = [free_port("127.0.0.1") for _ in range(2)]
    why = unreachable(",".join(f"127.0.0.1:{p}" for p in ports), timeout_s=2.0)
    assert str(why).count("refused the connection") == 2
    shown = core_text("rpc", why)
    assert shown.count("拒绝了连接") == 2 and "；" in shown and english_words(shown) == [], shown
