"""The Doctor in the window: run at start in the background, a badge on its tab, fixes as buttons or commands,
the engine line as a way in; and the NUMA pin its fix sets, on the real engine process."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from fake_engine import FakeEngine
from PySide6.QtCore import Qt

from gui.core.doctor import Check, Fix, Status, summary
from gui.core.params import LoadSettings
from gui.core.preferences import NUMA_PINS
from gui.services.bundle import DoctorRequest
from gui.services.engine_client import EngineClient
from gui.services.numa import NumaPin, machine_id, node_cpus, pin_running, write_launcher
from gui.services.settings_store import SettingsStore
from gui.ui.doctor_view import action_label

TIMEOUT = 120_000

CHECKS = (
    Check(
        "cpu.threads",
        "Threads",
        Status.WARN,
        "16 threads on 8 physical cores",
        "Hyper-threads slow decode.",
        Fix("Use one thread per physical core.", action="set:n_threads=3"),
    ),
    Check(
        "engine.cpu_only",
        "Engine built for the GPU",
        Status.FAIL,
        "CPU build; NVML sees Tesla V100 (7.0)",
        "Every layer runs on the CPU.",
        Fix("Rebuild for the card.", command="CMAKE_ARGS=... pip install ..."),
    ),
    Check("driver.branch", "Driver", Status.OK, "570.124.06", "", None),
    Check("numa.gpu_node", "NUMA", Status.UNKNOWN, "one node", "", None),
)


class Doctor:
    """The Doctor service as the window sees it: records each request, answers from a worker thread."""

    def __init__(self, checks: tuple[Check, ...] = CHECKS) -> None:
        self.checks = checks
        self.requests: list[DoctorRequest] = []
        self.threads: list[str] = []

    def __call__(self, request: DoctorRequest) -> tuple[Check, ...]:
        self.requests.append(request)
        self.threads.append(threading.current_thread().name)
        return self.checks


def test_the_doctor_runs_at_start_off_the_ui_thread_and_badges_its_tab(qtbot, demo_folder: Path) -> None:
    doctor = Doctor()
    win = MainWindowWithDoctor.open(qtbot, demo_folder, doctor)
    assert doctor.requests, "the checks ran once the engine said hello"
    assert all(name.startswith("doctor") for name in doctor.threads)  # the Background's thread, not the UI's
    request = doctor.requests[-1]
    assert request.build is not None and request.build.llama_cpp_python == "fake"
    assert (
        request.settings.n_threads == 2 and request.known_facts()["n_ctx_train"] == 8192
    )  # the demo model's trained context
    index = win.tabs.indexOf(win.doctor)
    assert win.tabs.tabText(index) == "D&octor (2)"
    assert not win.tabs.tabIcon(index).isNull()
    assert "1 failure, 1 warning" in win.doctor.summary.text()
    # Worst first: the failure leads the list, the ok check comes last.
    assert [c.id for c in win.doctor.checks] == ["engine.cpu_only", "cpu.threads", "numa.gpu_node", "driver.branch"]
    # A command to copy where Tightfit cannot do it; it goes to the clipboard whole.
    box = win.doctor.command_boxes["engine.cpu_only"]
    assert box.toPlainText() == "CMAKE_ARGS=... pip install ..." and box.isReadOnly()
    win.close()


class MainWindowWithDoctor:
    @staticmethod
    def open(qtbot, demo_folder: Path, doctor: Doctor, **services):
        """The window whose Doctor service is ``doctor`` from the start (set before the engine's hello)."""
        from gui.app import build_services
        from gui.ui.compose import build_window

        built = build_services(demo_folder, engine=services.pop("engine", FakeEngine()), **services)
        built.doctor = doctor
        win = build_window(built, LoadSettings(n_threads=2, n_ctx=1024))
        qtbot.addWidget(win)
        win.show()
        with qtbot.waitSignals(
            [win.features.engine.engine_ready, win.picker.scanned, win.features.doctor.checked], timeout=TIMEOUT
        ):
            win.start()
        return win


def test_a_fix_button_changes_the_setting_and_the_engine_line_opens_the_doctor(qtbot, demo_folder: Path) -> None:
    win = MainWindowWithDoctor.open(qtbot, demo_folder, Doctor())
    button = win.doctor.action_buttons["cpu.threads"]
    assert button.text() == "Use 3 threads"
    with qtbot.waitSignal(win.features.doctor.checked, timeout=TIMEOUT):  # a fix is followed by a fresh run
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert win.params.settings().n_threads == 3
    assert "Threads set to 3" in win.statusBar().currentMessage()
    win.tabs.setCurrentIndex(0)
    qtbot.mouseClick(win.engine_label, Qt.MouseButton.LeftButton)
    assert win.tabs.currentWidget() is win.doctor
    win.close()


def test_check_again_runs_every_check_again_and_a_failure_is_said(qtbot, demo_folder: Path) -> None:
    doctor = Doctor()
    win = MainWindowWithDoctor.open(qtbot, demo_folder, doctor)
    calls = len(doctor.requests)
    with qtbot.waitSignal(win.features.doctor.checked, timeout=TIMEOUT):
        qtbot.mouseClick(win.doctor.run_button, Qt.MouseButton.LeftButton)
    assert len(doctor.requests) == calls + 1

    def broken(_request: DoctorRequest) -> tuple[Check, ...]:
        raise OSError("sysfs went away")

    win.features.services.doctor = broken
    win.features.doctor.run()
    qtbot.waitUntil(lambda: "could not run: sysfs went away" in win.doctor.summary.text(), timeout=TIMEOUT)
    assert win.doctor.run_button.isEnabled()
    win.close()


def test_all_ok_leaves_no_badge(qtbot, demo_folder: Path) -> None:
    ok = (Check("driver.branch", "Driver", Status.OK, "570", "", None),)
    win = MainWindowWithDoctor.open(qtbot, demo_folder, Doctor(ok))
    index = win.tabs.indexOf(win.doctor)
    assert win.tabs.tabText(index) == "D&octor" and win.tabs.tabIcon(index).isNull()
    win.close()


def test_action_and_summary_words() -> None:
    assert action_label("pin_numa:1") == "Pin the engine to NUMA node 1"
    assert action_label("set:use_mmap=false") == "Turn memory mapping off"
    assert action_label("open:power") == "Open the power cap"
    assert action_label("launch:rockets") == ""  # an action this window does not know is no button
    assert summary(CHECKS) == "1 failure, 1 warning, 1 not known here, 1 ok"


# ---- the NUMA pin, on the real engine ------------------------------------------------------------------


@pytest.mark.engine
def test_the_pin_is_remembered_per_machine_and_moves_the_running_engine(
    qtbot, demo_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    root = tmp_path / "sysroot"
    cpulist = root / "sys/devices/system/node/node0/cpulist"
    cpulist.parent.mkdir(parents=True)
    cpulist.write_text(f"{allowed[0]}\n")
    store = SettingsStore(tmp_path / "settings.json")
    win = MainWindowWithDoctor.open(qtbot, demo_folder, Doctor(), store=store, engine=EngineClient(log_dir=tmp_path))
    monkeypatch.setattr("gui.ui.controllers.engine.node_cpus", lambda node: node_cpus(node, root))
    words = win.features.engine.pin_numa(0)
    pid = win.features.bridge.client.pid
    assert pid is not None
    assert os.sched_getaffinity(pid) == {allowed[0]}
    assert f"NUMA node 0 (CPUs {allowed[0]})" in words
    assert store.read(NUMA_PINS) == {machine_id(): 0}
    assert win.features.bridge.client.numa == NumaPin(0, frozenset({allowed[0]}))
    win.close()


@pytest.mark.engine
def test_a_pinned_engine_starts_on_the_nodes_cpus_and_under_numactl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    record = tmp_path / "numactl-args"
    # numactl's stand-in: records how it was called, then runs the command after its options, as numactl does.
    fake = tmp_path / "numactl"
    fake.write_text(f'#!/bin/sh\necho "$@" > {record}\nshift 2\nexec "$@"\n')
    fake.chmod(0o755)
    hello = threading.Event()
    client = EngineClient(log_dir=tmp_path)
    client.set_listener(lambda event: hello.set() if type(event).__name__ == "Hello" else None)
    client.numa = NumaPin(0, frozenset({allowed[-1]}))
    monkeypatch.setattr(
        "gui.services.engine_client.write_launcher",
        lambda demo_folder, node: write_launcher(demo_folder, node, str(fake)),
    )
    try:
        client.start()
        assert hello.wait(60), "the worker started through the launcher and said hello"
        pid = client.pid
        assert pid is not None
        assert os.sched_getaffinity(pid) == {allowed[-1]}  # the worker pinned itself before llama.cpp started
        assert record.read_text().split()[:2] == ["--cpunodebind=0", "--membind=0"]
        assert client.numa_memory
        assert pin_running(pid, frozenset(allowed)) >= 1
        assert os.sched_getaffinity(pid) == set(allowed)
    finally:
        client.close()


def test_node_cpus_reads_sysfs_and_refuses_nonsense(tmp_path: Path) -> None:
    node = tmp_path / "sys/devices/system/node/node1"
    node.mkdir(parents=True)
    (node / "cpulist").write_text("16-23,48-55\n")
    assert node_cpus(1, tmp_path) == frozenset([*range(16, 24), *range(48, 56)])
    (node / "cpulist").write_text("7-3\n")
    assert node_cpus(1, tmp_path) == frozenset()
    assert node_cpus(2, tmp_path) == frozenset()
