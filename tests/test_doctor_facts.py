"""Gathering the Doctor's facts: NVML through fakes on pynvml's real signatures (and recorded sessions),
sysfs and /etc/os-release as fixture trees, host memory and CPUs injected, and the power cap's probes
through a recording runner — then the checks those facts lead to."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pynvml
import pytest
from fake_nvml import FakeGpu, FakeNvml

from gui.core.cards import find_card
from gui.core.doctor import Check, DoctorFacts, Status, run_checks
from gui.core.params import LoadSettings
from gui.core.protocol import EngineBuild
from gui.core.simulated_gpu import SimulatedGpu
from gui.services.doctor_facts import PROBE_TIMEOUT_S, Machine, gather_facts, rebuild_route
from gui.services.nvml import Nvml
from gui.services.power_limit import RunOutput
from gui.services.system import HostMemory, cpu_affinity, host_memory, process_rss_mib

CPU_BUILD = EngineBuild("CPU", False, "0.3.36", "CPU : SSE3 = 1 | AVX2 = 1")
CUDA_BUILD = EngineBuild("CUDA", True, "0.3.36", "CUDA : ARCHS = 700", cuda_archs=(70,), cuda_runtime="12.4")
V100_SYSTEM = {"driver_version": "570.133.20", "nvml_version": "12.570.133.20", "cuda_driver_version": 12080}
MEMORY = HostMemory(total_mib=65536.0, available_mib=20000.0, swap_total_mib=8192.0, swap_used_mib=0.0)


def write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def two_socket_tree(root: Path) -> Path:
    """A two-node board with the V100 on node 1, an Intel audio device beside it, and Ubuntu."""
    write(root, "sys/bus/pci/devices/0000:3b:00.0/vendor", "0x10de\n")
    write(root, "sys/bus/pci/devices/0000:3b:00.0/class", "0x030200\n")
    write(root, "sys/bus/pci/devices/0000:3b:00.0/numa_node", "1\n")
    write(root, "sys/bus/pci/devices/0000:00:1f.3/vendor", "0x8086\n")
    write(root, "sys/bus/pci/devices/0000:00:1f.3/class", "0x040300\n")
    write(root, "sys/devices/system/node/node0/cpulist", "0-15\n")
    write(root, "sys/devices/system/node/node1/cpulist", "16-31\n")
    write(root, "sys/devices/system/cpu/online", "0-31\n")
    write(
        root,
        "etc/os-release",
        'PRETTY_NAME="Ubuntu 24.04.2 LTS"\nNAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n',
    )
    return root


class Runner:
    """Answers the probes as a machine would, and records each with its timeout."""

    def __init__(self, answers: dict[str, RunOutput | Exception]) -> None:
        self.answers = answers
        self.calls: list[tuple[list[str], float]] = []

    def __call__(self, argv: Sequence[str], timeout: float) -> RunOutput:
        self.calls.append((list(argv), timeout))
        for key, answer in self.answers.items():
            if key in " ".join(argv):
                if isinstance(answer, Exception):
                    raise answer
                return answer
        raise FileNotFoundError(argv[0])


def helper_at(folder: Path, interpreter: str = "/usr/bin/python3") -> Path:
    helper = folder / "tightfit-power-helper"
    helper.write_text(f"#!{interpreter} -I\nprint('{{}}')\n")
    helper.chmod(helper.stat().st_mode | stat.S_IXUSR)
    return helper


def machine(
    root: Path, runner: Runner, *, helper: Path, tools: Sequence[str] = ("pkexec", "sudo"), **more: Any
) -> Machine:
    values: dict[str, Any] = {
        "root": root,
        "run": runner,
        "which": lambda name: f"/usr/bin/{name}" if name in tools else None,
        "system_tool": lambda name: f"/usr/bin/{name}" if name in tools else None,
        "memory": lambda: MEMORY,
        "physical_cores": lambda: 16,
        "affinity": lambda pid: frozenset(range(32)),
        "rss_mib": lambda pid: 512.0,
        "helper": helper,
        "pid": 4000,
    }
    return Machine(**{**values, **more})


def by_id(facts: DoctorFacts) -> dict[str, Check]:
    return {c.id: c for c in run_checks(facts)}


def v100(**readings: Any) -> FakeGpu:
    base: dict[str, Any] = {
        "persistence_mode": 0,
        "display_active": 0,
        "pci_bus_id": "00000000:3B:00.0",
        "ecc_corrected_aggregate": 3,
        "ecc_uncorrected_aggregate": 0,
        "ecc_corrected_volatile": 0,
        "ecc_uncorrected_volatile": 0,
        "retired_pages_pending": 0,
        "util_gpu": 0,
        "pcie_gen": 1,
        "pcie_width": 16,
        "pcie_gen_max": 3,
        "pcie_width_max": 16,
        "clock_event_reasons": 1,
        "processes": [],
    }
    return FakeGpu(name="Tesla V100-PCIE-16GB", readings={**base, **readings})


# ---- NVML -----------------------------------------------------------------------------------------


def test_driver_info_and_gpu_health_through_nvml() -> None:
    fake = FakeNvml([v100(remapped_rows=[0, 0, 1, 0])], system=V100_SYSTEM)
    nvml = Nvml(fake)
    info = nvml.driver_info()
    assert (info.driver_version, info.nvml_version, info.cuda_version, info.error) == (
        "570.133.20",
        "12.570.133.20",
        "12.8",
        "",
    )
    health = nvml.gpu_health(0)
    assert health.pci_bus_id == "0000:3b:00.0"  # NVML's 32-bit domain, as sysfs names the device
    assert (health.persistence_mode, health.display_active, health.retired_pages_pending) == (False, False, False)
    assert (health.ecc_corrected_aggregate, health.ecc_uncorrected_aggregate) == (3, 0)
    assert (health.remapped_rows_pending, health.remapped_rows_failure) == (True, False)


def test_a_field_the_card_lacks_is_none_with_words() -> None:
    gpu = v100()
    gpu.failures["nvmlDeviceGetPersistenceMode"] = pynvml.NVML_ERROR_NOT_SUPPORTED
    health = Nvml(FakeNvml([gpu], system={})).gpu_health(0)
    assert health.persistence_mode is None and "not supported" in health.errors["persistence_mode"]
    assert health.remapped_rows_pending is None  # Volta has page retirement, not row remapping
    info = Nvml(FakeNvml([gpu], system={})).driver_info()
    assert info.driver_version is None and "driver_version" in info.errors and info.error == ""


def test_library_and_driver_mismatch_at_start_is_a_failure_to_reboot() -> None:
    nvml = Nvml(FakeNvml([v100()], init_error=pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH))
    info = nvml.driver_info()
    assert info.mismatch and "mismatch" in info.error
    assert nvml.gpu_health(0).errors["nvml"] == info.error
    result = by_id(DoctorFacts(gpus=None, nvml_error=info.error, nvml_mismatch=info.mismatch))["driver.nvml_mismatch"]
    assert result.status is Status.FAIL and result.fix is not None and result.fix.command == "sudo reboot"


# ---- gathering -------------------------------------------------------------------------------------------


def test_a_v100_on_the_far_node_of_a_two_socket_ubuntu_box(tmp_path: Path) -> None:
    root = two_socket_tree(tmp_path / "root")
    helper = helper_at(tmp_path, "/opt/tightfit/helper-venv/bin/python3")
    runner = Runner(
        {
            "--version": RunOutput(0, "pkexec version 127\n", ""),
            "-n -l": RunOutput(1, "", "sudo: a password is required\n"),
            "import pynvml": RunOutput(1, "", "ModuleNotFoundError: No module named 'pynvml'\n"),
        }
    )
    m = machine(root, runner, helper=helper)
    fake = FakeNvml([v100()], system=V100_SYSTEM)
    facts = gather_facts(
        LoadSettings(n_threads=16),
        build=CPU_BUILD,
        route_command="make engine",
        engine_pid=777,
        nvml=Nvml(fake),
        machine=m,
    )
    assert (facts.driver_version, facts.cuda_driver_version, facts.pci_nvidia_gpus) == ("570.133.20", "12.8", 1)
    (gpu,) = facts.gpus or ()
    assert (gpu.compute_capability, gpu.pci_bus_id, gpu.numa_node, gpu.persistence_mode) == (
        "7.0",
        "0000:3b:00.0",
        1,
        False,
    )
    assert facts.numa_nodes == {0: frozenset(range(16)), 1: frozenset(range(16, 32))}
    assert facts.engine_cpus == frozenset(range(32)) and facts.engine_cpus_from == "engine"
    assert facts.own_pids == {777, 4000} and facts.engine_rss_mib == 512.0
    assert (facts.os_id, facts.os_like, facts.os_name) == ("ubuntu", ("debian",), "Ubuntu 24.04.2 LTS")
    assert (facts.performance_cpus, facts.efficiency_cpus) == (None, frozenset())  # not a hybrid CPU
    assert facts.helper_installed and facts.helper_python == "/opt/tightfit/helper-venv/bin/python3"
    assert facts.helper_python_has_pynvml is False and facts.pkexec_version == "127" and facts.sudo_rule is False
    assert facts.power_readiness == ""  # installed, and pkexec is there to run it
    assert all(timeout <= PROBE_TIMEOUT_S for _, timeout in runner.calls)
    assert [argv[:3] for argv, _ in runner.calls] == [
        ["/opt/tightfit/helper-venv/bin/python3", "-I", "-c"],
        ["/usr/bin/pkexec", "--version"],
        ["/usr/bin/sudo", "-n", "-l"],
    ]

    checks = by_id(facts)
    assert checks["engine.gpu_build"].status is Status.FAIL
    assert checks["engine.gpu_build"].fix is not None and checks["engine.gpu_build"].fix.command == "make engine"
    numa = checks["numa.gpu_node"]
    assert numa.status is Status.WARN and numa.fix is not None and numa.fix.action == "pin_numa:1"
    assert numa.evidence == "GPU 0 on node 1 (CPUs 16-31); engine allowed on 0-31"
    assert checks["driver.persistence"].status is Status.WARN
    assert checks["power.privilege"].status is Status.WARN and "polkit 127" in checks["power.privilege"].evidence
    assert checks["power.pynvml"].status is Status.WARN
    assert (
        checks["power.pynvml"].fix is not None
        and checks["power.pynvml"].fix.command == "sudo apt install python3-pynvml"
    )
    assert checks["pcie.link"].status is Status.UNKNOWN  # idle: gen 1 of 3 says nothing yet
    assert checks["health.ecc"].status is Status.OK and "lifetime 3 corrected" in checks["health.ecc"].evidence
    assert checks["driver.nvml_mismatch"].status is Status.OK and checks["driver.branch"].status is Status.OK


def test_hybrid_cpu_from_sysfs(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "sys/devices/cpu_core/cpus", "0-15\n")
    write(root, "sys/devices/cpu_atom/cpus", "16-23\n")
    for cpu in range(16):  # each performance core has two hyper-threads
        core = cpu // 2
        write(root, f"sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list", f"{2 * core}-{2 * core + 1}\n")
    for cpu in range(16, 24):
        write(root, f"sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list", f"{cpu}\n")
    facts = gather_facts(
        LoadSettings(n_threads=24),
        nvml=Nvml(FakeNvml([], system={})),
        machine=machine(root, Runner({}), helper=tmp_path / "none"),
    )
    assert facts.performance_cpus == frozenset(range(16)) and facts.efficiency_cpus == frozenset(range(16, 24))
    assert facts.performance_cores == 8
    result = by_id(facts)["cpu.hybrid"]
    assert result.status is Status.WARN and "8 performance cores (CPUs 0-15)" in result.evidence
    assert result.fix is not None and result.fix.action == "set:n_threads=8"


def test_no_driver_but_an_nvidia_card_on_the_bus(tmp_path: Path) -> None:
    root = two_socket_tree(tmp_path / "root")
    runner = Runner({})
    facts = gather_facts(
        LoadSettings(),
        build=CPU_BUILD,
        nvml=Nvml(FakeNvml.replay("nvml_no_driver.json")),
        machine=machine(root, runner, helper=tmp_path / "h"),
    )
    assert facts.gpus is None and "driver" in facts.nvml_error and facts.pci_nvidia_gpus == 1
    checks = by_id(facts)
    assert (
        checks["driver.branch"].status is Status.FAIL
        and "1 NVIDIA card(s) on the PCI bus" in checks["driver.branch"].evidence
    )
    assert (
        checks["driver.branch"].fix is not None
        and checks["driver.branch"].fix.command == "sudo apt install nvidia-driver-580"
    )
    assert checks["engine.gpu_build"].status is Status.UNKNOWN
    assert runner.calls == []  # no card to cap: the power cap's probes do not run


def test_a_machine_without_nvidia_hardware_has_no_findings(tmp_path: Path) -> None:
    root = tmp_path / "root"
    write(root, "sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n")
    write(root, "sys/bus/pci/devices/0000:00:02.0/class", "0x030000\n")
    write(root, "sys/devices/system/node/node0/cpulist", "0-7\n")
    nvml = Nvml(FakeNvml.replay("nvml_no_driver.json"))
    facts = gather_facts(
        LoadSettings(n_threads=8),
        build=CPU_BUILD,
        nvml=nvml,
        machine=machine(root, Runner({}), helper=tmp_path / "h", physical_cores=lambda: 8),
    )
    checks = run_checks(facts)
    assert {c.status for c in checks} <= {Status.OK, Status.UNKNOWN}
    assert by_id(facts)["engine.gpu_build"].status is Status.OK and facts.os_id is None


def test_recorded_desktop_3090_shows_the_compositor_and_a_nameless_process(tmp_path: Path) -> None:
    fake = FakeNvml.replay("nvml_3090_desktop.json")
    facts = gather_facts(
        LoadSettings(), build=CUDA_BUILD, nvml=Nvml(fake), machine=machine(tmp_path, Runner({}), helper=tmp_path / "h")
    )
    checks = by_id(facts)
    assert checks["vram.display"].status is Status.WARN and "Xorg (pid 1234) 420 MiB" in checks["vram.display"].evidence
    others = checks["vram.other_processes"]
    assert others.status is Status.WARN and "? (pid 5678) memory not reported" in others.evidence
    assert checks["engine.cuda_archs"].status is Status.FAIL  # a build for 7.0 on an 8.6 card
    assert checks["health.ecc"].status is Status.UNKNOWN  # a GeForce card has no ECC


def test_recorded_v100_session_hides_processes_and_uses_the_telemetry_history(tmp_path: Path) -> None:
    fake = FakeNvml.replay("nvml_v100_session.json")
    nvml = Nvml(fake)
    history = []
    for _ in range(5):  # into the load: 250 W, past 80 °C
        fake.step()
        history.append(nvml.sample(0))
    facts = gather_facts(
        LoadSettings(),
        build=CUDA_BUILD,
        recent={0: history},
        nvml=nvml,
        machine=machine(tmp_path, Runner({}), helper=tmp_path / "h"),
    )
    (gpu,) = facts.gpus or ()
    assert gpu.history == tuple(history) and gpu.sample is history[-1]
    checks = by_id(facts)
    assert (
        checks["vram.other_processes"].status is Status.UNKNOWN
        and "no permission" in checks["vram.other_processes"].evidence
    )
    assert "since boot 2 corrected" in checks["health.ecc"].evidence and checks["health.ecc"].status is Status.WARN
    assert checks["pcie.link"].status is Status.OK and "gen 3 x16 of gen 3 x16" in checks["pcie.link"].evidence


def test_probes_that_hang_or_fail_leave_facts_unknown(tmp_path: Path) -> None:
    runner = Runner(
        {
            "import pynvml": subprocess.TimeoutExpired(["python3"], PROBE_TIMEOUT_S),
            "--version": OSError("exec format error"),
            "-n -l": subprocess.TimeoutExpired(["sudo"], PROBE_TIMEOUT_S),
        }
    )
    facts = gather_facts(
        nvml=Nvml(FakeNvml([v100()], system=V100_SYSTEM)),
        machine=machine(tmp_path, runner, helper=tmp_path / "missing"),
    )
    assert facts.helper_installed is False and "helper" in (facts.power_readiness or "")
    assert (facts.helper_python_has_pynvml, facts.pkexec_version, facts.sudo_rule) == (None, None, None)
    assert facts.helper_python == "/usr/bin/python3"  # what the shipped helper's first line names
    checks = by_id(facts)
    assert checks["power.helper"].status is Status.WARN and checks["power.pynvml"].status is Status.UNKNOWN
    assert checks["power.privilege"].status is Status.OK  # pkexec is there; its version is not known


def test_sudo_rule_found(tmp_path: Path) -> None:
    helper = helper_at(tmp_path)
    runner = Runner(
        {
            "--version": RunOutput(0, "pkexec version 127\n", ""),
            "-n -l": RunOutput(0, f"{helper}\n", ""),
            "import pynvml": RunOutput(0, "", ""),
        }
    )
    facts = gather_facts(
        nvml=Nvml(FakeNvml([v100()], system=V100_SYSTEM)), machine=machine(tmp_path, runner, helper=helper)
    )
    assert facts.sudo_rule is True and facts.helper_python_has_pynvml is True
    assert by_id(facts)["power.privilege"].status is Status.OK


def test_engine_process_affinity_and_memory_are_read_for_its_pid(tmp_path: Path) -> None:
    asked: list[int | None] = []

    def affinity(pid: int | None) -> frozenset[int] | None:
        asked.append(pid)
        return None if pid == 777 else frozenset({0, 1})

    m = machine(tmp_path, Runner({}), helper=tmp_path / "h", affinity=affinity, rss_mib=lambda pid: 9000.0)
    facts = gather_facts(engine_pid=777, nvml=Nvml(FakeNvml([], system={})), machine=m)
    assert asked == [777, None]  # the engine had gone: this process's CPUs, which a new engine inherits
    assert facts.engine_cpus == {0, 1} and facts.engine_cpus_from.startswith("this process")
    assert facts.engine_rss_mib == 9000.0


def test_os_release_with_quotes_and_the_fallback_path(tmp_path: Path) -> None:
    write(tmp_path, "usr/lib/os-release", "NAME='Arch Linux'\nID=arch\n# a comment\nBAD LINE\n")
    facts = gather_facts(
        nvml=Nvml(FakeNvml([], system={})), machine=machine(tmp_path, Runner({}), helper=tmp_path / "h")
    )
    assert (facts.os_id, facts.os_like, facts.os_name) == ("arch", (), "Arch Linux")


# ---- simulated ------------------------------------------------------------------------------------------


def test_simulated_v100_with_the_cpu_build(tmp_path: Path) -> None:
    runner = Runner({})
    facts = gather_facts(
        LoadSettings(), build=CPU_BUILD, simulate="v100-16gb", machine=machine(tmp_path, runner, helper=tmp_path / "h")
    )
    (gpu,) = facts.gpus or ()
    assert facts.simulated and gpu.compute_capability == "7.0" and gpu.sample is not None and gpu.sample.simulated
    assert facts.driver_version is not None and facts.driver_version.startswith("570.")
    assert facts.cuda_driver_version == "12.8" and facts.nvml_version == f"12.{facts.driver_version}"
    checks = by_id(facts)
    engine = checks["engine.gpu_build"]
    assert engine.status is Status.FAIL and "simulated" in engine.evidence
    assert engine.fix is not None and 'TIGHTFIT_CUDA_ARCHS="70"' in engine.fix.command
    for check_id in ("driver.branch", "driver.nvml_mismatch", "driver.persistence", "power.helper"):
        assert checks[check_id].status is Status.OK, check_id
    assert runner.calls == []  # a simulated card is capped without the helper: nothing to probe


def test_simulated_card_under_load_from_the_windows_simulator(tmp_path: Path) -> None:
    sim = SimulatedGpu("v100-16gb")
    history = []
    for _ in range(10):  # 20 minutes at full load: it settles in thermal slowdown at the default 300 W
        sim.step(120.0, 1.0)
        history.append(sim.sample())
    facts = gather_facts(
        build=CUDA_BUILD,
        simulate="v100-16gb",
        recent={0: history},
        machine=machine(tmp_path, Runner({}), helper=tmp_path / "h"),
    )
    checks = by_id(facts)
    thermal = checks["thermal.slowdown"]
    assert thermal.status is Status.WARN and thermal.fix is not None and thermal.fix.action == "open:power"
    assert "200 W" in thermal.fix.words
    assert checks["pcie.link"].status is Status.OK  # busy, and at gen 3 x16
    assert checks["engine.cuda_archs"].status is Status.OK


# ---- the host readings ------------------------------------------------------------------------------------


def test_host_readings_on_this_machine() -> None:
    memory = host_memory()
    assert memory is not None and 0 < memory.available_mib <= memory.total_mib and memory.swap_used_mib >= 0
    assert cpu_affinity() == frozenset(os.sched_getaffinity(0))
    assert (process_rss_mib(os.getpid()) or 0) > 1
    assert process_rss_mib(2**22 + 12345) is None  # no such process


# ---- the set-up's route, as the engine check's fix ------------------------------------------------------


def test_rebuild_route_for_a_simulated_v100(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIGHTFIT_ENGINE", raising=False)
    monkeypatch.delenv("TIGHTFIT_CUDA_ARCHS", raising=False)
    command, help_text = rebuild_route(find_card("v100-16gb"))
    # A CUDA 12 toolkit here gives the exact build; without one, what to install first, for 7.0 either way.
    assert ("CMAKE_CUDA_ARCHITECTURES=70" in command) if command else ("7.0" in help_text)


def test_rebuild_route_says_why_it_cannot_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIGHTFIT_ENGINE", "vulkan")
    command, help_text = rebuild_route(find_card("v100-16gb"))
    assert command is None and "TIGHTFIT_ENGINE must be cpu or cuda" in help_text
