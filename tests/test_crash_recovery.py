"""The engine dies of an out-of-memory abort mid-reply: the reply stays, the cause is said, a safer reload is a click.

On this CPU-only machine the abort is real (SIGABRT to the real worker, as ggml_abort does) and the log
lines are the ones a CUDA build prints when cudaMalloc fails: the hardware edge is the only stand-in.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from window_kit import open_window

from gui.core import protocol as p
from gui.core.params import LoadSettings

pytestmark = pytest.mark.engine
TIMEOUT = 120_000

CUDA_OOM = (
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1234.56 MiB on device 0: cudaMalloc failed: out of memory\n"
    "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1294532608\n"
)


def test_oom_abort_mid_reply(qtbot, demo_model: Path) -> None:
    win = open_window(qtbot, demo_model.parent, demo_model, LoadSettings(n_threads=2, n_ctx=2048))
    win.plan_panel.select_target("v100-16gb")  # planning for a V100: the safer reload takes layers off
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    chat = win.chat
    chat.sampling_panel.preset.setCurrentText("Deterministic")
    # Long enough that the worker is still writing when it is frozen, however far a busy machine lets the
    # window fall behind it.
    chat.max_tokens = 1900
    chat.ignore_eos = True
    chat.input.setPlainText("Write a long story about a lighthouse.")
    qtbot.mouseClick(chat.send_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: sum(n for _, n in chat.arrivals) >= 5, timeout=TIMEOUT)

    client = win.features.bridge.client
    assert client.log_path is not None and client.pid is not None
    with client.log_path.open("a") as log:
        log.write(CUDA_OOM)
    with qtbot.waitSignal(win.features.engine.engine_died, timeout=30_000) as died:
        os.kill(client.pid, signal.SIGABRT)
    event = died.args[0]
    assert event.exitcode == -signal.SIGABRT and event.failure.kind == "out_of_memory"

    # The partial reply stays, marked; the cause is in plain words with the buffer and the size.
    user, reply = chat.conversation.turns
    assert reply.text and reply.note == "interrupted: the engine stopped"
    notice = chat.notice.text()
    assert "aborted" in notice and "ran out of memory allocating 1,235 MiB" in notice and "GPU 0" in notice
    assert "Your conversation is kept" in notice
    assert chat.notice_button.isVisible() and chat.notice_button.text() == "Reload safer"
    assert "GPU layers instead of 31" in notice

    # One click: safer settings, a fresh worker, the model loaded again, the conversation still there.
    qtbot.waitUntil(lambda: client.alive, timeout=TIMEOUT)
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT) as loaded:
        qtbot.mouseClick(chat.notice_button, Qt.MouseButton.LeftButton)
    assert isinstance(loaded.args[0], p.Loaded)
    assert win.params.settings().n_gpu_layers < 31
    assert chat.conversation.turns[0] is user and chat.conversation.turns[1] is reply
    win.close()


def _state(pid: int) -> str:
    """The process's state letter as the kernel reports it (T: stopped)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def test_a_worker_that_does_not_answer_stop_is_ended_and_replaced(
    qtbot, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A frozen worker (SIGSTOP: every thread stops, as in a deadlock) cannot hold the window hostage."""
    monkeypatch.setattr("gui.ui.chat_pane.ACK_S", 1.0)
    win = open_window(qtbot, demo_model.parent, demo_model, LoadSettings(n_threads=2, n_ctx=2048))
    win.plan_panel.select_target("cpu")
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    chat = win.chat
    chat.max_tokens = 400
    chat.ignore_eos = True
    chat.input.setPlainText("Write a long story about a lighthouse.")
    chat.send()
    qtbot.waitUntil(lambda: sum(n for _, n in chat.arrivals) >= 3, timeout=TIMEOUT)
    client = win.features.bridge.client
    frozen = client.pid
    assert frozen is not None
    os.kill(frozen, signal.SIGSTOP)
    # The stop takes hold as each of its threads is next scheduled; on a busy machine that is not at once.
    qtbot.waitUntil(lambda: _state(frozen) == "T", timeout=TIMEOUT)
    with qtbot.waitSignal(win.features.engine.engine_died, timeout=30_000) as died:
        # The button, not Esc: a shortcut needs the window active, which a busy test machine may not grant
        # in time (Esc is tested in test_chat_controls).
        chat.stop_button.click()
    event = died.args[0]
    assert event.exitcode == -signal.SIGKILL and event.failure.kind == "stopped"
    notice = chat.notice.text()
    assert "did not acknowledge Stop within 1 s" in notice and "conversation is kept" in notice
    assert "memory" not in notice and not chat.notice_button.isVisible()  # no "reload safer": memory is not it
    _, reply = chat.conversation.turns
    assert reply.text and reply.note == "interrupted: the engine stopped"
    qtbot.waitUntil(lambda: client.alive and client.pid != frozen, timeout=TIMEOUT)
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    win.close()


def test_a_load_that_fails_says_why_and_the_model_before_comes_back(qtbot, demo_model: Path, tmp_path: Path) -> None:
    """A file whose header does not match its tensors: llama.cpp refuses it; nothing is lost."""
    folder = tmp_path / "models"
    folder.mkdir()
    good = folder / demo_model.name
    good.symlink_to(demo_model)
    data = bytearray(demo_model.read_bytes())
    key = b"llama.embedding_length"
    at = data.find(key) + len(key) + 4  # past the key and its type: the value, 576
    data[at : at + 4] = (512).to_bytes(4, "little")
    broken = folder / "Broken-Q4_1.gguf"
    broken.write_bytes(bytes(data))

    win = open_window(qtbot, folder, good, LoadSettings(n_threads=2, n_ctx=1024))
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        win.features.load.load_selected()
    assert win.picker.select_path(broken)
    with qtbot.waitSignals([win.features.load.load_finished, win.features.load.model_loaded], timeout=TIMEOUT):
        win.features.load.load_selected()
    status = win.load_bar.status.text()
    assert "Broken-Q4_1.gguf did not load: llama.cpp reported an error: invalid n_rot" in status, status
    assert win.features.session.state.ready and win.features.session.state.model == good  # back as it was
    assert win.load_bar.log_button.isVisible()
    win.close()
