"""The Serve tab: the window's own engine served to OpenAI's client, in the window's asyncio loop (qasync, as
`tightfit` runs it); chat and API requests take turns on the one engine, each saying why it waits."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import openai
import qasync
from fake_engine import FakeEngine
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from window_kit import load, open_window

from gui.app import signal_future
from gui.core.params import LoadSettings
from gui.core.preferences import SERVE_STRICT_MODEL

MODEL_ID = "SmolLM2-135M-Instruct.Q4_1"


def in_the_windows_loop(scenario: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``scenario`` in a qasync loop on the Qt event loop, as the window runs."""
    loop = qasync.QEventLoop(QApplication.instance())
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(asyncio.wait_for(scenario(), 120))
    finally:
        loop.close()
        asyncio.set_event_loop(None)


async def until(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    for _ in range(int(timeout_s / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition did not come true in time")


async def serve(qtbot, win) -> str:
    panel = win.serve_panel
    panel.host.setText("127.0.0.1")
    panel.port.setValue(0)  # a free port
    listening = signal_future(win.features.serve.serving_changed)
    qtbot.mouseClick(panel.serve_button, Qt.MouseButton.LeftButton)
    address = await listening
    assert address is not None, panel.status.text()
    host, port = address
    return f"http://{host}:{port}/v1"


def test_the_loaded_model_is_served_to_openais_client_and_shows_in_the_window(
    qtbot, demo_folder: Path, demo_model: Path
) -> None:
    engine = FakeEngine("Hello from a test engine.")
    engine.decode_tok_s = 55.0
    win = open_window(
        qtbot, demo_folder, demo_folder / demo_model.name, LoadSettings(n_threads=2, n_ctx=1024), engine=engine
    )
    load(qtbot, win)
    panel = win.serve_panel
    rates: list[Any] = []
    win.monitor.set_engine_rate = rates.append  # what the monitor's tok/s chart is given
    journeyed: list[Any] = []
    win.journey.recorder.record_reply = lambda stats, _state, here=True: journeyed.append(stats)

    async def scenario() -> None:
        base = await serve(qtbot, win)
        assert panel.status.text() == f"Listening on {base} — {MODEL_ID}. 0 running, 0 waiting."
        assert f"Base URL: {base}    Model: {MODEL_ID}    API key: none" in panel.usage.toPlainText()
        assert not panel.host.isEnabled() and panel.serve_button.text() == "&Stop serving"
        client = openai.AsyncOpenAI(base_url=base, api_key="unused", max_retries=0)
        models = await client.models.list()
        assert [m.id for m in models.data] == [MODEL_ID]
        reply = await client.chat.completions.create(
            model=MODEL_ID, messages=[{"role": "user", "content": "Hi"}], max_tokens=20
        )
        assert reply.choices[0].message.content == "Hello from a test engine."
        assert reply.usage is not None and reply.usage.completion_tokens == 5
        await until(lambda: panel.requests.rowCount() == 1)
        # endpoint, prompt tokens (the fake engine counts 4 per message and 1 per word), generated, tok/s, end
        assert [panel.requests.item(0, c).text() for c in range(1, 6)] == ["chat", "5", "5", "55.0", "stop"]
        assert 55.0 in rates  # the API reply's rate reached the monitor's chart
        await client.close()
        stopped = signal_future(win.features.serve.serving_changed)
        qtbot.mouseClick(panel.serve_button, Qt.MouseButton.LeftButton)
        assert await stopped is None
        assert panel.status.text() == "Not serving." and panel.host.isEnabled()

    in_the_windows_loop(scenario)
    assert [stats.engine_decode_tok_s for stats in journeyed] == [55.0]  # in the journey, like a chat reply
    win.close()


def test_chat_and_the_api_take_turns_on_the_one_engine(qtbot, demo_folder: Path, demo_model: Path) -> None:
    engine = FakeEngine(" ".join(["word"] * 1500))  # a long reply: about 3 s at 2 ms a token
    win = open_window(
        qtbot, demo_folder, demo_folder / demo_model.name, LoadSettings(n_threads=2, n_ctx=4096), engine=engine
    )
    load(qtbot, win)
    panel, chat = win.serve_panel, win.chat
    rates: list[Any] = []
    win.monitor.set_engine_rate = rates.append  # what the monitor's tok/s chart is given

    async def scenario() -> None:
        base = await serve(qtbot, win)
        client = openai.AsyncOpenAI(base_url=base, api_key="unused", max_retries=0)
        stream = await client.completions.create(model=MODEL_ID, prompt="Once", max_tokens=1500, stream=True)
        chunks = stream.__aiter__()
        await chunks.__anext__()  # the API reply is under way
        # The chat waits, says why, and keeps the message.
        chat.input.setPlainText("Are you there?")
        chat.send()
        assert not chat.streaming and chat.input.toPlainText() == "Are you there?"
        assert chat.notice.text() == (
            "Not sent: An API request is being answered (Serve tab): send when it ends, or stop it there. "
            "Your message is kept in the box."
        )
        # And says it while the API reply runs, above the message box, without anything being sent.
        assert chat.engine_line.isVisibleTo(win) and chat.engine_line.text().startswith("An API request")
        read = 0
        async for _chunk in chunks:
            read += 1
            if read == 1200:  # over 2 s into the reply: the monitor's chart has had its live rate
                assert any(rate and rate > 0 for rate in rates), rates
        await until(lambda: not chat.engine_busy)
        assert not chat.engine_line.isVisibleTo(win)
        # Now the chat has the engine, and an API request waits for it, saying so.
        chat.send()
        assert chat.streaming
        waiting = asyncio.ensure_future(client.completions.create(model=MODEL_ID, prompt="Hi", max_tokens=3))
        await until(lambda: win.features.serve.api is not None and win.features.serve.api.queued == 1)
        assert win.features.serve.api.held == "a chat reply" and not waiting.done()
        await until(lambda: "1 waiting (the window is using the engine: a chat reply)" in panel.status.text())
        answer = await waiting  # once the chat's reply ends
        assert not chat.streaming and answer.usage is not None
        await client.close()
        win.features.serve.stop()

    in_the_windows_loop(scenario)
    win.close()


def test_other_machines_need_consent_and_a_taken_port_is_said(qtbot, demo_folder: Path, demo_model: Path) -> None:
    win = open_window(qtbot, demo_folder, demo_folder / demo_model.name, engine=FakeEngine())
    panel = win.serve_panel
    panel.host.setText("0.0.0.0")
    assert not panel.serve_button.isEnabled()
    assert panel.warning.text().startswith("0.0.0.0 would let other machines use the model; allow other machines")
    panel.allow_remote.setChecked(True)
    assert panel.serve_button.isEnabled()
    assert panel.warning.text() == (
        "Listening on 0.0.0.0: other machines that reach it can use the model, and without an API key anyone can."
    )
    panel.api_key.setText("secret")
    assert panel.warning.text() == "Listening on 0.0.0.0: other machines that reach it can use the model."
    panel.host.setText("")
    assert not panel.serve_button.isEnabled() and "empty" in panel.warning.text()

    async def scenario() -> None:
        panel.allow_remote.setChecked(False)
        first = await serve(qtbot, win)
        port = int(first.rsplit(":", 1)[1].split("/")[0])
        taken = win.features.serve.api
        win.features.serve.api = None  # as a second window would: the same port, while the first listens
        panel.set_serving(None)
        panel.port.setValue(port)
        failed = signal_future(win.features.serve.serving_changed)
        qtbot.mouseClick(panel.serve_button, Qt.MouseButton.LeftButton)
        assert await failed is None
        assert panel.status.text().startswith(f"Could not listen on 127.0.0.1:{port}: ")
        assert taken is not None
        await taken.stop()

    in_the_windows_loop(scenario)
    win.close()


def test_it_serves_as_many_replies_at_once_as_the_model_has_slots(qtbot, demo_folder: Path, demo_model: Path) -> None:
    settings = LoadSettings(n_threads=2, n_ctx=2048, n_parallel=4)
    win = open_window(qtbot, demo_folder, demo_folder / demo_model.name, settings, engine=FakeEngine())
    load(qtbot, win)

    async def scenario() -> None:
        base = await serve(qtbot, win)
        assert win.features.serve.api is not None and win.features.serve.api.slots == 4
        assert win.serve_panel.status.text() == f"Listening on {base} — {MODEL_ID}. 0 of 4 at once running, 0 waiting."
        win.features.serve.stop()

    in_the_windows_loop(scenario)
    win.close()


def test_any_model_name_is_answered_unless_only_the_loaded_models_is_asked_for(
    qtbot, demo_folder: Path, demo_model: Path
) -> None:
    win = open_window(qtbot, demo_folder, demo_folder / demo_model.name, LoadSettings(n_threads=2), engine=FakeEngine())
    load(qtbot, win)
    panel = win.serve_panel
    hello: Any = [{"role": "user", "content": "Hi"}]

    async def served_to(name: str) -> str:
        base = await serve(qtbot, win)
        client = openai.AsyncOpenAI(base_url=base, api_key="unused", max_retries=0)
        try:
            reply = await client.chat.completions.create(model=name, messages=hello, max_tokens=5)
            return reply.model
        except openai.NotFoundError as exc:
            return str(exc.code)
        finally:
            await client.close()
            stopped = signal_future(win.features.serve.serving_changed)
            qtbot.mouseClick(panel.serve_button, Qt.MouseButton.LeftButton)
            await stopped

    async def scenario() -> None:
        assert not panel.strict_model.isChecked()
        assert await served_to("gpt-4o-mini") == MODEL_ID  # the loaded model answers, and says so
        panel.strict_model.setChecked(True)
        assert await served_to("gpt-4o-mini") == "model_not_found"
        assert await served_to(MODEL_ID) == MODEL_ID

    in_the_windows_loop(scenario)
    assert win.features.services.settings.read(SERVE_STRICT_MODEL) is True  # kept once listening worked
    win.close()
