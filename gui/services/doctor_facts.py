"""Gathers what the Doctor checks (gui.core.doctor) from this machine: NVML, sysfs, /etc/os-release, host
memory and CPUs, and a few bounded probes of the power cap's path (`pkexec --version`, `sudo -n -l`, the
helper's Python).

Blocking: NVML can be slow and each probe may take up to PROBE_TIMEOUT_S, so call it off the UI thread.
Nothing here raises for a fact it cannot read: the fact stays None and its check says "unknown". The caller
passes what only it knows: the load settings, the selected model's facts, the engine's build and process,
and the command that would build an engine for this machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui.core.cards import Card, find_card
from gui.core.doctor import DoctorFacts, EngineFacts, GpuFacts
from gui.core.engine_route import parse_os_release, simulated_driver
from gui.core.gpu_sample import GpuSample
from gui.core.params import LoadSettings
from gui.core.protocol import EngineBuild
from gui.core.simulated_gpu import SimulatedGpu
from gui.core.words import Text, message_of, words
from gui.services.engine_facts import read_cpu_flags, shown_python
from gui.services.numa import node_cpus, parse_cpu_list
from gui.services.nvml import Nvml
from gui.services.power_limit import HELPER_PATH, PowerLimiter, Runner, run_command, system_tool
from gui.services.system import HostMemory, cpu_affinity, host_memory, physical_cores, process_rss_mib

__all__ = ["Machine", "gather_facts", "rebuild_route"]

PROBE_TIMEOUT_S = 5.0
_NVIDIA_VENDOR = "0x10de"
_MAX_ENTRIES = 4096  # sysfs folders read at most: a machine has far fewer PCI devices or NUMA nodes
_MAX_FILE = 4096  # bytes read from any one sysfs or /etc file


@dataclass(frozen=True)
class Machine:
    """Where the facts come from. Tests replace any part: a fixture tree for `root`, a fake runner."""

    root: Path = Path("/")  # sysfs and /etc are read under it
    run: Runner = run_command  # (argv, timeout) -> RunOutput; raises TimeoutExpired or OSError
    which: Callable[[str], str | None] = shutil.which
    # pkexec and sudo: only where the system keeps them (/usr/bin, /bin), never through PATH.
    system_tool: Callable[[str], str | None] = system_tool
    memory: Callable[[], HostMemory | None] = host_memory
    physical_cores: Callable[[], int | None] = physical_cores
    affinity: Callable[[int | None], frozenset[int] | None] = cpu_affinity
    rss_mib: Callable[[int], float | None] = process_rss_mib
    helper: Path = HELPER_PATH
    pid: int = field(default_factory=os.getpid)


def gather_facts(
    settings: LoadSettings | None = None,
    *,
    n_ctx_train: int | None = None,
    host_weights_mib: float | None = None,
    attn_heads: frozenset[tuple[int, int, int]] | None = None,
    build: EngineBuild | None = None,
    build_error: Text = "",
    route_command: str | None = None,
    route_help: Text = "",
    engine_pid: int | None = None,
    recent: Mapping[int, Sequence[GpuSample]] | None = None,
    simulate: str | None = None,
    nvml: Nvml | None = None,
    machine: Machine | None = None,
    known: Mapping[str, Any] | None = None,
) -> DoctorFacts:
    """Every fact the checks use. `recent`: the telemetry's latest readings per GPU index, oldest first (the
    thermal check wants a run of them; without, one reading is taken now). `simulate`: a catalog card key
    (`v100-16gb`): the GPU and driver facts are the simulated card's, the rest is this machine's. `known`: facts
    the caller already has, by DoctorFacts field (the window's load and plan: gui/services/bundle.py
    DoctorRequest.known_facts); they take the place of the ones above."""
    m = machine or Machine()
    if simulate:
        gpu_facts = _simulated(simulate, recent or {})
    else:
        session = nvml or Nvml()
        try:
            gpu_facts = _from_nvml(session, m.root, recent or {})
        finally:
            if nvml is None:  # our own session: let go of the driver; a shared one stays open
                session.shutdown()
    engine = EngineFacts.of(build) if build is not None else EngineFacts(error=build_error) if build_error else None
    facts = DoctorFacts(
        **gpu_facts,
        engine=engine,
        route_command=route_command,
        route_help=route_help,
        settings=settings,
        n_ctx_train=n_ctx_train,
        attn_heads=attn_heads,
        host_weights_mib=host_weights_mib,
        own_pids=frozenset(p for p in (engine_pid, m.pid) if p is not None),
        python=shown_python(),
        cpu_flags=read_cpu_flags(m.root / "proc/cpuinfo") or None,
        **_cpu_facts(m, engine_pid),
        **_memory_facts(m, engine_pid),
        **_os_release(m.root),
    )
    if known:
        facts = dataclasses.replace(facts, **known)
    if simulate or not facts.gpus:
        return facts  # the cap's path matters only for a real card: no probes run for nothing
    return dataclasses.replace(facts, **_power_facts(m))


def rebuild_route(card: Card | None = None) -> tuple[str | None, Text]:
    """(route_command, route_help) for gather_facts, from the set-up's own plan for this machine (or with the
    simulated card in it): the command that builds a CUDA engine here, or, where none can be built yet, what
    to install first. Runs nvcc to find toolkits: off the UI thread."""
    from gui.services.engine_facts import plan_here

    try:
        plan = plan_here(card)
    except (ValueError, LookupError, OSError) as exc:  # an override it cannot honour, no project metadata
        return None, words("(The set-up cannot plan here: {why})", why=message_of(exc))
    if plan.route == "cuda":
        return plan.command, ""
    return None, plan.install_help


# ---- GPUs and driver ---------------------------------------------------------------------------


def _from_nvml(nvml: Nvml, root: Path, recent: Mapping[int, Sequence[GpuSample]]) -> dict[str, Any]:
    info = nvml.driver_info()
    pci_gpus = _pci_nvidia_gpus(root)
    common: dict[str, Any] = {"pci_nvidia_gpus": pci_gpus, "nvml_mismatch": info.mismatch}
    if info.error:
        return {**common, "gpus": None, "nvml_error": info.error}
    query = nvml.query_gpus()
    gpus = []
    for gpu in query.gpus:
        history = tuple(recent.get(gpu.index, ()))
        sample = history[-1] if history else nvml.sample(gpu.index)
        health = nvml.gpu_health(gpu.index)
        errors = {**health.errors}
        gpus.append(
            GpuFacts(
                index=gpu.index,
                name=gpu.name,
                compute_capability=gpu.compute_capability,
                sample=sample,
                history=history,
                persistence_mode=health.persistence_mode,
                display_active=health.display_active,
                pci_bus_id=health.pci_bus_id,
                numa_node=_gpu_numa_node(root, health.pci_bus_id),
                ecc_corrected_aggregate=health.ecc_corrected_aggregate,
                ecc_uncorrected_aggregate=health.ecc_uncorrected_aggregate,
                retired_pages_pending=health.retired_pages_pending,
                remapped_rows_pending=health.remapped_rows_pending,
                remapped_rows_failure=health.remapped_rows_failure,
                errors=errors,
            )
        )
    return {
        **common,
        "gpus": tuple(gpus),
        "nvml_error": query.error if not gpus else "",
        "driver_version": info.driver_version,
        "nvml_version": info.nvml_version,
        "cuda_driver_version": info.cuda_version,
    }


def _simulated(key: str, recent: Mapping[int, Sequence[GpuSample]]) -> dict[str, Any]:
    """The simulated card as NVML would show it on a plausible R570 driver: healthy, idle unless the
    window's own simulator readings say otherwise."""
    card = find_card(key)
    history = tuple(recent.get(0, ()))
    sample = history[-1] if history else SimulatedGpu(card.key).sample()
    driver = simulated_driver(card)  # the same plausible R570 driver the set-up's plan assumes
    cuda = driver.cuda_text or ""
    gpu = GpuFacts(
        index=0,
        name=sample.name or card.name,
        compute_capability=card.compute_capability or None,
        sample=sample,
        history=history,
        persistence_mode=True,
        display_active=False,
        ecc_corrected_aggregate=0 if sample.ecc_corrected is not None else None,
        ecc_uncorrected_aggregate=0 if sample.ecc_uncorrected is not None else None,
        retired_pages_pending=False if sample.ecc_corrected is not None else None,
    )
    return {
        "simulated": sample.name or card.name,
        "gpus": (gpu,),
        "nvml_mismatch": False,
        "driver_version": driver.driver_version,
        "nvml_version": f"{cuda.partition('.')[0]}.{driver.driver_version}",  # as NVML spells its own version
        "cuda_driver_version": cuda,
    }


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            return fh.read(_MAX_FILE).decode("utf-8", "replace")
    except OSError:
        return None


