"""Facts about the machine the app runs on."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import psutil


def physical_cores() -> int:
    """Physical cores: llama.cpp decodes fastest with one thread per core, not per hyper-thread."""
    cores = psutil.cpu_count(logical=False)
    if cores:
        return int(cores)
    return max(1, (os.cpu_count() or 2) // 2)


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
