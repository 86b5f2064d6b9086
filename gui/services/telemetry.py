"""Periodic sampling of the selected GPUs and the host, on its own thread, delivered as one Tick per interval.

The listener is called on the telemetry thread: the UI wraps it in a small adapter that re-emits a Qt
signal. NVML starts lazily on this thread, so a slow or missing driver never stalls the window. Ticks
can also be written to a CSV file for long runs, in gui.core.telemetry_csv's layout (one header row,
flushed every tick).
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Protocol, TypeVar

import psutil

from gui.core.gpu_sample import GpuSample
from gui.core.preferences import SAMPLE_INTERVAL
from gui.core.simulated_gpu import SimulatedGpu
from gui.core.telemetry_csv import TelemetryCsvWriter, csv_header, csv_row
from gui.core.tick import HostSample, Tick
from gui.core.words import Text, mark
from gui.services.nvml import Nvml

__all__ = [
    "MAX_INTERVAL_S",
    "MIN_INTERVAL_S",
    "GpuSource",
    "HostSample",
    "SimulatedSource",
    "TelemetryService",
    "Tick",
    "csv_header",
    "csv_row",
    "sample_host",
    "validate_interval",
]

log = logging.getLogger(__name__)
# A tick's status when it has no GPU reading (the window shows them in the user's language).
STATUS_READ_FAILED = mark("reading the GPUs failed (see the log)", "nvml")
STATUS_NO_GPU = mark("no GPU found", "nvml")

MIN_INTERVAL_S = SAMPLE_INTERVAL.minimum
MAX_INTERVAL_S = SAMPLE_INTERVAL.maximum
DEFAULT_INTERVAL_S = SAMPLE_INTERVAL.default
_MIB = 1 << 20
T = TypeVar("T")


class GpuSource(Protocol):
    """Where GPU samples come from: NVML, or the simulated card."""

    def device_count(self) -> tuple[int, Text]: ...

    def sample(self, index: int) -> GpuSample: ...

    def shutdown(self) -> None: ...


class SimulatedSource:
    """The simulated card(s) as a GpuSource: between samples they advance by the real time elapsed, at the
    load the app last reported with `set_load` (e.g. 1.0 while tokens stream)."""

    def __init__(self, gpus: Sequence[SimulatedGpu], clock: Callable[[], float] = time.monotonic) -> None:
        self._gpus = list(gpus)
        self._clock = clock
        self._lock = threading.Lock()
        self._loads = [0.0] * len(self._gpus)
        self._last = [clock()] * len(self._gpus)

    @property
    def gpus(self) -> tuple[SimulatedGpu, ...]:
        return tuple(self._gpus)

    def set_load(self, load: float, index: int = 0) -> None:
        with self._lock:
            self._advance(index)  # the time so far ran at the old load
            self._loads[index] = min(max(float(load), 0.0), 1.0)

    def device_count(self) -> tuple[int, str]:
        return len(self._gpus), ""

    def sample(self, index: int) -> GpuSample:
        with self._lock:
            self._advance(index)
            return self._gpus[index].sample(self._last[index])

    def shutdown(self) -> None:
        pass

    def _advance(self, index: int) -> None:
        now = self._clock()
        self._gpus[index].step(max(now - self._last[index], 0.0), self._loads[index])
        self._last[index] = now


def validate_interval(interval_s: float) -> float:
    if isinstance(interval_s, bool) or not isinstance(interval_s, int | float) or not math.isfinite(interval_s):
        raise ValueError(f"sampling interval must be a number of seconds (got {interval_s!r})")
    if not MIN_INTERVAL_S <= interval_s <= MAX_INTERVAL_S:
        raise ValueError(
            f"sampling interval must be between {MIN_INTERVAL_S} and {MAX_INTERVAL_S} s (got {interval_s} s)"
        )
    return float(interval_s)


def sample_host(clock: Callable[[], float] = time.monotonic) -> HostSample:
    # interval=None: CPU use since the previous call, without blocking the telemetry thread.
    cpu = psutil.cpu_percent(interval=None, percpu=True)
    memory = psutil.virtual_memory()
    swap = psutil.swap_memory()
    return HostSample(
        timestamp=clock(),
        cpu_pct=tuple(float(c) for c in cpu),
        ram_used_mib=memory.used / _MIB,
        ram_total_mib=memory.total / _MIB,
        swap_used_mib=swap.used / _MIB,
        swap_total_mib=swap.total / _MIB,
    )


class TelemetryService:
    def __init__(
        self,
        listener: Callable[[Tick], None] | None = None,
        *,
        source: GpuSource | None = None,
        interval_s: float = DEFAULT_INTERVAL_S,
        host_sampler: Callable[[], HostSample] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], None] | None = None,
    ) -> None:
        """`source` defaults to NVML. `clock` and `wait` exist so tests can drive the schedule without
        real time; by default the thread waits on an Event that stop() and set_interval() set."""
        self._listener: Callable[[Tick], None] = listener or (lambda _tick: None)
        self._source: GpuSource = source if source is not None else Nvml()
        self._interval = validate_interval(interval_s)
        self._host_sampler = host_sampler or (lambda: sample_host(clock))
        self._clock = clock
        self._wake = threading.Event()
        self._wait = wait or self._wait_for_wake
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()  # guards selection, engine rate and the CSV log, set from other threads
        self._selected: tuple[int, ...] | None = None  # None: every GPU the source has
        self._engine_rate = math.nan
        self._csv: _CsvLog | None = None
        self._failed_once: set[str] = set()
        self._remote: Callable[[], Sequence[GpuSample]] = tuple

    def set_remote(self, read: Callable[[], Sequence[GpuSample]]) -> None:
        """Other machines' GPUs to add to every tick, after this machine's (gui/services/gpu_exporter.py's latest
        readings). ``read`` is called on the telemetry thread and must not wait on the network."""
        self._remote = read

    def set_listener(self, listener: Callable[[Tick], None]) -> None:
        """Where ticks go (on the telemetry thread); set before start()."""
        self._listener = listener

    @property
    def source(self) -> GpuSource:
        return self._source

    # --- control, from any thread -----------------------------------------------------------------

    @property
    def interval_s(self) -> float:
        return self._interval

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stopping.clear()
        self._wake.clear()
        self._thread = threading.Thread(target=self._run, name="telemetry", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop and join; returns within one sample's time, never sleeping out the interval."""
        self._stopping.set()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
            if thread.is_alive():  # stuck in a driver call: leave NVML up rather than pull it from under it
                log.warning("telemetry thread did not stop within %.1f s", timeout_s)
                self.stop_csv_log()
                return
        self._source.shutdown()
        self.stop_csv_log()

    def set_interval(self, interval_s: float) -> None:
        self._interval = validate_interval(interval_s)
        self._wake.set()  # a 5 s wait in progress should not delay a switch to 0.25 s

    def select(self, indices: Iterable[int] | None) -> None:
        """Sample only these GPUs (None: all of them)."""
        chosen = None if indices is None else tuple(sorted({int(i) for i in indices}))
        if chosen is not None and any(i < 0 for i in chosen):
            raise ValueError(f"GPU indices must be non-negative (got {chosen})")
        with self._lock:
            self._selected = chosen

    @property
    def engine_rate(self) -> float:
        with self._lock:
            return self._engine_rate

    def set_engine_rate(self, tok_s: float | None) -> None:
        """The engine's current generation rate (0 when idle, None when unknown), stamped on every tick
        from now on, so the charts and the CSV log have it."""
        rate = math.nan if tok_s is None else float(tok_s)
        if math.isfinite(rate) and rate < 0:
            raise ValueError(f"a token rate cannot be negative (got {rate})")
        with self._lock:
            self._engine_rate = rate

    def start_csv_log(self, path: str | Path) -> None:
        """Append every tick to a CSV file from now on (a new file replaces an open one). Opening errors
        raise here, to the caller, rather than vanishing on the telemetry thread."""
        log_file = _CsvLog(Path(path))
        with self._lock:
            old, self._csv = self._csv, log_file
        if old is not None:
            old.close()

    def stop_csv_log(self) -> None:
        with self._lock:
            old, self._csv = self._csv, None
        if old is not None:
            old.close()

    @property
    def csv_path(self) -> Path | None:
        csv_log = self._csv
        return csv_log.path if csv_log is not None else None

    # --- sampling ---------------------------------------------------------------------------------

    def sample_now(self) -> Tick:
        """One tick, synchronously, on the caller's thread (the service's thread uses this too)."""
        counted = self._guarded("GPU count", self._source.device_count)
        count, status = counted if counted is not None else (0, STATUS_READ_FAILED)
        if not count and not status:
            status = STATUS_NO_GPU
        with self._lock:
            selected, rate = self._selected, self._engine_rate
        indices = range(count) if selected is None else [i for i in selected if i < count]
        gpus = []
        for index in indices:
            sample = self._guarded(f"GPU {index}", functools.partial(self._source.sample, index))
            if sample is not None:
                gpus.append(sample)
        gpus += self._guarded("remote GPUs", self._remote) or ()
        host = self._guarded("host", self._host_sampler)
        if host is None:
            host = HostSample(self._clock(), (), math.nan, math.nan, math.nan, math.nan)
        return Tick(gpus=tuple(gpus), host=host, status=status, engine_tok_s=rate)

    def _guarded(self, what: str, read: Callable[[], T]) -> T | None:
        # The sources promise not to raise; this is the backstop that keeps the thread alive if one does.
        try:
            return read()
        except Exception:
            if what not in self._failed_once:
                self._failed_once.add(what)
                log.exception("telemetry: reading %s failed", what)
            return None

    def _run(self) -> None:
        due = self._clock()
        while not self._stopping.is_set():
            tick = self.sample_now()
            if self._stopping.is_set():
                break
            self._deliver(tick)
            # Ticks keep to a fixed schedule (t0, t0+i, t0+2i...) so sampling time does not accumulate drift.
            due += self._interval
            now = self._clock()
            if due < now:  # fell behind (slow NVML, suspended laptop): restart the schedule, no burst
                due = now
                continue
            self._wait(due - now)
            if self._wake.is_set():  # woken by set_interval (or stop): sample now, then on the new interval
                self._wake.clear()
                due = self._clock()

    def _wait_for_wake(self, timeout_s: float) -> None:
        self._wake.wait(timeout_s)

    def _deliver(self, tick: Tick) -> None:
        try:
            self._listener(tick)
        except Exception:
            if "listener" not in self._failed_once:
                self._failed_once.add("listener")
                log.exception("telemetry listener failed")
        with self._lock:
            csv_log = self._csv
        if csv_log is not None and not csv_log.write(tick):
            self.stop_csv_log()


# --- CSV log ----------------------------------------------------------------------------------------------


class _CsvLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = path.open("w", newline="", encoding="utf-8")
        self._writer: TelemetryCsvWriter | None = None
        self._lock = threading.Lock()

    def write(self, tick: Tick) -> bool:
        """Write and flush one row; False (logged) when the disk refuses, so the caller stops logging."""
        with self._lock:
            if self._file.closed:
                return False
            try:
                if self._writer is None:  # the first tick's GPUs and cores are the log's columns
                    self._writer = TelemetryCsvWriter(self._file, csv_header(tick))
                self._writer.write(csv_row(tick, time.time()))
                self._file.flush()
            except OSError as exc:
                log.error("telemetry CSV log %s stopped: %s", self.path, exc)
                return False
            return True

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()