def _entries(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [Path(entry.path) for _, entry in zip(range(_MAX_ENTRIES), it, strict=False)]
    except OSError:
        return []


def _pci_nvidia_gpus(root: Path) -> int | None:
    """NVIDIA display controllers (PCI class 03xx) on the bus, whatever driver has them; None without sysfs."""
    folder = root / "sys/bus/pci/devices"
    if not folder.is_dir():
        return None
    count = 0
    for device in _entries(folder):
        vendor, kind = _read(device / "vendor"), _read(device / "class")
        if vendor is not None and kind is not None and vendor.strip() == _NVIDIA_VENDOR:
            count += kind.strip().startswith("0x03")
    return count


def _gpu_numa_node(root: Path, bus_id: str | None) -> int | None:
    if not bus_id or "/" in bus_id:
        return None
    text = _read(root / "sys/bus/pci/devices" / bus_id / "numa_node")
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


# ---- processor and memory ------------------------------------------------------------------------


def _cpu_facts(m: Machine, engine_pid: int | None) -> dict[str, Any]:
    performance, efficiency = _cpu_kinds(m.root)
    affinity = m.affinity(engine_pid) if engine_pid is not None else None
    whose = words("engine")
    if affinity is None:
        affinity = m.affinity(None)
        whose = words("this process (the engine inherits its CPUs)")
    return {
        "physical_cores": m.physical_cores(),
        "performance_cpus": performance,
        "performance_cores": _physical_count(m.root, performance) if performance else None,
        "efficiency_cpus": efficiency,
        "numa_nodes": _numa_nodes(m.root),
        "engine_cpus": affinity,
        "engine_cpus_from": whose,
        "numactl": m.which("numactl") is not None,
    }


def _cpu_list(path: Path) -> frozenset[int] | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return parse_cpu_list(text)
    except ValueError:
        return None


def _cpu_kinds(root: Path) -> tuple[frozenset[int] | None, frozenset[int] | None]:
    """(performance CPUs, efficiency CPUs): the kernel lists a hybrid Intel CPU's cores as two PMUs,
    cpu_core and cpu_atom. A system without cpu_atom is not hybrid; one without CPUs in sysfs is unknown."""
    efficiency = _cpu_list(root / "sys/devices/cpu_atom/cpus")
    if efficiency:
        return _cpu_list(root / "sys/devices/cpu_core/cpus") or frozenset(), efficiency
    if (root / "sys/devices/system/cpu").is_dir():
        return None, frozenset()
    return None, None


def _physical_count(root: Path, cpus: frozenset[int]) -> int:
    """Physical cores among logical CPUs: hyper-threads of one core share a sibling list."""
    cores = set()
    for cpu in sorted(cpus)[:_MAX_ENTRIES]:
        topology = root / f"sys/devices/system/cpu/cpu{cpu}/topology"
        siblings = _read(topology / "core_cpus_list") or _read(topology / "thread_siblings_list")
        cores.add(siblings.strip() if siblings else str(cpu))
    return len(cores)


def _numa_nodes(root: Path) -> dict[int, frozenset[int]] | None:
    folder = root / "sys/devices/system/node"
    nodes = {}
    for entry in _entries(folder):
        match = re.fullmatch(r"node(\d+)", entry.name)
        if match:
            node = int(match.group(1))
            nodes[node] = node_cpus(node, root)
    return nodes or None


def _memory_facts(m: Machine, engine_pid: int | None) -> dict[str, Any]:
    memory = m.memory()
    rss = m.rss_mib(engine_pid) if engine_pid is not None else None
    if memory is None:
        return {"engine_rss_mib": rss}
    return {
        "ram_total_mib": memory.total_mib,
        "ram_available_mib": memory.available_mib,
        "swap_total_mib": memory.swap_total_mib,
        "swap_used_mib": memory.swap_used_mib,
        "engine_rss_mib": rss,
    }


def _os_release(root: Path) -> dict[str, Any]:
    text = _read(root / "etc/os-release") or _read(root / "usr/lib/os-release")
    if text is None:
        return {}
    values = parse_os_release(text)  # the set-up's own reading of it
    return {
        "os_id": values.get("ID") or None,
        "os_like": tuple(values.get("ID_LIKE", "").split()),
        "os_name": values.get("PRETTY_NAME") or values.get("NAME") or None,
    }


# ---- the power cap's path ------------------------------------------------------------------------


def _probe(m: Machine, argv: list[str]) -> tuple[int, str] | None:
    """(exit status, output) of a short command, or None where it could not run or took too long."""
    try:
        done = m.run(argv, PROBE_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, (done.stdout + done.stderr)[:_MAX_FILE]


def _helper_python(helper: Path) -> str:
    """The interpreter the helper's first line names (packaging/README.md may point it at a venv)."""
    with contextlib.suppress(OSError), helper.open("rb") as fh:
        first = fh.readline(512).decode("utf-8", "replace")
        if first.startswith("#!"):
            words = first[2:].split()
            if words and words[0] != "/usr/bin/env":
                return words[0]
    return "/usr/bin/python3"


def _power_facts(m: Machine) -> dict[str, Any]:
    helper = m.helper
    limiter = PowerLimiter(helper=helper, which=m.system_tool)
    python = _helper_python(helper)
    imported = _probe(m, [python, "-I", "-c", "import pynvml"])
    pkexec = m.system_tool("pkexec")
    version = None
    if pkexec:
        answer = _probe(m, [pkexec, "--version"])
        found = re.search(r"version\s+([0-9][0-9.]*)", answer[1]) if answer else None
        version = found.group(1).rstrip(".") if found else None
    sudo = m.system_tool("sudo")
    rule = None
    if sudo:
        answer = _probe(m, [sudo, "-n", "-l", str(helper)])  # lists the rule that allows it; never asks
        rule = None if answer is None else answer[0] == 0
    return {
        "power_readiness": limiter.readiness(),
        "helper_path": str(helper),
        "helper_installed": os.access(helper, os.X_OK),
        "helper_python": python,
        "helper_python_has_pynvml": None if imported is None else imported[0] == 0,
        "pkexec": pkexec is not None,
        "pkexec_version": version,
        "sudo": sudo is not None,
        "sudo_rule": rule,
    }
