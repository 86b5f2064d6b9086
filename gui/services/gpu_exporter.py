"""Other machines' GPUs in the monitor, read from the Prometheus exporter each one runs.

Two exporters are read, by their own metric names and labels:

- NVIDIA's dcgm-exporter (``etc/default-counters.csv``): ``DCGM_FI_DEV_GPU_TEMP`` (°C), ``DCGM_FI_DEV_POWER_USAGE``
  (W), ``DCGM_FI_DEV_FB_USED`` / ``_FB_FREE`` (MiB), ``DCGM_FI_DEV_GPU_UTIL`` and ``_MEM_COPY_UTIL`` (%),
  ``DCGM_FI_DEV_SM_CLOCK`` / ``_MEM_CLOCK`` (MHz), with the labels ``gpu``, ``UUID``, ``modelName`` and
  ``Hostname`` (``hostname`` in newer releases); a MIG slice also has ``GPU_I_ID``. DCGM's "blank" values (no
  reading: 2^47 and up) are no value.
- nvitop-exporter (``nvitop_exporter/exporter.py``: prometheus_client gauges, whose names end in their unit):
  ``gpu_temperature_C``, ``gpu_power_usage_W``, ``gpu_power_limit_W``, ``gpu_memory_used_MiB`` / ``_free_MiB`` /
  ``_total_MiB``, ``gpu_utilization_Percentage``, ``gpu_memory_utilization_Percentage``, ``gpu_clock_sm_MHz``,
  ``gpu_clock_memory_MHz``, ``gpu_fan_speed_Percentage``, with the labels ``hostname``, ``index``, ``devicename``
  and ``uuid``; a reading nvitop could not take is NaN.

``ExporterPoller`` asks every URL on its own thread (one per URL, a deadline and a size limit per answer) and
keeps each one's latest GPUs as ``GpuSample``s, marked with their machine (``host``) and their number there
(``host_gpu``), numbered from ``REMOTE_INDEX`` up so that they never meet this machine's GPUs. The telemetry
thread takes them with every tick (``samples()``, never waiting on the network); the window reads each URL's
state in words with ``statuses()``. When an exporter stops answering, its GPUs stay listed with no readings
(gaps in the charts) and the status says why.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from gui.core.gpu_sample import GpuSample
from gui.core.prometheus_text import MAX_BODY_BYTES, Exposition, ExpositionError, parse, scrape_url
from gui.core.telemetry_history import GPU_FORGET_S
from gui.core.words import Text, Words, joined, message_of, words
from gui.services.bounded_http import Cutoff, HttpStatus, TransferError, get, read_up_to

__all__ = [
    "DCGM_METRICS",
    "MAX_GPUS_PER_EXPORTER",
    "MAX_REMOTE_GPUS",
    "NVITOP_METRICS",
    "REMOTE_GPU_FORGET_S",
    "REMOTE_INDEX",
    "ExporterPoller",
    "ExporterStatus",
    "RemoteGpu",
    "fetch_exposition",
    "read_gpus",
]

log = logging.getLogger(__name__)

REMOTE_INDEX = 1000  # the first index a remote GPU gets (this machine's GPUs count from 0)
# Each remote GPU the window watches costs it a day of history (about 18 MiB) and a row of work every tick: the
# GPUs watched at once are bounded per exporter and in all. A GPU an exporter stops naming (it went away, or
# the exporter renames its GPUs) is forgotten after REMOTE_GPU_FORGET_S, which frees its place for another.
MAX_GPUS_PER_EXPORTER = 64
MAX_REMOTE_GPUS = 128  # watched at once, all exporters together
REMOTE_GPU_FORGET_S = GPU_FORGET_S  # as the history frees it
DEFAULT_POLL_S = 2.0
DEFAULT_TIMEOUT_S = 3.0
DCGM_BLANK = float(1 << 47)  # DCGM_FP64_BLANK; its int64 blanks (about 9.2e18) are above it too
_HOST_CHARS = 64
_NAME_CHARS = 80

DCGM_METRICS: Mapping[str, str] = {
    "DCGM_FI_DEV_GPU_TEMP": "temperature_c",
    "DCGM_FI_DEV_POWER_USAGE": "power_w",
    "DCGM_FI_DEV_POWER_MGMT_LIMIT": "power_limit_w",
    "DCGM_FI_DEV_FB_USED": "memory_used_mib",
    "DCGM_FI_DEV_FB_FREE": "memory_free_mib",
    "DCGM_FI_DEV_FB_TOTAL": "memory_total_mib",
    "DCGM_FI_DEV_GPU_UTIL": "gpu_util_pct",
    "DCGM_FI_DEV_MEM_COPY_UTIL": "mem_util_pct",
    "DCGM_FI_DEV_SM_CLOCK": "sm_clock_mhz",
    "DCGM_FI_DEV_MEM_CLOCK": "mem_clock_mhz",
    "DCGM_FI_DEV_FAN_SPEED": "fan_pct",
}
NVITOP_METRICS: Mapping[str, str] = {
    "gpu_temperature_C": "temperature_c",
    "gpu_power_usage_W": "power_w",
    "gpu_power_limit_W": "power_limit_w",
    "gpu_memory_used_MiB": "memory_used_mib",
    "gpu_memory_free_MiB": "memory_free_mib",
    "gpu_memory_total_MiB": "memory_total_mib",
    "gpu_utilization_Percentage": "gpu_util_pct",
    "gpu_memory_utilization_Percentage": "mem_util_pct",
    "gpu_clock_sm_MHz": "sm_clock_mhz",
    "gpu_clock_memory_MHz": "mem_clock_mhz",
    "gpu_fan_speed_Percentage": "fan_pct",
}
_METRICS: Mapping[str, str] = {**DCGM_METRICS, **NVITOP_METRICS}
# The exporter's labels, DCGM's first: which GPU (a number there, a UUID), its name, its machine.
_NUMBER_LABELS = ("gpu", "index")
_UUID_LABELS = ("UUID", "uuid")
_NAME_LABELS = ("modelName", "devicename")
_HOST_LABELS = ("Hostname", "hostname")
_MIG_LABEL = "GPU_I_ID"
_PERCENT = {"gpu_util_pct", "mem_util_pct", "fan_pct"}


@dataclass(frozen=True)
class RemoteGpu:
    """One GPU as an exporter describes it."""

    key: str  # what tells it apart on its machine: its UUID (and MIG slice), else its number
    number: str  # its number on that machine, as the exporter says it
    name: str | None
    host: str | None  # the machine's name as the exporter says it
    readings: Mapping[str, float | None]  # GpuSample field -> value; None: the exporter has no value


@dataclass(frozen=True)
class ExporterStatus:
    """What one URL gave at its last try, for the window."""

    url: str
    host: str = ""  # the machine, once an answer named it (else the URL's host)
    gpus: int = 0
    problem: Text = ""  # why it gave no GPU, in words; '' when it did
    warnings: tuple[Text, ...] = ()  # lines of the answer that did not read, and the like
    answered: bool = False  # False until the first try ended
    when: float = math.nan  # the clock when the last try ended


def fetch_exposition(url: str, timeout_s: float = DEFAULT_TIMEOUT_S, stop: threading.Event | None = None) -> bytes:
    """The body ``url`` answers, read under a deadline and up to MAX_BODY_BYTES (one byte more says "too
    large"). Raises TransferError (and subclasses) in one line of words."""
    cut = Cutoff(timeout_s, what=_host_of(url))
    with cut:
        if stop is not None and stop.is_set():
            cut.trip("stopped")
        response = get(
            url,
            cut,
            headers={"Accept": "text/plain;version=0.0.4;q=1,*/*;q=0.1"},
            socket_timeout=timeout_s,
        )
        with response:
            kind = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if kind in ("text/html", "application/json", "application/vnd.google.protobuf"):
                raise TransferError(
                    words("it answers {kind}, not Prometheus text: is the path /metrics?", kind=kind[:60])
                )
            return read_up_to(response, MAX_BODY_BYTES + 1, cut)


def read_gpus(exposition: Exposition) -> tuple[tuple[RemoteGpu, ...], tuple[Words, ...]]:
    """The GPUs an exposition describes (at most MAX_GPUS_PER_EXPORTER), and what was odd about it in words."""
    found: dict[str, dict[str, object]] = {}
    readings: dict[str, dict[str, float | None]] = {}
    odd: list[Words] = []
    for series in exposition.series:
        target = _METRICS.get(series.name)
        if target is None:
            continue
        key, number = _identity(series.labels)
        if key is None:
            continue
        if key not in found:
            if len(found) >= MAX_GPUS_PER_EXPORTER:
                continue
            found[key] = {
                "number": number,
                "name": _label(series.labels, _NAME_LABELS, _NAME_CHARS),
                "host": _label(series.labels, _HOST_LABELS, _HOST_CHARS),
            }
            readings[key] = {}
        value = _reading(target, series.value, series.name in DCGM_METRICS)
        # A reading given twice for one GPU (a pod's and the device's line): the first that has a value.
        if readings[key].get(target) is None:
            readings[key][target] = value
    if not found:
        odd.append(
            words(
                "the answer has no GPU metric this monitor reads (dcgm-exporter's DCGM_FI_DEV_GPU_TEMP …, "
                "nvitop-exporter's gpu_temperature_C …): is it a GPU exporter?"
            )
        )
    gpus = []
    for key, facts in found.items():
        values = readings[key]
        used, free = values.get("memory_used_mib"), values.get("memory_free_mib")
        if values.get("memory_total_mib") is None and used is not None and free is not None:
            values["memory_total_mib"] = used + free
        gpus.append(
            RemoteGpu(key, str(facts["number"]), _text_or_none(facts["name"]), _text_or_none(facts["host"]), values)
        )
    gpus.sort(key=lambda gpu: _number_order(gpu.number))
    return tuple(gpus), tuple(odd)


def _identity(labels: Mapping[str, str]) -> tuple[str | None, str]:
    number = next((labels[n] for n in _NUMBER_LABELS if n in labels), "")[:16]
    uuid = next((labels[n] for n in _UUID_LABELS if n in labels), "")[:80]
    mig = labels.get(_MIG_LABEL, "")[:8]
    if mig:
        number = f"{number}:{mig}"
    base = uuid or number
    if not base:
        return None, ""
    return (f"{base}/{mig}" if mig else base), _clean(number) or "?"


def _label(labels: Mapping[str, str], names: Iterable[str], limit: int) -> str | None:
    for name in names:
        text = _clean(labels.get(name, ""))[:limit]
        if text:
            return text
    return None


def _clean(text: str) -> str:
    """Server text for a label in the window: printable, one line."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _reading(target: str, value: float, dcgm: bool) -> float | None:
    if not math.isfinite(value) or value < 0 or (dcgm and value >= DCGM_BLANK):
        return None
    if target in _PERCENT and value > 100:
        return None
    return value


def _number_order(number: str) -> tuple[int, str]:
    head = number.split(":")[0]
    return (int(head) if head.isdigit() and len(head) < 6 else 1 << 20, number)


def _host_of(url: str) -> str:
    try:
        return urlsplit(url).hostname or url
    except ValueError:
        return url


class ExporterPoller:
    """Asks each exporter URL for its GPUs, each on its own thread, and keeps the latest answer of each.

    ``fetch(url, timeout_s, stop)`` returns the body (default: over HTTP with ``fetch_exposition``); ``clock``
    stamps the samples (the telemetry clock, so remote readings line up with local ones)."""

    def __init__(
        self,
        *,
        fetch: Callable[[str, float, threading.Event], bytes] = fetch_exposition,
        clock: Callable[[], float] = time.monotonic,
        interval_s: float = DEFAULT_POLL_S,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._urls: list[str] = []
        self._status: dict[str, ExporterStatus] = {}
        self._samples: dict[str, tuple[GpuSample, ...]] = {}
        self._indices: dict[tuple[str, str], int] = {}  # (url, GPU key) -> its index, while watched
        self._seen: dict[tuple[str, str], float] = {}  # (url, GPU key) -> when its exporter last named it
        self._next_index = REMOTE_INDEX  # never handed out twice: a forgotten GPU's history is not another's
        self._workers: dict[str, threading.Event] = {}  # url -> its thread's stop flag
        self._running = False

    # --- the list, from any thread ----------------------------------------------------------------

    @property
    def urls(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._urls)

    def set_urls(self, urls: Sequence[str]) -> None:
        """Watch these exporters (each checked with ``scrape_url``; a bad one raises ValueError, nothing changed)."""
        checked = list(dict.fromkeys(scrape_url(url) for url in urls))
        with self._lock:
            self._urls = checked
            for gone in set(self._status) - set(checked):
                del self._status[gone]
                self._samples.pop(gone, None)
            for key in [key for key in self._indices if key[0] not in checked]:  # their places are free again
                del self._indices[key]
                self._seen.pop(key, None)
            for url in checked:
                self._status.setdefault(url, ExporterStatus(url, host=_host_of(url)))
            running = self._running
        if running:
            self._sync_workers()

    # --- what the telemetry thread and the window read --------------------------------------------

    def samples(self) -> tuple[GpuSample, ...]:
        """Every watched exporter's GPUs as last read (no waiting: the network is asked on other threads)."""
        with self._lock:
            return tuple(sample for url in self._urls for sample in self._samples.get(url, ()))

    def statuses(self) -> tuple[ExporterStatus, ...]:
        with self._lock:
            return tuple(self._status[url] for url in self._urls if url in self._status)

    # --- asking ------------------------------------------------------------------------------------

    def poll(self, url: str, stop: threading.Event | None = None) -> ExporterStatus:
        """Ask ``url`` once, now, on this thread, and keep what it said (a worker thread's step; tests call it)."""
        stop = stop or threading.Event()
        host = _host_of(url)
        gpus: tuple[RemoteGpu, ...] = ()
        warnings: tuple[Text, ...] = ()
        problem: Text = ""
        try:
            body = self._fetch(url, self.timeout_s, stop)
            exposition = parse(body, _METRICS)
        except HttpStatus as exc:
            problem = words("{url} answered HTTP {code}", url=url, code=exc.code)
        except (TransferError, ExpositionError) as exc:
            why = message_of(exc)
            problem = words("{host} cannot be read: {why}", host=host, why=why)
        except Exception as exc:  # a fetch that broke its promise: said, and the thread lives on
            log.exception("reading the exporter %s failed", url)
            problem = words("{host} cannot be read: {why}", host=host, why=type(exc).__name__)
        else:
            gpus, odd = read_gpus(exposition)
            warnings = (*exposition.problems, *odd)
            if not gpus:
                problem = joined("; ", odd) if odd else words("the answer names no GPU")
        now = self._clock()
        with self._lock:
            if url not in self._urls or stop.is_set():
                return ExporterStatus(url)
            shown_host = next((g.host for g in gpus if g.host), None) or self._status.get(url, ExporterStatus(url)).host
            if gpus:
                self._forget_gone(url, now)
                self._samples[url] = tuple(
                    s for gpu in gpus if (s := self._sample(url, gpu, now, shown_host or host)) is not None
                )
            else:  # the GPUs it had stay listed, with no readings and the reason
                self._samples[url] = tuple(
                    GpuSample(s.index, now, name=s.name, host=s.host, host_gpu=s.host_gpu, errors={"exporter": problem})
                    for s in self._samples.get(url, ())
                )
            status = ExporterStatus(url, shown_host or host, len(gpus), problem, warnings, True, now)
            self._status[url] = status
        return status

    def _forget_gone(self, url: str, now: float) -> None:
        """Forget this exporter's GPUs it has not named for REMOTE_GPU_FORGET_S (under the lock)."""
        for key in [k for k in self._indices if k[0] == url and now - self._seen.get(k, now) > REMOTE_GPU_FORGET_S]:
            del self._indices[key]
            self._seen.pop(key, None)

    def _sample(self, url: str, gpu: RemoteGpu, now: float, host: str) -> GpuSample | None:
        key = (url, gpu.key)
        index = self._indices.get(key)
        if index is None:
            if len(self._indices) >= MAX_REMOTE_GPUS:
                return None
            if sum(1 for k in self._indices if k[0] == url) >= MAX_GPUS_PER_EXPORTER:
                return None  # the GPUs it named before keep their places until they are forgotten
            index = self._indices[key] = self._next_index
            self._next_index += 1
        self._seen[key] = now
        missing = {name: "the exporter gives no value" for name, value in gpu.readings.items() if value is None}
        values: dict[str, Any] = {name: value for name, value in gpu.readings.items() if value is not None}
        return GpuSample(
            index, now, name=gpu.name, host=gpu.host or host, host_gpu=gpu.number, errors=missing, **values
        )

    # --- the threads -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        with self._lock:
            self._running = True
        self._sync_workers()

    def stop(self) -> None:
        """Every worker is told to stop; one in the middle of a request ends by its deadline, its answer dropped."""
        with self._lock:
            self._running = False
            workers, self._workers = self._workers, {}
        for flag in workers.values():
            flag.set()

    def _sync_workers(self) -> None:
        with self._lock:
            wanted = set(self._urls) if self._running else set()
            gone = [url for url in self._workers if url not in wanted]
            flags = [self._workers.pop(url) for url in gone]
            new = [url for url in self._urls if url in wanted and url not in self._workers]
            for url in new:
                self._workers[url] = threading.Event()
            started = [(url, self._workers[url]) for url in new]
        for flag in flags:
            flag.set()
        for url, flag in started:
            threading.Thread(target=self._work, args=(url, flag), name="gpu-exporter", daemon=True).start()

    def _work(self, url: str, stop: threading.Event) -> None:
        while not stop.is_set():
            self.poll(url, stop)
            stop.wait(self.interval_s)
