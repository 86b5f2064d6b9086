"""Facts about the machine the app runs on."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import psutil


def physical_cores() -> int:
    """Physical cores: llama.cpp decodes fastest with one thread per core, not per hyper-thread."""
    cores = psutil.cpu_count(logical=False)
    if cores:
        return int(cores)
    return max(1, (os.cpu_count() or 2) // 2)


@dataclass(frozen=True)
class HostMemory:
    total_mib: float
    available_mib: float  # what new allocations can get without swapping (the kernel's MemAvailable)
    swap_total_mib: float
    swap_used_mib: float


def host_memory() -> HostMemory | None:
    """RAM and swap now; None where psutil cannot read them."""
    try:
        ram, swap = psutil.virtual_memory(), psutil.swap_memory()
    except (OSError, RuntimeError):
        return None
    mib = float(1 << 20)
    return HostMemory(ram.total / mib, ram.available / mib, swap.total / mib, swap.used / mib)


def process_rss_mib(pid: int) -> float | None:
    """How much RAM a process holds (resident set); None where it is gone or not ours to read."""
    try:
        return float(psutil.Process(pid).memory_info().rss) / (1 << 20)
    except (psutil.Error, OSError):
        return None


def cpu_affinity(pid: int | None = None) -> frozenset[int] | None:
    """The CPUs a process may run on (this process by default); None where that cannot be read."""
    try:
        return frozenset(os.sched_getaffinity(pid or 0))
    except (OSError, AttributeError):  # gone, not ours, or a system without affinity calls
        return None


def measure_ram_bandwidth_gbs(size_mib: int = 256, repeats: int = 3, threads: int | None = None) -> float:
    """Read bandwidth of main memory in GB/s (10^9 bytes), as decode on the CPU sees it.

    Several threads each sum their slice of a buffer larger than any cache (numpy releases the GIL while
    it sums); the best of a few passes. Takes about a tenth of a second; call it off the UI thread.
    """
    import numpy as np

    workers = threads or physical_cores()
    data = np.ones(size_mib * (1 << 20) // 8, dtype=np.float64)
    slices = np.array_split(data, workers)
    best = float("inf")
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(np.sum, slices))  # touch every page once before timing
        for _ in range(repeats):
            start = time.perf_counter()
            list(pool.map(np.sum, slices))
            best = min(best, time.perf_counter() - start)
    return data.nbytes / best / 1e9


def oom_kill_count(proc: str = "/proc", cgroup_root: str = "/sys/fs/cgroup") -> int | None:
    """How many processes of this process's cgroup the kernel's out-of-memory killer has ended; None where
    that cannot be read. cgroup v2 counts every kind of OOM kill in ``memory.events``; the v1 memory
    controller in ``memory.oom_control`` (kernels since 4.13)."""
    try:
        with open(os.path.join(proc, "self", "cgroup"), encoding="utf-8") as fh:
            entries = [line.rstrip("\n").split(":", 2) for line in fh]
    except OSError:
        return None
    places = []
    for entry in entries:
        if len(entry) != 3:
            continue
        _, controllers, path = entry
        if controllers == "":
            places.append((os.path.join(cgroup_root, path.lstrip("/"), "memory.events"), "oom_kill"))
        elif "memory" in controllers.split(","):
            places.append((os.path.join(cgroup_root, "memory", path.lstrip("/"), "memory.oom_control"), "oom_kill"))
    for file, key in places:
        try:
            with open(file, encoding="utf-8") as fh:
                for line in fh:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return None
