"""The Doctor's checks, each through the statuses it can give, from facts built here; and `tightfit doctor`
as a user or a script calls it (the exit status, one line for a mistake, the JSON a simulated V100 gives)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gui.core import gpu_sample as reasons
from gui.core.doctor import (
    CHECKS,
    Check,
    DoctorFacts,
    EngineFacts,
    Fix,
    GpuFacts,
    Status,
    exit_code,
    rebuild_command,
    run_checks,
    suggested_cap_w,
    summary,
    worst,
)
from gui.core.gpu_sample import GpuProcess, GpuSample
from gui.core.params import LoadSettings
from gui.core.protocol import EngineBuild

ROOT = Path(__file__).resolve().parent.parent

CPU_BUILD = EngineFacts(backend="CPU", gpu_offload=False, describe="llama.cpp CPU build, no GPU offload")
CUDA_BUILD = EngineFacts(
    backend="CUDA", gpu_offload=True, cuda_archs=(70,), cuda_runtime="12.4", describe="llama.cpp CUDA build"
)
SETTINGS = LoadSettings(n_threads=8)


def sample(**readings: Any) -> GpuSample:
    return GpuSample(index=readings.pop("index", 0), timestamp=0.0, **readings)


def gpu(index: int = 0, name: str = "Tesla V100-PCIE-16GB", capability: str = "7.0", **facts: Any) -> GpuFacts:
    return GpuFacts(index=index, name=name, compute_capability=capability, **facts)


V100 = gpu()
P40 = gpu(1, "Tesla P40", "6.1")
T4 = gpu(0, "Tesla T4", "7.5")


def facts(**values: Any) -> DoctorFacts:
    return DoctorFacts(**values)


def check(check_id: str, f: DoctorFacts) -> Check:
    found = [c for c in run_checks(f) if c.id == check_id]
    assert len(found) == 1, check_id
    return found[0]


def assert_finding(result: Check, status: Status) -> None:
    """The status, and what every finding has: numbers, why in one sentence, and a fix for warnings and failures."""
    assert result.status is status, (result.status, result.evidence)
    assert result.evidence and result.why.endswith(".") and result.title
    if status in (Status.WARN, Status.FAIL):
        assert result.fix is not None and result.fix.words, result.id
    else:
        assert result.fix is None, result.id


# ---- the types -------------------------------------------------------------------------------------


def test_worst_and_exit_code_count_unknown_as_ok() -> None:
    def c(status: Status) -> Check:
        return Check("x", "x", status, "e", "w.")

    assert worst([]) is Status.OK and exit_code([]) == 0
    assert exit_code([c(Status.OK), c(Status.UNKNOWN)]) == 0
    assert exit_code([c(Status.OK), c(Status.WARN), c(Status.UNKNOWN)]) == 1
    assert exit_code([c(Status.WARN), c(Status.FAIL)]) == 2 and worst([c(Status.WARN), c(Status.FAIL)]) is Status.FAIL


def test_no_facts_at_all_is_no_finding() -> None:
    checks = run_checks(DoctorFacts())
    assert len(checks) == len(CHECKS) == len({c.id for c in checks})
    assert {c.status for c in checks} <= {Status.UNKNOWN, Status.OK}
    assert exit_code(checks) == 0
    for result in checks:
        assert_finding(result, result.status)
        assert json.loads(json.dumps(result.as_json()))["id"] == result.id


def test_engine_facts_from_the_build_the_worker_reports() -> None:
    build = EngineBuild("CUDA", True, "0.3.36", "CUDA : ARCHS = 610,700", cuda_archs=(61, 70), cuda_runtime="12.4")
    engine = EngineFacts.of(build)
    assert (engine.backend, engine.gpu_offload, engine.cuda_archs, engine.cuda_runtime) == (
        "CUDA",
        True,
        (61, 70),
        "12.4",
    )
    cpu = EngineFacts.of(EngineBuild("CPU", False, "0.3.36", ""))
    assert cpu.cuda_archs is None and cpu.cuda_runtime is None and "no GPU offload" in cpu.describe


# ---- engine ------------------------------------------------------------------------------------------


def test_cpu_build_with_an_nvidia_gpu_fails_with_the_rebuild_for_its_architecture() -> None:
    result = check("engine.gpu_build", facts(engine=CPU_BUILD, gpus=(V100,)))
    assert_finding(result, Status.FAIL)
    assert "Tesla V100-PCIE-16GB" in result.evidence and "7.0" in result.evidence
    assert result.fix is not None and 'TIGHTFIT_CUDA_ARCHS="70"' in result.fix.command
    assert "CUDA 12.x" in result.fix.words  # a V100 cannot be built for with CUDA 13
    routed = check("engine.gpu_build", facts(engine=CPU_BUILD, gpus=(V100, P40), route_command="make engine"))
    assert routed.fix is not None and routed.fix.command == "make engine" and "61, 70" in routed.fix.words


@pytest.mark.parametrize(
    ("values", "status"),
    [
        ({"engine": CUDA_BUILD, "gpus": (V100,)}, Status.OK),
        ({"engine": CPU_BUILD, "gpus": (), "pci_nvidia_gpus": 0}, Status.OK),  # no card: the CPU build is right
        ({"engine": CPU_BUILD, "gpus": None, "nvml_error": "no driver", "pci_nvidia_gpus": 0}, Status.OK),
        ({"engine": CPU_BUILD, "gpus": None, "nvml_error": "no driver", "pci_nvidia_gpus": 1}, Status.UNKNOWN),
        ({"engine": EngineFacts(error="the engine would not start: boom"), "gpus": (V100,)}, Status.UNKNOWN),
        ({"gpus": (V100,)}, Status.UNKNOWN),
    ],
)
def test_engine_gpu_build_statuses(values: dict[str, Any], status: Status) -> None:
    result = check("engine.gpu_build", facts(**values))
    assert_finding(result, status)
    if "engine" in values and values["engine"].error:
        assert "boom" in result.evidence


@pytest.mark.parametrize(
    ("archs", "gpus", "status", "words"),
    [
        ((70,), (V100,), Status.OK, "70: compiled in"),
        ((61, 70), (V100, P40), Status.OK, "61: compiled in"),
        ((61,), (V100,), Status.FAIL, "70: not compiled in"),  # Pascal code does not run on Volta
        ((75, 80), (V100,), Status.FAIL, "70: not compiled in"),  # what many prebuilt binaries target
        ((70,), (T4,), Status.WARN, "only an older 7.x"),  # Volta code runs on Turing, without its features
        (None, (V100,), Status.UNKNOWN, "does not say"),
    ],
)
def test_compiled_architectures_against_each_card(
    archs: tuple[int, ...] | None, gpus: tuple[GpuFacts, ...], status: Status, words: str
) -> None:
    engine = replace(CUDA_BUILD, cuda_archs=archs)
    result = check("engine.cuda_archs", facts(engine=engine, gpus=gpus))
    assert_finding(result, status)
    assert words in result.evidence
    if status is Status.FAIL:
        assert result.fix is not None and 'TIGHTFIT_CUDA_ARCHS="70"' in result.fix.command


def test_compiled_architectures_unknown_without_a_cuda_build() -> None:
    assert_finding(check("engine.cuda_archs", facts(engine=CPU_BUILD, gpus=(V100,))), Status.UNKNOWN)
    assert_finding(check("engine.cuda_archs", facts(engine=CUDA_BUILD, gpus=())), Status.UNKNOWN)


@pytest.mark.parametrize(
    ("runtime", "driver", "status"),
    [
        ("12.4", "12.8", Status.OK),
        ("12.8", "12.8", Status.OK),
        ("12.9", "12.8", Status.WARN),  # minor-version compatibility runs it, JIT compiling does not
        ("13.0", "12.8", Status.FAIL),
        ("12.4", None, Status.UNKNOWN),
        (None, "12.8", Status.UNKNOWN),
    ],
)
def test_cuda_runtime_against_what_the_driver_supports(runtime: str | None, driver: str | None, status: Status) -> None:
    engine = replace(CUDA_BUILD, cuda_runtime=runtime)
    result = check(
        "engine.cuda_runtime",
        facts(engine=engine, gpus=(V100,), cuda_driver_version=driver, driver_version="570.133.20"),
    )
    assert_finding(result, status)
    if status is Status.FAIL:
        assert "CUDA 13.0" in result.evidence and "12.8" in result.evidence


@pytest.mark.parametrize(
    ("settings", "heads", "status", "action"),
    [
        (LoadSettings(flash_attn="on"), {(128, 128, 4)}, Status.OK, None),
        (LoadSettings(flash_attn="off"), {(192, 128, 4)}, Status.OK, None),
        (LoadSettings(flash_attn="on"), {(192, 128, 4)}, Status.WARN, "set:flash_attn=auto"),  # runs on the CPU
        (LoadSettings(flash_attn="auto"), {(192, 128, 4)}, Status.WARN, ""),  # auto turns it off: a bigger buffer
        (  # a quantized V cache turns auto on, so attention goes to the CPU
            LoadSettings(flash_attn="auto", cache_type_v="q8_0"),
            {(192, 128, 4)},
            Status.WARN,
            "set:cache_type_v=f16",
        ),
        (LoadSettings(flash_attn="on", cache_type_k="iq4_nl"), {(128, 128, 4)}, Status.WARN, "set:flash_attn=auto"),
        (LoadSettings(flash_attn="on"), None, Status.UNKNOWN, None),
    ],
)
def test_flash_attention_kernels_for_the_model(
    settings: LoadSettings, heads: set[tuple[int, int, int]] | None, status: Status, action: str | None
) -> None:
    attn = frozenset(heads) if heads is not None else None
    result = check("engine.flash_attn", facts(engine=CUDA_BUILD, gpus=(V100,), settings=settings, attn_heads=attn))
    assert_finding(result, status)
    if action is not None and result.fix is not None:
        assert result.fix.action == action
    if status is Status.WARN and settings.cache_type_k == "f16":
        assert "head size 192/128 with 4 query heads per KV head" in result.evidence


def test_flash_attention_on_the_cpu_is_fine() -> None:
    heads = frozenset({(192, 128, 4)})
    on = LoadSettings(flash_attn="on")
    assert_finding(
        check("engine.flash_attn", facts(engine=CPU_BUILD, gpus=(V100,), settings=on, attn_heads=heads)), Status.OK
    )
    assert_finding(check("engine.flash_attn", facts(engine=CUDA_BUILD, gpus=(V100,))), Status.UNKNOWN)


# ---- driver ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "status"),
    [
        ({"driver_version": "580.95.05", "gpus": (V100, P40)}, Status.OK),  # R580 still drives them
        ({"driver_version": "590.44.01", "gpus": (T4,)}, Status.OK),  # Turing is still supported
        ({"driver_version": "590.44.01", "gpus": (V100,)}, Status.FAIL),
        ({"driver_version": "590.44.01", "gpus": (T4,), "pci_nvidia_gpus": 2}, Status.FAIL),  # a card it ignores
        ({"driver_version": "575.57.08", "gpus": (T4,), "pci_nvidia_gpus": 2}, Status.OK),  # e.g. given to a VM
        ({"gpus": None, "nvml_error": "no NVIDIA driver found", "pci_nvidia_gpus": 1}, Status.FAIL),
        ({"gpus": None, "nvml_error": "no NVIDIA driver found", "pci_nvidia_gpus": 0}, Status.OK),
        ({"gpus": None, "nvml_error": "no NVIDIA driver found"}, Status.UNKNOWN),
        ({"gpus": None, "nvml_error": "mismatch", "nvml_mismatch": True, "pci_nvidia_gpus": 1}, Status.UNKNOWN),
        ({"gpus": (V100,)}, Status.UNKNOWN),
    ],
)
def test_driver_branch(values: dict[str, Any], status: Status) -> None:
    result = check("driver.branch", facts(**values))
    assert_finding(result, status)
    if status is Status.FAIL and values.get("gpus"):
        assert result.fix is not None and "R580" in result.fix.words


def test_driver_branch_fix_names_the_ubuntu_package() -> None:
    result = check("driver.branch", facts(driver_version="590.44.01", gpus=(P40,), os_id="ubuntu", os_like=("debian",)))
    assert result.fix is not None and result.fix.command == "sudo apt install nvidia-driver-580"
    assert "compute capability 6.1" in result.evidence
    other = check("driver.branch", facts(driver_version="590.44.01", gpus=(P40,), os_id="fedora"))
    assert other.fix is not None and other.fix.command == ""


@pytest.mark.parametrize(
    ("values", "status"),
    [
        ({"nvml_version": "12.570.133.20", "driver_version": "570.133.20", "gpus": (V100,)}, Status.OK),
        ({"nvml_version": "12.575.57.08", "driver_version": "570.133.20", "gpus": (V100,)}, Status.FAIL),
        ({"gpus": None, "nvml_mismatch": True, "nvml_error": "driver/library version mismatch (reboot?)"}, Status.FAIL),
        ({"gpus": None, "nvml_error": "no NVIDIA driver found"}, Status.UNKNOWN),
    ],
)
def test_nvml_and_driver_versions(values: dict[str, Any], status: Status) -> None:
    result = check("driver.nvml_mismatch", facts(**values))
    assert_finding(result, status)
    if status is Status.FAIL:
        assert result.fix is not None and result.fix.command == "sudo reboot"


@pytest.mark.parametrize(
    ("modes", "status"), [((True, True), Status.OK), ((True, False), Status.WARN), ((None, None), Status.UNKNOWN)]
)
def test_persistence_mode(modes: tuple[bool | None, bool | None], status: Status) -> None:
    gpus = (replace(V100, persistence_mode=modes[0]), replace(P40, persistence_mode=modes[1]))
    result = check("driver.persistence", facts(gpus=gpus))
    assert_finding(result, status)
    if status is Status.WARN:
        assert "GPU 1 (Tesla P40): off" in result.evidence
        assert result.fix is not None and "nvidia-smi -pm 1" in result.fix.command
        assert "nvidia-persistenced" in result.fix.command


# ---- processor -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("threads", "cores", "status"),
    [(16, 8, Status.WARN), (8, 8, Status.OK), (4, 8, Status.OK), (8, None, Status.UNKNOWN)],
)
def test_threads_above_physical_cores(threads: int, cores: int | None, status: Status) -> None:
    result = check("cpu.threads", facts(settings=LoadSettings(n_threads=threads), physical_cores=cores))
    assert_finding(result, status)
    if status is Status.WARN:
        assert result.evidence == "16 threads on 8 physical cores"
        assert result.fix is not None and result.fix.action == "set:n_threads=8"


def test_hybrid_cpu() -> None:
    p_cpus, e_cpus = frozenset(range(16)), frozenset(range(16, 24))
    hybrid = facts(
        performance_cpus=p_cpus, performance_cores=8, efficiency_cpus=e_cpus, settings=LoadSettings(n_threads=16)
    )
    result = check("cpu.hybrid", hybrid)
    assert_finding(result, Status.WARN)
    assert "8 performance cores (CPUs 0-15)" in result.evidence and "16-23" in result.evidence
    assert result.fix is not None and result.fix.action == "set:n_threads=8"
    within = check("cpu.hybrid", replace(hybrid, settings=LoadSettings(n_threads=8)))
    assert_finding(within, Status.WARN)  # the scheduler may still put them on efficiency cores
    assert within.fix is not None and within.fix.command == "taskset -c 0-15 tightfit"
    assert_finding(check("cpu.hybrid", facts(efficiency_cpus=frozenset())), Status.OK)
    assert_finding(check("cpu.hybrid", facts()), Status.UNKNOWN)


# ---- NUMA --------------------------------------------------------------------------------------------

TWO_NODES = {0: frozenset(range(16)), 1: frozenset(range(16, 32))}


def test_gpu_on_another_node_than_the_engine_offers_the_pin() -> None:
    f = facts(gpus=(replace(V100, numa_node=1),), numa_nodes=TWO_NODES, engine_cpus=frozenset(range(32)), numactl=True)
    result = check("numa.gpu_node", f)
    assert_finding(result, Status.WARN)
    assert result.evidence == "GPU 0 on node 1 (CPUs 16-31); engine allowed on 0-31"
    assert result.fix is not None and result.fix.action == "pin_numa:1" and "memory" in result.fix.words
    without = check("numa.gpu_node", replace(f, numactl=False))
    assert without.fix is not None and "install numactl" in without.fix.words


@pytest.mark.parametrize(
    ("values", "status"),
    [
        (
            {"numa_nodes": TWO_NODES, "gpus": (replace(V100, numa_node=1),), "engine_cpus": frozenset(range(16, 32))},
            Status.OK,
        ),
        ({"numa_nodes": {0: frozenset(range(8))}, "gpus": (V100,)}, Status.OK),  # one node: nothing to pin
        (
            {"numa_nodes": TWO_NODES, "gpus": (replace(V100, numa_node=-1),), "engine_cpus": frozenset(range(32))},
            Status.UNKNOWN,
        ),
        ({"numa_nodes": TWO_NODES, "gpus": (replace(V100, numa_node=0),)}, Status.UNKNOWN),  # engine's CPUs unknown
        ({"gpus": (V100,)}, Status.UNKNOWN),
    ],
)
def test_numa_statuses(values: dict[str, Any], status: Status) -> None:
    assert_finding(check("numa.gpu_node", facts(**values)), status)


# ---- PCIe ----------------------------------------------------------------------------------------------


def link(gen: int, width: int, util: float | None, gen_max: int = 3, width_max: int = 16) -> GpuFacts:
    s = sample(pcie_gen=gen, pcie_width=width, pcie_gen_max=gen_max, pcie_width_max=width_max, gpu_util_pct=util)
    return replace(V100, sample=s, pci_bus_id="0000:3b:00.0")


@pytest.mark.parametrize(
    ("gpu_facts", "status", "words"),
    [
        (link(1, 8, 97), Status.WARN, "gen 1 x8 of gen 3 x16 at 97% busy"),  # a riser that trained down
        (link(3, 4, 97), Status.WARN, "gen 3 x4 of gen 3 x16"),
        (link(3, 16, 97), Status.OK, "gen 3 x16 of gen 3 x16"),
        (link(1, 16, 0), Status.UNKNOWN, "links slow down when idle"),
        (link(3, 16, 0), Status.OK, "at 0% busy"),
        (link(3, 16, None), Status.UNKNOWN, "link not known"),
    ],
)
def test_pcie_link_under_load(gpu_facts: GpuFacts, status: Status, words: str) -> None:
    result = check("pcie.link", facts(gpus=(gpu_facts,)))
    assert_finding(result, status)
    assert words in result.evidence
    if status is Status.WARN:
        assert result.fix is not None and "lspci -vv -s 0000:3b:00.0" in result.fix.command


# ---- memory ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("weights", "available", "rss", "status"),
    [
        (10_000.0, 8_000.0, None, Status.FAIL),
        (10_000.0, 11_000.0, None, Status.WARN),
        (10_000.0, 20_000.0, None, Status.OK),
        (10_000.0, 5_000.0, 9_000.0, Status.OK),  # the running engine's memory comes back at the next load
        (0.0, 1_000.0, None, Status.OK),  # every weight on the GPU
        (None, 1_000.0, None, Status.UNKNOWN),
        (10_000.0, None, None, Status.UNKNOWN),
    ],
)
def test_weights_in_host_memory(
    weights: float | None, available: float | None, rss: float | None, status: Status
) -> None:
    f = facts(host_weights_mib=weights, ram_available_mib=available, engine_rss_mib=rss)
    result = check("memory.host_weights", f)
    assert_finding(result, status)
    if status is Status.FAIL:
        assert "10,000 MiB of weights in host memory; 8,000 MiB of RAM available" in result.evidence


@pytest.mark.parametrize(
    ("used", "total", "status"),
    [(1024.0, 8192.0, Status.WARN), (100.0, 8192.0, Status.OK), (0.0, 0.0, Status.OK), (None, None, Status.UNKNOWN)],
)
def test_swap(used: float | None, total: float | None, status: Status) -> None:
    result = check("memory.swap", facts(swap_used_mib=used, swap_total_mib=total))
    assert_finding(result, status)
    if status is Status.WARN:
        assert result.evidence == "1,024 MiB of 8,192 MiB swap in use"


@pytest.mark.parametrize(
    ("mmap", "weights", "available", "status", "action"),
    [
        (False, 10_000.0, 10_500.0, Status.OK, None),
        (True, 10_000.0, 30_000.0, Status.OK, None),
        (True, 10_000.0, 11_000.0, Status.WARN, "set:use_mmap=false"),  # room for the weights, no margin
        (True, 10_000.0, 9_000.0, Status.WARN, ""),  # not even room: no-mmap would not help
        (True, 0.0, 1_000.0, Status.OK, None),
        (True, None, 30_000.0, Status.UNKNOWN, None),
    ],
)
def test_mmap_under_memory_pressure(
    mmap: bool, weights: float | None, available: float, status: Status, action: str | None
) -> None:
    f = facts(settings=LoadSettings(use_mmap=mmap), host_weights_mib=weights, ram_available_mib=available)
    result = check("memory.mmap", f)
    assert_finding(result, status)
    if action is not None:
        assert result.fix is not None and result.fix.action == action
    assert_finding(check("memory.mmap", facts(host_weights_mib=weights)), Status.UNKNOWN)  # no settings


# ---- VRAM ------------------------------------------------------------------------------------------------


def with_processes(*processes: GpuProcess | None, display: bool | None = None) -> GpuFacts:
    listed = None if processes == (None,) else tuple(p for p in processes if p is not None)
    errors = {"processes": "no permission to read the GPU"} if listed is None else {}
    return replace(V100, sample=sample(processes=listed, errors=errors), display_active=display)


XORG = GpuProcess(1200, "/usr/lib/xorg/Xorg", 312.0)
OTHER = GpuProcess(4242, "/usr/bin/python3", 2048.0)
ENGINE = GpuProcess(777, "python", 14_000.0)


def test_vram_held_by_other_programs() -> None:
    f = facts(gpus=(with_processes(OTHER, ENGINE, XORG, GpuProcess(9, None, None)),), own_pids=frozenset({777}))
    result = check("vram.other_processes", f)
    assert_finding(result, Status.WARN)
    assert "python3 (pid 4242) 2,048 MiB" in result.evidence and "? (pid 9) memory not reported" in result.evidence
    assert "777" not in result.evidence and "Xorg" not in result.evidence  # the engine itself; the display check
    only_ours = facts(gpus=(with_processes(ENGINE, XORG),), own_pids=frozenset({777}))
    assert_finding(check("vram.other_processes", only_ours), Status.OK)
    hidden = check("vram.other_processes", facts(gpus=(with_processes(None),)))
    assert_finding(hidden, Status.UNKNOWN)
    assert "no permission" in hidden.evidence


@pytest.mark.parametrize(
    ("gpu_facts", "status", "words"),
    [
        (with_processes(XORG, ENGINE), Status.WARN, "Xorg (pid 1200) 312 MiB"),
        (with_processes(GpuProcess(5, "gnome-shell", 120.0)), Status.WARN, "gnome-shell (pid 5) 120 MiB"),
        (with_processes(None, display=True), Status.WARN, "display active"),
        (with_processes(ENGINE, display=False), Status.OK, "no display server"),
        (with_processes(None), Status.UNKNOWN, "could be read"),
    ],
)
def test_display_server_on_the_card(gpu_facts: GpuFacts, status: Status, words: str) -> None:
    result = check("vram.display", facts(gpus=(gpu_facts,)))
    assert_finding(result, status)
    assert words in result.evidence


# ---- thermals and health ---------------------------------------------------------------------------------


def hot(limit: float, default: float = 250.0, thermal: int = 4, total: int = 5, **more: Any) -> GpuFacts:
    history = tuple(
        sample(
            throttle_reasons=(reasons.POWER_CAP, reasons.THERMAL_SLOWDOWN) if i < thermal else (reasons.POWER_CAP,),
            power_limit_w=limit,
            power_default_w=default,
            power_min_w=100.0,
            temperature_c=86.0,
            **more,
        )
        for i in range(total)
    )
    return replace(V100, sample=history[-1], history=history)


def test_sustained_thermal_slowdown_at_the_default_limit_suggests_the_cap() -> None:
    result = check("thermal.slowdown", facts(gpus=(hot(250.0),)))
    assert_finding(result, Status.WARN)
    assert "thermal slowdown in 4 of 5 readings, 86 °C at the default 250 W limit" in result.evidence
    assert result.fix is not None and result.fix.action == "open:power" and "200 W" in result.fix.words


@pytest.mark.parametrize(
    ("gpu_facts", "status", "words"),
    [
        (hot(200.0), Status.WARN, "already capped at 200 W"),  # capped and still hot: airflow
        (hot(250.0, thermal=1), Status.OK, "1 of 5 readings"),  # a passing spike
        (hot(250.0, thermal=0, total=1), Status.OK, "0 of 1 readings"),
        (replace(V100, sample=sample(throttle_reasons=None)), Status.UNKNOWN, "not known"),
    ],
)
def test_thermal_statuses(gpu_facts: GpuFacts, status: Status, words: str) -> None:
    result = check("thermal.slowdown", facts(gpus=(gpu_facts,)))
    assert_finding(result, status)
    assert words in result.evidence


def test_suggested_cap_follows_the_cards_limits() -> None:
    assert suggested_cap_w(sample(power_default_w=300.0, power_min_w=150.0)) == 200  # V100 SXM2
    assert suggested_cap_w(sample(power_default_w=70.0, power_min_w=60.0)) == 60  # T4: a fifth under, within range
    assert suggested_cap_w(sample()) is None


@pytest.mark.parametrize(
    ("readings", "status", "words"),
    [
        ({"aggregate": (3, 0)}, Status.OK, "lifetime 3 corrected, 0 uncorrected"),
        ({"volatile": (2, 0)}, Status.WARN, "since boot 2 corrected"),
        ({"aggregate": (3, 1)}, Status.WARN, "1 uncorrected"),
        ({"volatile": (0, 1)}, Status.FAIL, "since boot 0 corrected, 1 uncorrected"),
        ({"pending": True}, Status.WARN, "pages waiting to be retired"),
        ({"rows": (True, False)}, Status.WARN, "rows waiting to be remapped"),
        ({"rows": (False, True)}, Status.FAIL, "could not be remapped"),
        ({}, Status.UNKNOWN, "no ECC readings"),
    ],
)
def test_ecc_and_retired_memory(readings: dict[str, Any], status: Status, words: str) -> None:
    volatile = readings.get("volatile", (None, None) if not readings else (0, 0))
    aggregate = readings.get("aggregate", (None, None) if not readings else (0, 0))
    rows = readings.get("rows", (None, None))
    g = replace(
        V100,
        sample=sample(ecc_corrected=volatile[0], ecc_uncorrected=volatile[1]),
        ecc_corrected_aggregate=aggregate[0],
        ecc_uncorrected_aggregate=aggregate[1],
        retired_pages_pending=readings.get("pending", False if readings else None),
        remapped_rows_pending=rows[0],
        remapped_rows_failure=rows[1],
    )
    result = check("health.ecc", facts(gpus=(g,)))
    assert_finding(result, status)
    assert words in result.evidence
    if readings.get("pending"):
        assert result.fix is not None and result.fix.command == "sudo reboot"


# ---- settings ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("check_id", "settings", "extra", "status", "action", "words"),
    [
        (
            "settings.parallel",
            LoadSettings(n_parallel=4, n_ctx=8192),
            {},
            Status.WARN,
            "set:n_parallel=1",
            "each gets 2048 tokens",
        ),
        ("settings.parallel", LoadSettings(n_parallel=4, kv_unified=True), {}, Status.OK, None, "sharing one"),
        ("settings.parallel", LoadSettings(), {}, Status.OK, None, "1 slot"),
        (
            "settings.batch",
            LoadSettings(n_batch=256, n_ubatch=512),
            {},
            Status.WARN,
            "set:n_ubatch=256",
            "batch 256, micro-batch 512",
        ),
        ("settings.batch", LoadSettings(n_batch=512, n_ubatch=128), {}, Status.OK, None, "micro-batch 128"),
        (
            "settings.context",
            LoadSettings(n_ctx=65536),
            {"n_ctx_train": 32768},
            Status.WARN,
            "set:n_ctx=32768",
            "trained on 32768",
        ),
        ("settings.context", LoadSettings(n_ctx=8192), {"n_ctx_train": 32768}, Status.OK, None, "context 8192"),
        ("settings.context", LoadSettings(n_ctx=8192), {}, Status.UNKNOWN, None, "no model"),
        (
            "settings.v_cache",
            LoadSettings(cache_type_v="q8_0", flash_attn="off"),
            {},
            Status.FAIL,
            "set:flash_attn=on",
            "V cache q8_0",
        ),
        ("settings.v_cache", LoadSettings(cache_type_v="q8_0", flash_attn="auto"), {}, Status.OK, None, "auto"),
        ("settings.v_cache", LoadSettings(cache_type_v="f16", flash_attn="off"), {}, Status.OK, None, "f16"),
    ],
)
def test_settings(
    check_id: str, settings: LoadSettings, extra: dict[str, Any], status: Status, action: str | None, words: str
) -> None:
    result = check(check_id, facts(settings=settings, **extra))
    assert_finding(result, status)
    assert words in result.evidence
    if action is not None:
        assert result.fix is not None and result.fix.action == action


@pytest.mark.parametrize("check_id", ["settings.parallel", "settings.batch", "settings.context", "settings.v_cache"])
def test_settings_unknown_without_settings(check_id: str) -> None:
    assert_finding(check(check_id, facts(n_ctx_train=4096)), Status.UNKNOWN)


# ---- the power cap's path ----------------------------------------------------------------------------------

READY = {
    "gpus": (V100,),
    "helper_installed": True,
    "helper_python": "/usr/bin/python3",
    "helper_python_has_pynvml": True,
    "pkexec": True,
    "pkexec_version": "124",
    "sudo": True,
    "sudo_rule": False,
}


@pytest.mark.parametrize(
    ("changes", "check_id", "status", "words"),
    [
        ({}, "power.helper", Status.OK, "installed at"),
        (
            {"helper_installed": False, "power_readiness": "The power cap needs its small helper."},
            "power.helper",
            Status.WARN,
            "no helper at",
        ),
        ({"helper_installed": None}, "power.helper", Status.UNKNOWN, "not looked for"),
        ({}, "power.pynvml", Status.OK, "/usr/bin/python3 has pynvml"),
        ({"helper_python_has_pynvml": False}, "power.pynvml", Status.WARN, "cannot import pynvml"),
        ({"helper_python_has_pynvml": None}, "power.pynvml", Status.UNKNOWN, "could not ask"),
        ({}, "power.privilege", Status.OK, "pkexec (polkit 124)"),
        ({"pkexec": False, "pkexec_version": None}, "power.privilege", Status.WARN, "no pkexec; no sudo -n rule"),
        ({"pkexec": False, "sudo": False, "sudo_rule": None}, "power.privilege", Status.WARN, "no pkexec; no sudo"),
        ({"pkexec_version": "127"}, "power.privilege", Status.WARN, "polkit 127"),
        (
            {"pkexec_version": "127", "sudo_rule": True},
            "power.privilege",
            Status.OK,
            "a sudo -n rule",
        ),  # sudo -n takes over
        ({"pkexec": None, "sudo_rule": None}, "power.privilege", Status.UNKNOWN, "not looked for"),
        ({"gpus": ()}, "power.helper", Status.UNKNOWN, "no card to cap"),
        ({"simulated": "Tesla V100-SXM2-16GB", "helper_installed": False}, "power.helper", Status.OK, "simulated"),
    ],
)
def test_power_cap_path(changes: dict[str, Any], check_id: str, status: Status, words: str) -> None:
    result = check(check_id, facts(**{**READY, **changes}))
    assert_finding(result, status)
    assert words in result.evidence


def test_power_cap_fixes_are_the_documented_commands() -> None:
    missing = check("power.helper", facts(**{**READY, "helper_installed": False, "power_readiness": "Install it."}))
    assert missing.fix is not None and missing.fix.words == "Install it."
    assert "packaging/tightfit-power-helper /usr/libexec/tightfit-power-helper" in missing.fix.command
    readme = (ROOT / "packaging" / "README.md").read_text()
    polkit = check("power.privilege", facts(**{**READY, "pkexec_version": "127"}))
    assert polkit.fix is not None and "NOPASSWD: /usr/libexec/tightfit-power-helper" in polkit.fix.command
    assert "Without a polkit agent: sudo -n" in polkit.fix.words and "## Without a polkit agent: sudo -n" in readme
    assert "sudo visudo -cf tightfit.sudoers" in readme and "sudo visudo -cf tightfit.sudoers" in polkit.fix.command


@pytest.mark.parametrize(
    ("os_id", "like", "command"),
    [
        ("ubuntu", ("debian",), "sudo apt install python3-pynvml"),
        ("debian", (), "sudo apt install python3-pynvml"),
        ("arch", (), "sudo pacman -S python-nvidia-ml-py"),
        ("fedora", (), "helper-venv/bin/python3 -m pip install nvidia-ml-py"),
    ],
)
def test_pynvml_for_the_helper_per_distribution(os_id: str, like: tuple[str, ...], command: str) -> None:
    result = check(
        "power.pynvml", facts(**{**READY, "helper_python_has_pynvml": False, "os_id": os_id, "os_like": like})
    )
    assert result.fix is not None and command in result.fix.command


def test_rebuild_command_lists_every_architecture_once() -> None:
    assert rebuild_command([70, 61, 70], ".venv/bin/python") == (
        'TIGHTFIT_ENGINE=cuda TIGHTFIT_CUDA_ARCHS="61;70" .venv/bin/python -m gui.commands.engine_setup'
    )


# ---- `tightfit doctor` ---------------------------------------------------------------------------------------


def tightfit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui", *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.engine
def test_simulated_v100_with_the_cpu_build_fails_with_the_rebuild_for_70() -> None:
    result = tightfit("doctor", "--simulate", "v100-16gb", "--json")
    assert result.returncode == 2, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "fail" and data["simulated"] == "Tesla V100 SXM2 16GB"
    by_id = {c["id"]: c for c in data["checks"]}
    assert len(by_id) == len(CHECKS)
    for c in data["checks"]:
        assert set(c) >= {"id", "status", "evidence", "why", "fix"}
        assert c["status"] in ("ok", "unknown", "warn", "fail")
    engine = by_id["engine.gpu_build"]
    assert engine["status"] == "fail" and "simulated" in engine["evidence"] and "7.0" in engine["evidence"]
    assert "70" in engine["fix"]["command"]
    assert by_id["driver.branch"]["status"] == "ok" and "570" in by_id["driver.branch"]["evidence"]
    assert by_id["power.helper"]["status"] == "ok"  # a simulated card is capped without the helper


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["doctor", "--bogus"], "unrecognized arguments: --bogus"),
        (["doctor", "--simulate", "nosuchcard"], "unknown GPU 'nosuchcard'"),
        (["doctor", "--threads", "0"], "Threads must be between 1 and 256"),
        (["doctor", "--flash-attn", "maybe"], "invalid choice: 'maybe'"),
        (["doctor", "models/absent.gguf"], "no such model file: models/absent.gguf"),
    ],
)
def test_bad_flags_are_one_line(args: list[str], message: str) -> None:
    result = tightfit(*args)
    assert result.returncode != 0 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


@pytest.mark.parametrize(
    ("made", "code", "word"),
    [
        (DoctorFacts(settings=SETTINGS, physical_cores=8), 0, "OK"),
        (DoctorFacts(settings=SETTINGS, physical_cores=4), 1, "WARN"),
        (DoctorFacts(engine=CPU_BUILD, gpus=(V100,), settings=SETTINGS, physical_cores=8), 2, "FAIL"),
    ],
)
def test_exit_status_follows_the_worst_finding(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], made: DoctorFacts, code: int, word: str
) -> None:
    import gui.commands.doctor as command
    from gui.cli import main

    asked: list[tuple[LoadSettings, Any, Any]] = []
    monkeypatch.setattr(command, "collect", lambda s, card, model: asked.append((s, card, model)) or made)
    assert main(["doctor", "--threads", "8", "--batch", "256", "--ubatch", "512"]) == code
    out = capsys.readouterr().out
    assert f"{word}  " in out and out.strip().splitlines()[-1] == summary(run_checks(made))
    settings = asked[0][0]
    assert (settings.n_threads, settings.n_batch, settings.n_ubatch) == (8, 256, 512)  # reported, not refused
    assert main(["doctor", "--json"]) == code
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == str(worst(run_checks(made))) and data["simulated"] is None


def test_text_report_shows_the_fix_to_copy_and_the_button(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import gui.commands.doctor as command
    from gui.cli import main

    made = DoctorFacts(engine=CPU_BUILD, gpus=(V100,), settings=LoadSettings(n_threads=16), physical_cores=8)
    monkeypatch.setattr(command, "collect", lambda *_: made)
    assert main(["doctor"]) == 2
    out = capsys.readouterr().out
    assert out.index("FAIL") < out.index("WARN") < out.index("OK ")  # worst first
    assert '      $ TIGHTFIT_ENGINE=cuda TIGHTFIT_CUDA_ARCHS="70"' in out
    assert "16 threads on 8 physical cores" in out and "Doctor tab does this with one click" in out
    assert Fix("w").as_json() == {"words": "w", "command": "", "action": ""}


@pytest.mark.engine
def test_a_model_file_adds_its_trained_context_and_weights(demo_model: Path) -> None:
    result = tightfit("doctor", str(demo_model), "--simulate", "p40", "--ctx", "16384", "--parallel", "2", "--json")
    assert result.returncode == 2, result.stderr  # the CPU build on a (simulated) P40
    by_id = {c["id"]: c for c in json.loads(result.stdout)["checks"]}
    context = by_id["settings.context"]
    assert context["status"] == "warn" and "trained on 8192" in context["evidence"]
    assert context["fix"]["action"] == "set:n_ctx=8192"
    assert by_id["settings.parallel"]["status"] == "warn" and "8192 tokens" in by_id["settings.parallel"]["evidence"]
    # This engine ignores GPU layers, so every weight of the file is planned in host memory.
    assert by_id["memory.host_weights"]["status"] in ("ok", "warn", "fail")
    assert "of weights in host memory" in by_id["memory.host_weights"]["evidence"]
    assert "61" in by_id["engine.gpu_build"]["fix"]["command"]


# ---- the AMX kernels ----------------------------------------------------------------------------------------

AMX_CPU = frozenset({"avx512f", "avx512_vnni", "amx_tile", "amx_int8"})
AMX_INFO = "CPU : SSE3 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 | REPACK = 1 | "


def test_an_engine_with_amx_kernels_on_an_amx_processor_fails_with_the_set_up_to_run_again() -> None:
    built_with = EngineFacts.of(EngineBuild("CPU", False, "0.3.36", AMX_INFO))
    assert built_with.cpu_features["AMX_INT8"] == "1"
    result = check("engine.amx", facts(engine=built_with, cpu_flags=AMX_CPU, python=".venv/bin/python"))
    assert_finding(result, Status.FAIL)
    assert "#20824" in result.why
    assert result.fix is not None and result.fix.command == ".venv/bin/python -m gui.commands.engine_setup"
    without = EngineFacts.of(EngineBuild("CPU", False, "0.3.36", AMX_INFO.replace("AMX_INT8 = 1 | ", "")))
    assert check("engine.amx", facts(engine=without, cpu_flags=AMX_CPU)).status is Status.OK
    # A processor without AMX never runs those kernels, whatever the build has.
    assert check("engine.amx", facts(engine=built_with, cpu_flags=frozenset({"avx2"}))).status is Status.OK
    assert check("engine.amx", facts(engine=built_with, cpu_flags=None)).status is Status.UNKNOWN
    assert check("engine.amx", facts(engine=None, cpu_flags=AMX_CPU)).status is Status.UNKNOWN
