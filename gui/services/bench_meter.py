"""The peak memory of the engine process while it runs a benchmark test: host RSS and, on a GPU, its memory by
NVML's per-process accounting. Sampled on a thread of this process (reads of /proc and NVML; the engine itself
is not asked), once when it starts, every ``interval_s`` and once when it stops, keeping the highest."""

from __future__ import annotations

import threading
from types import TracebackType

from gui.services.nvml import Nvml, engine_memory_mib
from gui.services.system import process_rss_mib


class PeakMeter:
    """``with PeakMeter(pid, nvml) as meter: …`` then ``meter.peak_rss_mib`` and ``meter.peak_gpu_mib`` (None
    where never read: a process gone, no GPU, or a driver that does not account per process)."""

    def __init__(self, pid: int | None, nvml: Nvml | None = None, gpu_count: int = 0, interval_s: float = 0.1) -> None:
        self.pid = pid
        self.nvml = nvml if gpu_count else None
        self.gpu_count = gpu_count
        self.interval_s = interval_s
        self.peak_rss_mib: float | None = None
        self.peak_gpu_mib: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-meter", daemon=True)

    def __enter__(self) -> PeakMeter:
        if self.pid is not None:
            self.read()
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        if self.pid is not None:
            self.read()

    def _run(self) -> None:
        while not self._done.wait(self.interval_s):
            self.read()

    def read(self) -> None:
        if self.pid is None:
            return
        rss = process_rss_mib(self.pid)
        if rss is not None:
            self.peak_rss_mib = max(rss, self.peak_rss_mib or 0.0)
        if self.nvml is None:
            return
        held = [engine_memory_mib(self.nvml.sample(index), self.pid) for index in range(self.gpu_count)]
        figures = [mib for mib in held if mib is not None]
        if figures:
            self.peak_gpu_mib = max(sum(figures), self.peak_gpu_mib or 0.0)
