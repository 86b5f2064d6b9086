"""The one module that talks to NVML (nvidia-ml-py, imported as pynvml).

NVML is started lazily, on first use, and never on the UI thread. Every failure becomes "no value" with
a reason in words: no driver, no permission, a field the card does not support, a GPU that fell off the
bus. Nothing here raises into the window.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from gui.core import gpu_sample as reasons
from gui.core.gpu_sample import GpuProcess, GpuSample
from gui.core.telemetry_fields import READINGS, NvmlCall, Reading
from gui.core.words import Text, english, fixed, mark, message_of, words

__all__ = [
    "DriverInfo",
    "GpuHealth",
    "GpuInfo",
    "GpuProcess",
    "GpuQuery",
    "GpuSample",
    "Nvml",
    "PowerLimits",
    "decode_clock_event_reasons",
    "describe_nvml_error",
    "engine_memory_mib",
]

log = logging.getLogger(__name__)

_MIB = 1 << 20


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    total_mib: float
    free_mib: float
    used_mib: float
    compute_capability: str | None  # "7.0"
    uuid: str | None


@dataclass(frozen=True)
class GpuQuery:
    gpus: tuple[GpuInfo, ...]
    error: Text  # why there are none, in words; empty when NVML answered


class Nvml:
    """Lazy NVML session. `module` lets tests pass a fake built on pynvml's real function names."""

    def __init__(self, module: ModuleType | Any | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._module = module
        self._lock = threading.Lock()
        self._started = False
        self._start_error: Text = ""
        self._start_code: int | None = None  # NVML's error code for _start_error
        self._clock = clock
        self._logged: set[tuple[int, str, int | None]] = set()  # (gpu, field, NVML code) already logged
        self._lost: set[int] = set()  # GPUs whose last sample found them off the bus

    def _nvml(self) -> Any:
        if self._module is None:
            import pynvml

            self._module = pynvml
        return self._module

    def start(self) -> Text:
        """Initialise NVML once; return an error in words, or '' when it is ready."""
        with self._lock:
            if self._started or self._start_error:
                return self._start_error
            nvml = self._nvml()
            try:
                nvml.nvmlInit()
            except nvml.NVMLError as exc:
                self._start_error = describe_nvml_error(nvml, exc)
                self._start_code = getattr(exc, "value", None)
                log.info("NVML unavailable: %s", self._start_error)
                return self._start_error
            self._started = True
            return ""

    def shutdown(self) -> None:
        with self._lock:
            if self._started:
                nvml = self._nvml()
                try:
                    nvml.nvmlShutdown()
                except nvml.NVMLError as exc:
                    log.debug("nvmlShutdown: %s", exc)
                self._started = False

    def query_gpus(self) -> GpuQuery:
        error = self.start()
        if error:
            return GpuQuery((), error)
        nvml = self._nvml()
        try:
            count = nvml.nvmlDeviceGetCount()
        except nvml.NVMLError as exc:
            return GpuQuery((), describe_nvml_error(nvml, exc))
        gpus = []
        for index in range(count):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                memory = nvml.nvmlDeviceGetMemoryInfo(handle)
                name = nvml.nvmlDeviceGetName(handle)
            except nvml.NVMLError as exc:
                log.warning("GPU %d skipped: %s", index, describe_nvml_error(nvml, exc))
                continue
            gpus.append(
                GpuInfo(
                    index=index,
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    total_mib=memory.total / (1 << 20),
                    free_mib=memory.free / (1 << 20),
                    used_mib=memory.used / (1 << 20),
                    compute_capability=_compute_capability(nvml, handle),
                    uuid=_optional(nvml, nvml.nvmlDeviceGetUUID, handle),
                )
            )
        return GpuQuery(tuple(gpus), "" if gpus else "NVML found no usable GPU")

    def device_count(self) -> tuple[int, Text]:
        """How many GPUs NVML sees, and why none where it sees none ('' when it answered)."""
        error = self.start()
        if error:
            return 0, error
        nvml = self._nvml()
        try:
            return int(nvml.nvmlDeviceGetCount()), ""
        except nvml.NVMLError as exc:
            return 0, describe_nvml_error(nvml, exc)

    def sample(self, index: int) -> GpuSample:
        """Every reading of one GPU in one pass. Never raises: a field NVML will not give is None, with
        the reason in `errors`; a GPU that fell off the bus gives `lost=True` and is read afresh next time."""
        timestamp = self._clock()
        error = self.start()
        if error:
            return GpuSample(index=index, timestamp=timestamp, errors={"nvml": error})
        nvml = self._nvml()
        with self._lock:  # one GPU's fields are read together, not interleaved with another caller's
            reader = _FieldReader(nvml, index, self._log_once)
            handle = reader.read("gpu", "nvmlDeviceGetHandleByIndex", index)
            sample = _read_sample(reader, handle, index, timestamp)
        self._note_lost(index, sample.lost)
        return sample

    def power_limits(self, index: int) -> PowerLimits:
        """The power-limit readings alone: for reading a cap back after the helper applied it."""
        sample = self.sample(index)
        return PowerLimits(
            enforced_w=sample.power_limit_w,
            min_w=sample.power_min_w,
            max_w=sample.power_max_w,
            default_w=sample.power_default_w,
            error="; ".join(
                f"{k}: {english(v)}" for k, v in sample.errors.items() if k.startswith(("power", "gpu", "nvml"))
            ),
        )

    def driver_info(self) -> DriverInfo:
        """The driver's version, the NVML library's, and the newest CUDA runtime the driver supports."""
        error = self.start()
        nvml = self._nvml()
        if error:
            mismatch = self._start_code == getattr(nvml, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", 18)
            return DriverInfo(None, None, None, error=error, mismatch=mismatch)
        with self._lock:
            reader = _FieldReader(nvml, -1, self._log_once)
            driver = reader.read("driver_version", "nvmlSystemGetDriverVersion")
            library = reader.read("nvml_version", "nvmlSystemGetNVMLVersion")
            cuda = reader.read_first(
                "cuda_version",
                [("nvmlSystemGetCudaDriverVersion", ()), ("nvmlSystemGetCudaDriverVersion_v2", ())],
            )
        return DriverInfo(
            driver_version=str(driver) if driver is not None else None,
            nvml_version=str(library) if library is not None else None,
            cuda_version=f"{int(cuda) // 1000}.{int(cuda) % 1000 // 10}" if cuda else None,
            error="",
            mismatch=False,
            errors=reader.errors,
        )

    def gpu_health(self, index: int) -> GpuHealth:
        """What the Doctor reads beyond a telemetry sample: persistence, display, PCI address, the ECC
        counters since manufacture, and memory the card has set aside or still has to."""
        error = self.start()
        if error:
            return GpuHealth(index=index, errors={"nvml": error})
        nvml = self._nvml()
        with self._lock:
            reader = _FieldReader(nvml, index, self._log_once)
            handle = reader.read("gpu", "nvmlDeviceGetHandleByIndex", index)
            if handle is None:
                return GpuHealth(index=index, errors=reader.errors)
            enabled = getattr(nvml, "NVML_FEATURE_ENABLED", 1)
            persistence = reader.read("persistence_mode", "nvmlDeviceGetPersistenceMode", handle)
            display = reader.read("display_active", "nvmlDeviceGetDisplayActive", handle)
            pci = reader.read("pci_bus_id", "nvmlDeviceGetPciInfo", handle)
            corrected, uncorrected = nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
            aggregate = nvml.NVML_AGGREGATE_ECC
            ecc_corrected = reader.read(
                "ecc_corrected_aggregate", "nvmlDeviceGetTotalEccErrors", handle, corrected, aggregate
            )
            ecc_uncorrected = reader.read(
                "ecc_uncorrected_aggregate", "nvmlDeviceGetTotalEccErrors", handle, uncorrected, aggregate
            )
            pending = reader.read("retired_pages_pending", "nvmlDeviceGetRetiredPagesPendingStatus", handle)
            rows = reader.read("remapped_rows", "nvmlDeviceGetRemappedRows", handle)
        if reader.lost:
            return GpuHealth(index=index, lost=True, errors=reader.errors)
        return GpuHealth(
            index=index,
            persistence_mode=None if persistence is None else int(persistence) == enabled,
            display_active=None if display is None else int(display) == enabled,
            pci_bus_id=_sysfs_bus_id(pci),
            ecc_corrected_aggregate=_count(ecc_corrected),
            ecc_uncorrected_aggregate=_count(ecc_uncorrected),
            retired_pages_pending=None if pending is None else int(pending) == enabled,
            remapped_rows_pending=None if rows is None else bool(rows[2]),
            remapped_rows_failure=None if rows is None else bool(rows[3]),
            errors=reader.errors,
        )

    def _log_once(self, index: int, field: str, code: int | None, words: str) -> None:
        key = (index, field, code)
        if key in self._logged:
            return
        self._logged.add(key)
        log.info("GPU %d: %s has no value: %s", index, field, words)

    def _note_lost(self, index: int, lost: bool) -> None:
        # Transitions only, so a card that stays lost for hours writes two lines, not one per tick.
        if lost and index not in self._lost:
            self._lost.add(index)
            log.warning("GPU %d fell off the bus; still watching for it to come back", index)
        elif not lost and index in self._lost:
            self._lost.discard(index)
            log.warning("GPU %d answers again", index)


@dataclass(frozen=True)
class PowerLimits:
    enforced_w: float | None
    min_w: float | None
    max_w: float | None
    default_w: float | None
    error: str  # why some are missing, in words; '' when all were read


@dataclass(frozen=True)
class DriverInfo:
    driver_version: str | None  # "570.133.20"
    nvml_version: str | None  # "12.570.133.20": the NVML library's, which must match the driver's
    cuda_version: str | None  # "12.8": the newest CUDA runtime this driver can run
    error: Text  # why NVML gave nothing, in words; '' when it answered
    # NVML would not start because the library and the loaded kernel module are different versions
    # (a driver update without a reboot).
    mismatch: bool = False
    errors: dict[str, Text] = field(default_factory=dict)  # field name -> why it has no value


@dataclass(frozen=True)
class GpuHealth:
    index: int
    persistence_mode: bool | None = None
    display_active: bool | None = None  # a display is initialised on the card (a monitor, or X on it)
    pci_bus_id: str | None = None  # as sysfs names it: "0000:3b:00.0"
    ecc_corrected_aggregate: int | None = None  # over the card's life
    ecc_uncorrected_aggregate: int | None = None
    retired_pages_pending: bool | None = None  # pages waiting for a reboot to be retired
    remapped_rows_pending: bool | None = None  # rows waiting for a GPU reset to be remapped
    remapped_rows_failure: bool | None = None  # a row could not be remapped: no spare rows left
    lost: bool = False
    errors: dict[str, Text] = field(default_factory=dict)


class _FieldReader:
    """Reads fields one by one, turning each NVML failure into None plus words.

    After the GPU is found lost, the remaining reads are skipped: each would fail the same way, and on a
    card that fell off the bus every call can take a long time to fail.
    """

    def __init__(self, nvml: Any, index: int, log_once: Callable[[int, str, int | None, str], None]) -> None:
        self.nvml = nvml
        self.index = index
        self.errors: dict[str, Text] = {}
        self.lost = False
        self._log_once = log_once

    def absent(self, field: str, name: str) -> None:
        """`name`, a function or constant, is not in this pynvml: `field` has no value."""
        if not self.lost:
            words = f"{name} is missing from this pynvml"
            self.errors[field] = words
            self._log_once(self.index, field, None, words)

    def read(self, field: str, function: str, *args: Any) -> Any:
        return self.read_first(field, [(function, args)])

    def read_first(self, field: str, attempts: list[tuple[str, tuple[Any, ...]]]) -> Any:
        """Try each (function, args) in turn, moving on only where the driver or binding lacks it."""
        if self.lost:
            return None
        nvml = self.nvml
        not_found = getattr(nvml, "NVML_ERROR_FUNCTION_NOT_FOUND", 13)
        code: int | None = None
        words: Text = ""
        for function, args in attempts:
            read = getattr(nvml, function, None)
            if read is None:
                code, words = None, f"{function} is missing from this pynvml"
                continue
            try:
                value = read(*args)
            except nvml.NVMLError as exc:
                code, words = getattr(exc, "value", None), describe_nvml_error(nvml, exc)
                if code == not_found:
                    continue
                break
            return value.decode() if isinstance(value, bytes) else value
        if code == getattr(nvml, "NVML_ERROR_GPU_IS_LOST", 15):
            self.lost = True  # logged by the caller on the transition, so not here per field
            self.errors["gpu"] = words
            return None
        self.errors[field] = words
        self._log_once(self.index, field, code, english(words))
        return None


def _read_sample(reader: _FieldReader, handle: Any, index: int, timestamp: float) -> GpuSample:
    if handle is None:
        return GpuSample(index=index, timestamp=timestamp, lost=reader.lost, errors=reader.errors)
    nvml = reader.nvml
    name = reader.read("name", "nvmlDeviceGetName", handle)
    values = _read_declared(reader, handle)
    reasons_mask = reader.read_first(
        "throttle_reasons",
        [  # "clock event" is the current name; the "throttle" call is what older drivers have
            ("nvmlDeviceGetCurrentClocksEventReasons", (handle,)),
            ("nvmlDeviceGetCurrentClocksThrottleReasons", (handle,)),
        ],
    )
    processes = _read_processes(reader, handle)
    if reader.lost:  # readings taken before the loss are from a card we can no longer trust
        return GpuSample(index=index, timestamp=timestamp, name=name, lost=True, errors=reader.errors)
    return GpuSample.of(
        values,
        index=index,
        timestamp=timestamp,
        name=name,
        throttle_reasons=decode_clock_event_reasons(nvml, reasons_mask) if reasons_mask is not None else None,
        processes=processes,
        errors=reader.errors,
    )


def _read_declared(reader: _FieldReader, handle: Any) -> dict[str, float | int | None]:
    """Every declared reading (gui/core/telemetry_fields.py), each call made once: readings that are parts of one
    answer (the memory's used, free and total) share it, and its failure's words."""
    nvml = reader.nvml
    answers: dict[tuple[str, tuple[str, ...]], tuple[Any, str]] = {}  # call -> (answer, the reading that asked)
    values: dict[str, float | int | None] = {}
    for declared in READINGS:
        call = declared.nvml
        key = (call.function, call.args)
        if key in answers:
            answer, asked = answers[key]
            if answer is None and asked in reader.errors:
                reader.errors[declared.name] = reader.errors[asked]
        else:
            answer = _call(reader, declared.name, call, handle)
            answers[key] = (answer, declared.name)
        values[declared.name] = _declared_value(nvml, declared, answer)
    return values


def _call(reader: _FieldReader, field: str, call: NvmlCall, handle: Any) -> Any:
    constants = [getattr(reader.nvml, name, None) for name in call.args]
    missing = [name for name, value in zip(call.args, constants, strict=True) if value is None]
    if missing:  # a binding older than the constant
        reader.absent(field, missing[0])
        return None
    return reader.read_first(field, [(function, (handle, *constants)) for function in call.functions])


def _declared_value(nvml: Any, declared: Reading, answer: Any) -> float | int | None:
    if answer is None:
        return None
    call = declared.nvml
    if isinstance(call.part, int):
        answer = answer[call.part]
    elif isinstance(call.part, str):
        answer = getattr(answer, call.part)
    if call.unknown is not None and answer == getattr(nvml, call.unknown, None):
        return None
    return int(answer) if declared.integer else float(answer) / call.per


def _read_processes(reader: _FieldReader, handle: Any) -> tuple[GpuProcess, ...] | None:
    compute = reader.read("processes", "nvmlDeviceGetComputeRunningProcesses", handle)
    if compute is None:
        return None
    graphics = reader.read("graphics_processes", "nvmlDeviceGetGraphicsRunningProcesses", handle) or []
    reader.errors.pop("graphics_processes", None)  # compute processes are what matter here; graphics are extra
    used: dict[int, int | None] = {}
    for info in [*compute, *graphics]:  # a process can be in both lists with the same memory
        pid = int(info.pid)
        memory = getattr(info, "usedGpuMemory", None)
        if pid not in used or (memory is not None and (used[pid] or 0) < memory):
            used[pid] = memory
    processes = []
    for pid, memory in sorted(used.items()):
        name = reader.read("process_name", "nvmlSystemGetProcessName", pid)
        reader.errors.pop("process_name", None)  # a nameless process is normal, not a missing field
        processes.append(GpuProcess(pid=pid, name=name or None, used_mib=memory / _MIB if memory is not None else None))
    return tuple(processes)


def engine_memory_mib(sample: GpuSample, pid: int) -> float | None:
    """What one process holds on a card by the driver's per-process accounting; None where the driver
    does not list it (not accounted, or no such process on that card)."""
    for process in sample.processes or ():
        if process.pid == pid:
            return process.used_mib
    return None


def _clock_event_reason_words(nvml: Any) -> list[tuple[int, str]]:
    # pynvml's names for the bits, with NVML's documented values where an old binding lacks a name.
    table = [
        ("GpuIdle", 0x1, reasons.IDLE),
        ("ApplicationsClocksSetting", 0x2, reasons.APPLICATION_CLOCKS),
        ("SwPowerCap", 0x4, reasons.POWER_CAP),
        ("HwSlowdown", 0x8, reasons.HW_SLOWDOWN),
        ("SyncBoost", 0x10, reasons.SYNC_BOOST),
        ("SwThermalSlowdown", 0x20, reasons.THERMAL_SLOWDOWN),
        ("HwThermalSlowdown", 0x40, reasons.HW_THERMAL_SLOWDOWN),
        ("HwPowerBrakeSlowdown", 0x80, reasons.HW_POWER_BRAKE),
        ("DisplayClockSetting", 0x100, reasons.DISPLAY_CLOCKS),
    ]
    return [(int(getattr(nvml, f"nvmlClocksEventReason{name}", bit)), words) for name, bit, words in table]


def decode_clock_event_reasons(nvml: Any, mask: int) -> tuple[str, ...]:
    """NVML's clock-event (throttle) bitmask in words; unknown bits are kept as hex, not dropped."""
    words = []
    known = 0
    for bit, text in _clock_event_reason_words(nvml):
        known |= bit
        if mask & bit:
            words.append(text)
    if mask & ~known:
        words.append(f"other (0x{mask & ~known:x})")
    return tuple(words)


def _count(value: Any) -> int | None:
    return None if value is None else int(value)


def _optional(nvml: Any, read: Any, handle: Any) -> Any:
    """A field some cards or drivers lack: None instead of an error."""
    try:
        value = read(handle)
    except nvml.NVMLError:
        return None
    return value.decode() if isinstance(value, bytes) else value


def _sysfs_bus_id(pci: Any) -> str | None:
    """NVML's bus id ("00000000:3B:00.0", a 32-bit domain) as sysfs spells it ("0000:3b:00.0")."""
    bus_id = getattr(pci, "busId", None)
    if isinstance(bus_id, bytes):
        bus_id = bus_id.decode(errors="replace")
    parts = str(bus_id or "").strip().lower().split(":")
    if len(parts) == 2:  # no domain: the first one
        parts.insert(0, "0")
    if len(parts) != 3:
        return None
    try:
        domain = int(parts[0], 16)
    except ValueError:
        return None
    return f"{domain:04x}:{parts[1]}:{parts[2]}"


def _compute_capability(nvml: Any, handle: Any) -> str | None:
    pair = _optional(nvml, nvml.nvmlDeviceGetCudaComputeCapability, handle)
    return f"{pair[0]}.{pair[1]}" if pair else None


def describe_nvml_error(nvml: Any, exc: Exception) -> Text:
    """NVML's error in words, translated in the window (context "nvml")."""
    code = getattr(exc, "value", None)
    said = {
        getattr(nvml, "NVML_ERROR_LIBRARY_NOT_FOUND", -1): mark(
            "no NVIDIA driver found (NVML library missing)", "nvml"
        ),
        getattr(nvml, "NVML_ERROR_DRIVER_NOT_LOADED", -2): mark("the NVIDIA driver is not loaded", "nvml"),
        getattr(nvml, "NVML_ERROR_NO_PERMISSION", -3): mark("no permission to read the GPU", "nvml"),
        getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", -4): mark("not supported by this GPU", "nvml"),
        getattr(nvml, "NVML_ERROR_GPU_IS_LOST", -5): mark("the GPU fell off the bus", "nvml"),
        getattr(nvml, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", -6): mark(
            "driver/library version mismatch (reboot?)", "nvml"
        ),
    }
    known = said.get(code)
    return fixed(known, "nvml") if known is not None else words("NVML error: {error}", error=message_of(exc))
