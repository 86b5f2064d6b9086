"""Several devices in the window: the split settings shown only with more than one device, a bad tensor split
said in one line with the old value kept, the plan following the split; RPC workers added in the load settings,
asked for their devices off the UI thread (a real `tightfit rpc-worker` on 127.0.0.1), planned in front of this
machine's devices and named as llama.cpp names their buffers; a worker that cannot be reached said before
loading and the load refused; the link in the plan's speed; a worker lost mid-reply said in words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fake_engine import CUDA_BUILD, FakeEngine
from fake_nvml import FakeGpu, FakeNvml
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from test_rpc import Worker, worker
from window_kit import load, open_window

from gui.core.cards import find_card
from gui.core.params import LoadSettings
from gui.core.tuning_card import TuningCard
from gui.services.nvml import Nvml
from gui.services.rpc import ask_devices, free_port
from gui.services.tuning_card import sha256_file, write_card
from gui.ui.main_window import MainWindow

__all__ = ["worker"]  # a fixture, used by name

WAIT_MS = 90_000  # a worker's answer comes from a child process that loads llama.cpp's libraries
SETTINGS = LoadSettings(n_threads=2, n_ctx=1024)


@pytest.fixture
def models(tmp_path: Path, demo_model: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(demo_model, folder / demo_model.name)
    return folder


def two_gpu_window(qtbot, models: Path, n_gpus: int = 2) -> MainWindow:
    gpus = [FakeGpu(total_mib=16384.0, uuid=f"GPU-{i}") for i in range(n_gpus)]
    win = open_window(
        qtbot,
        models,
        next(models.glob("*.gguf")),
        SETTINGS,
        nvml=Nvml(FakeNvml(gpus)),
        engine=FakeEngine(build=CUDA_BUILD),
    )
    win.plan_panel.set_engine_offload(True)
    return win


def type_split(qtbot, win: MainWindow, text: str) -> None:
    box = win.params.texts["tensor_split"]
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, text)
    QTest.keyClick(box, Qt.Key.Key_Return)


def blocks(win: MainWindow) -> list[int]:
    assert win.features.load.plan is not None
    return [d.layers for d in win.features.load.plan.devices]


def add_worker(qtbot, win: MainWindow, endpoint: str) -> None:
    rpc = win.params.rpc
    rpc.entry.setText(endpoint)
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        rpc.add_button.click()
    qtbot.waitUntil(lambda: endpoint in rpc.answers, timeout=WAIT_MS)


# ---- several GPUs -------------------------------------------------------------------------------------


def test_the_split_rows_show_with_two_gpus_and_not_with_one(qtbot, models: Path) -> None:
    one = two_gpu_window(qtbot, models, n_gpus=1)
    assert len(one.plan_panel.devices()) == 1
    assert all(not w.isVisible() for w in one.params.split_widgets)
    one.close()

    win = two_gpu_window(qtbot, models)
    params = win.params
    assert len(win.plan_panel.devices()) == 2 and len(blocks(win)) == 2
    assert params.split_widgets and all(w.isVisible() for w in params.split_widgets)
    # Made from the declarations: the names, the choices and the main GPU's range (the two GPUs).
    assert [params.choices["split_mode"].itemText(i) for i in range(3)] == ["layer", "row", "none"]
    assert params.numbers["main_gpu"].maximum() == 1
    assert params.texts["tensor_split"].toolTip().startswith("Share of the model on each GPU")
    # The CPU target has no device: the rows go.
    win.plan_panel.select_target("cpu")
    assert all(not w.isVisible() for w in params.split_widgets)
    win.close()


def test_a_bad_tensor_split_is_one_line_and_keeps_the_old_value(qtbot, models: Path) -> None:
    win = two_gpu_window(qtbot, models)
    params = win.params
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        type_split(qtbot, win, "3/1")
    assert params.settings().tensor_split == "3,1" and params.texts["tensor_split"].text() == "3,1"
    planned = blocks(win)
    with qtbot.assertNotEmitted(win.features.load.planned):
        type_split(qtbot, win, "3,x")
    note = params.note.text()
    assert params.note.isVisible() and "\n" not in note
    assert note.startswith("Tensor split: not changed, 3,1 kept.") and "'x' is not a number" in note
    assert params.texts["tensor_split"].text() == "3,1" and params.settings().tensor_split == "3,1"
    assert blocks(win) == planned
    win.close()


def test_the_plan_follows_a_changed_split(qtbot, models: Path) -> None:
    win = two_gpu_window(qtbot, models)
    params = win.params
    even = blocks(win)  # by free memory: two equal cards share the 30 blocks (the output layer on the last)
    assert sum(even) == 30 and abs(even[0] - even[1]) <= 2
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        type_split(qtbot, win, "3,1")
    first, second = blocks(win)
    assert first > second > 0 and first + second == 30
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        type_split(qtbot, win, "1,3")
    low, high = blocks(win)
    assert low < high and low < first and low + high == 30  # a quarter on the first now
    # Split mode none: everything on the main GPU, the other unused.
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        params.numbers["main_gpu"].setValue(1)
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        params.choices["split_mode"].setCurrentText("none")
    assert win.features.load.plan is not None and [d.in_use for d in win.features.load.plan.devices] == [False, True]
    assert blocks(win) == [0, 30]
    # Row is offered, as declared; the plan says why it cannot load.
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        params.choices["split_mode"].setCurrentText("row")
    assert win.features.load.plan is None and "split buffers" in win.plan_panel.verdict_label.text()
    win.close()


# ---- RPC workers --------------------------------------------------------------------------------------


def test_a_worker_is_planned_first_with_its_name_and_free_memory(qtbot, models: Path, worker: Worker) -> None:
    win = open_window(qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=FakeEngine())
    assert (
        win.plan_panel.current_target().key == "cpu"
        and win.features.load.plan is not None
        and win.features.load.plan.devices == ()
    )
    add_worker(qtbot, win, worker.endpoint)
    assert win.params.settings().rpc_servers == worker.endpoint
    plan = win.features.load.plan
    assert plan is not None
    (device,) = plan.devices
    assert device.name == f"RPC0[{worker.endpoint}]" == worker.name and device.remote == worker.endpoint
    bar = win.plan_panel.bars[0]
    assert bar.isVisible() and bar.plan is device
    # The memory the worker says it has, asked again here as `tightfit plan --rpc` asks.
    (said,) = ask_devices(worker.endpoint)
    assert device.total_mib == pytest.approx(said.total_bytes / 2**20)
    assert 0 < device.free_mib <= device.total_mib
    # (The plural forms come from the English translation, which the tests do not install.)
    assert win.plan_panel.remote_label.text().startswith("1 device") and "on the RPC workers" in (
        win.plan_panel.remote_label.text()
    )
    assert win.params.rpc.list.item(0).text().startswith(f"{worker.endpoint} — 1 device")
    # A single device: no split rows. Planning for a card too: the worker first, then the card.
    assert all(not w.isVisible() for w in win.params.split_widgets)
    win.plan_panel.select_target("p40")
    assert [d.name for d in win.features.load.plan.devices] == [worker.name, find_card("p40").name]
    assert all(w.isVisible() for w in win.params.split_widgets)
    assert win.params.numbers["main_gpu"].maximum() == 1
    # Removed: the plan is this machine's again.
    win.plan_panel.select_target("cpu")
    win.params.rpc.list.setCurrentRow(0)
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        win.params.rpc.remove_button.click()
    assert (
        win.features.load.plan is not None
        and win.features.load.plan.devices == ()
        and win.params.settings().rpc_servers == ""
    )
    win.close()


def test_an_unreachable_worker_is_said_and_the_load_refused(qtbot, models: Path) -> None:
    engine = FakeEngine()
    win = open_window(qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=engine)
    port = free_port("127.0.0.1")  # nothing listens there once the probe socket is closed
    endpoint = f"127.0.0.1:{port}"
    add_worker(qtbot, win, endpoint)
    words = win.plan_panel.remote_label.text()
    assert win.plan_panel.remote_label.isVisible() and f"{endpoint} refused the connection" in words
    assert win.params.rpc.list.item(0).text() == f"{endpoint} — cannot be reached"
    with qtbot.waitSignal(win.features.load.load_finished, timeout=5000) as done:
        win.features.load.load_selected()
    assert done.args == [False] and engine.loads == []
    assert win.load_bar.status.text().startswith("Cannot load: an RPC worker cannot be used:")
    assert "refused the connection" in win.load_bar.status.text()
    # A bad address is refused as it is typed, in one line, and the list kept.
    win.params.rpc.entry.setText("10.0.0.256:50052")
    win.params.rpc.add_button.click()
    assert "not an IPv4 address" in win.params.rpc.note.text() and win.params.rpc.endpoints() == [endpoint]
    # Without it, the model loads.
    win.params.rpc.remove_selected()
    assert win.params.rpc.refusal() == ""
    load(qtbot, win)
    assert [s.rpc_servers for _, s in engine.loads] == [""]
    win.close()


def test_the_link_changes_the_plans_speed(qtbot, models: Path, worker: Worker) -> None:
    win = open_window(
        qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=FakeEngine(), simulate=find_card("p40")
    )
    add_worker(qtbot, win, worker.endpoint)
    rpc, panel = win.params.rpc, win.plan_panel
    assert rpc.link.isVisible() and not rpc.mbit.isVisible()
    plan = win.features.load.plan
    assert plan is not None and plan.link_hops > 0 and plan.devices[0].layers > 0
    one_gbe = plan.link_ms_per_token
    assert f"{one_gbe:.2f} ms per token" in panel.verdict_label.text() and "1 GbE" in panel.verdict_label.text()
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        rpc.link.setCurrentIndex(rpc.link.findData("10gbe"))
    ten_gbe = win.features.load.plan.link_ms_per_token
    assert 0 < ten_gbe < one_gbe and "10 GbE" in panel.verdict_label.text()
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        rpc.link.setCurrentIndex(rpc.link.findData("custom"))
    assert rpc.mbit.isVisible() and rpc.rtt.isVisible()
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        rpc.mbit.setValue(100.0)
    slow = win.features.load.plan.link_ms_per_token
    assert slow > one_gbe and f"{slow:.2f} ms per token" in panel.verdict_label.text()
    # The worker's own memory speed is unknown: the speed line gives the network's bound alone.
    assert f"at most {1000 / slow:,.0f} tok/s from the network alone" in panel.verdict_label.text()
    win.close()


def test_the_speed_hint_and_the_plan_panel_agree_with_a_worker_and_a_stated_link(
    qtbot, models: Path, worker: Worker
) -> None:
    """The speed hint plans the load from the same context as the plan panel: the worker in front, the link
    stated (a hint planned without the link would see a faster ceiling than the panel shows)."""
    engine = FakeEngine(build=CUDA_BUILD)
    win = open_window(
        qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=engine, simulate=find_card("v100-16gb")
    )
    add_worker(qtbot, win, worker.endpoint)
    rpc = win.params.rpc
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        rpc.link.setCurrentIndex(rpc.link.findData("custom"))
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        rpc.mbit.setValue(20.0)  # a slow link: the network bounds the speed, so leaving it out shows
    shown = win.features.load.plan
    assert shown is not None and shown.link_hops > 0 and shown.link_ms_per_token > 0
    load(qtbot, win)
    hinted = win.features.planning.loaded(win.features.session.state)
    assert hinted is not None
    planned = hinted.plan()
    assert (planned.predicted_tg_tok_s, planned.link_ms_per_token) == (
        shown.predicted_tg_tok_s,
        shown.link_ms_per_token,
    )
    assert [d.layers for d in planned.devices] == [d.layers for d in shown.devices]
    win.close()


def test_a_worker_lost_mid_reply_is_said_in_words(qtbot, models: Path, worker: Worker) -> None:
    engine = FakeEngine()
    win = open_window(qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=engine)
    add_worker(qtbot, win, worker.endpoint)
    load(qtbot, win)
    assert engine.loads[-1][1].rpc_servers == worker.endpoint
    worker.kill()
    # What the engine's log says when its worker goes away (llama.cpp's lines; the engine itself is a stand-in).
    log = (
        f"llama_model_load_from_file_impl: using device RPC0 ({worker.endpoint}) (unknown id) - 7800 MiB free",
        "/llama.cpp/ggml/src/ggml-rpc/ggml-rpc.cpp:623: Remote RPC server crashed or returned malformed response",
    )
    with qtbot.waitSignal(win.features.engine.engine_died, timeout=10_000):
        engine.kill(exitcode=-6, log=log)
    said = f"An RPC worker (RPC0 at {worker.endpoint}) stopped answering mid-work"
    assert said in win.load_bar.status.text()
    win.close()


def test_the_link_is_remembered_between_starts(qtbot, models: Path, tmp_path: Path) -> None:
    from gui.core.params import NetworkLink
    from gui.core.preferences import RPC_LINK
    from gui.services.settings_store import SettingsStore

    path = tmp_path / "settings.json"
    win = open_window(
        qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=FakeEngine(), store=SettingsStore(path)
    )
    rpc = win.params.rpc
    rpc.link.setCurrentIndex(rpc.link.findData("custom"))
    rpc.mbit.setValue(250.0)
    rpc.rtt.setValue(1.5)
    win.close()
    assert SettingsStore(path).read(RPC_LINK) == NetworkLink("custom", 250.0, 1.5)
    again = open_window(
        qtbot, models, next(models.glob("*.gguf")), SETTINGS, engine=FakeEngine(), store=SettingsStore(path)
    )
    assert again.params.rpc.network_link() == NetworkLink("custom", 250.0, 1.5)
    again.close()
    path.write_text('{"rpc_link": {"preset": "carrier pigeon", "mbit_s": -3}}')
    assert SettingsStore(path).read(RPC_LINK) == NetworkLink()  # a bad stored link: the default, said in the log


@pytest.mark.parametrize("yes", [False, True])
def test_a_tuning_card_naming_a_worker_uses_it_only_once_the_user_says_yes(
    qtbot, models: Path, worker: Worker, tmp_path: Path, yes: bool
) -> None:
    """A card that names an RPC server is asked about on its own, before anything connects to the server;
    no applies the card's other settings without it; yes makes the load, its line and the plan name the
    worker's device."""
    engine = FakeEngine()  # a build without GPU offload: the load line used to say "all ... on the CPU"
    model = next(models.glob("*.gguf"))
    win = open_window(qtbot, models, model, SETTINGS, engine=engine)
    tuned = SETTINGS.with_values(n_ctx=2048, rpc_servers=worker.endpoint)
    path = write_card(tmp_path / "card.json", TuningCard(model.name, sha256_file(model), tuned))
    menu, rpc = win.export_menu, win.params.rpc
    menu.ask_open_path = lambda *_: str(path)
    menu.confirm = lambda *_: pytest.fail("the card is for this file: no question about the file")
    asked: list[tuple[str, int, int]] = []

    def answer(_title: str, text: str) -> bool:
        asked.append((text, rpc.list.count(), len(rpc.pending) + len(rpc.answers)))
        return yes

    menu.confirm_remote = answer
    with qtbot.waitSignal(menu.settings_opened, timeout=20_000):
        menu.open_card_file()
    ((text, listed, contacted),) = asked
    assert worker.endpoint in text and "every prompt" in text
    assert listed == 0 and contacted == 0  # nothing was connected to before the answer
    assert win.params.settings().n_ctx == 2048  # the rest of the card, either way
    if not yes:
        assert win.params.settings().rpc_servers == "" and rpc.list.count() == 0 and not rpc.pending
        assert not win.plan_panel.remote_label.isVisible()
        loaded = load(qtbot, win)
        assert engine.loads[-1][1].rpc_servers == "" and loaded.n_gpu_layers >= 0
        assert "other machines" not in win.load_bar.status.text()
        win.close()
        return
    qtbot.waitUntil(lambda: worker.endpoint in rpc.answers and not rpc.pending, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: win.features.load.plan is not None and bool(win.features.load.plan.devices), timeout=5000)
    assert worker.name in win.plan_panel.remote_label.text()  # the plan names the device
    load(qtbot, win)
    assert engine.loads[-1][1].rpc_servers == worker.endpoint
    status = win.load_bar.status.text()
    assert "on the CPU" not in status
    assert f"other machines' devices over the network: {worker.name}" in status
    win.close()
