"""The engine's, the settings file's and the Serve tab's messages in a Chinese window: why a load failed (read from
llama.cpp's log, and carried from the engine process to the window), a damaged settings file set aside, and the
Serve tab refusing an address. Each is Chinese with no English left but names, units and paths, while its English
(the CLI, the log) stays what it was."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import socket
from pathlib import Path

from pytestqt.qtbot import QtBot

from gui.core import protocol as p
from gui.core.llama_log import exit_reason, explain_failure
from gui.services.api_server import bind_error
from gui.services.engine_worker import _in_words
from gui.services.settings_store import SettingsStore
from gui.ui.i18n import core_text
from gui.ui.serve_panel import ServePanel
from tests.i18n_kit import chinese, english_words
from tests.test_llama_log import WEIGHTS_OOM

__all__ = ["chinese"]  # a fixture, used by name


def test_why_a_load_failed_reaches_the_window_in_chinese(chinese: None) -> None:
    # The worker words the cause from llama.cpp's log and sends it over the pipe, as a failed load does.
    sending, receiving = mp.Pipe()
    sending.send(p.wrap(p.LoadFailed("/models/big.gguf", _in_words("llama.cpp could not load the model", WEIGHTS_OOM))))
    failed = p.unwrap(receiving.recv())
    assert failed.error == "CUDA ran out of memory allocating 144,817 MiB for the model weights on GPU 1."
    shown = core_text("engine", failed.error)
    assert shown == "CUDA 显存不足，分配 144,817 MiB 失败（用于模型权重），位于 GPU 1。"
    assert english_words(shown) == []


def test_how_the_engine_ended_and_why_in_chinese(chinese: None) -> None:
    reason = exit_reason(-9)
    assert reason == "The engine process was killed (SIGKILL)."
    assert core_text("engine", reason) == "引擎进程被强制结束（SIGKILL）。"
    failure = explain_failure([], -9, oom_killed=True)
    shown = core_text("engine", failure.summary)
    assert shown == "系统的 OOM 杀手结束了它：内存已耗尽。"
    assert english_words(shown) == []


def test_a_damaged_settings_file_set_aside_is_said_in_chinese(chinese: None, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b"{not json")
    store = SettingsStore(path)
    (backup,) = tmp_path.glob("settings.json.*.bad")
    assert store.warning == (
        f"Your settings file {path} was damaged (Expecting property name enclosed in double quotes: line 1 column 2 "
        f"(char 1)): the defaults are used, and the bad file is kept as {backup}."
    )
    shown = core_text("settings", store.warning)
    assert shown == (
        f"设置文件 {path} 已损坏（此处应为双引号括起的属性名：第 1 行第 2 列（第 1 个字符））：现使用默认设置，"
        f"损坏的文件已另存为 {backup}。"
    )
    assert english_words(shown) == []


def test_the_serve_tab_refuses_an_address_in_chinese(chinese: None, qtbot: QtBot) -> None:
    panel = ServePanel()
    qtbot.addWidget(panel)
    panel.host.setText("0.0.0.0")
    panel.allow_remote.setChecked(False)
    refused = panel.warning.text()
    assert refused == "0.0.0.0 会让其他机器使用此模型；如确有此意，请勾选“允许其他机器”（并设置 API 密钥）"
    assert english_words(refused) == [] and not panel.serve_button.isEnabled()
    panel.allow_remote.setChecked(True)
    warned = panel.warning.text()
    assert warned == "正在监听 0.0.0.0：能访问到它的其他机器都可以使用此模型，且没有 API 密钥时任何人都可以使用。"
    assert english_words(warned) == [] and panel.serve_button.isEnabled()
    panel.host.setText("")
    assert panel.warning.text() == "监听地址为空（127.0.0.1：仅限本机）"


def test_an_address_in_use_is_said_in_chinese(chinese: None) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]

    async def listen() -> OSError:
        try:
            await asyncio.get_running_loop().create_server(asyncio.Protocol, "127.0.0.1", port)
        except OSError as exc:
            return exc
        raise AssertionError("a port in use was listened on")

    try:
        said = asyncio.run(listen())
    finally:
        taken.close()
    error = bind_error(said)
    assert str(error) == str(said) and error.errno == said.errno  # the English, as asyncio wrote it
    assert error.strerror is not None
    shown = core_text("serve_panel", error.strerror)
    assert shown == f"绑定地址 ('127.0.0.1', {port}) 时出错：地址已被占用"
    assert english_words(shown) == []
